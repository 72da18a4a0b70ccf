import {
  ThreadBusyError,
  ThreadExistsError,
  ThreadNotFoundError,
  ThreadPausedError,
} from "../shared/errors";
import {
  isLeased,
  resumeRejection,
  type AcquireLeaseInput,
  type CreateThreadInput,
  type LockForDeleteInput,
  type ReleaseLeaseInput,
  type SearchThreadsInput,
  type ThreadRecord,
  type ThreadStore,
} from "../shared/threads";

export interface InMemoryThreadStoreOptions {
  /** Most thread records kept; the least recently updated idle thread is dropped beyond it (default 10,000). */
  maxThreads?: number;
}

/**
 * Thread records in process memory, for checkpointers without a table (the dev server's in-memory saver).
 * Keyed by tenant and thread together, so no tenant can reach another tenant's record.
 */
export class InMemoryThreadStore implements ThreadStore {
  private readonly records = new Map<string, { tenantId: string; record: ThreadRecord }>();
  private readonly maxThreads: number;

  constructor(options: InMemoryThreadStoreOptions = {}) {
    this.maxThreads = options.maxThreads ?? 10_000;
  }

  async get(tenantId: string, threadId: string): Promise<ThreadRecord | undefined> {
    const entry = this.records.get(recordKey(tenantId, threadId));
    return entry ? copy(entry.record) : undefined;
  }

  async create(input: CreateThreadInput): Promise<ThreadRecord> {
    const key = recordKey(input.tenantId, input.threadId);
    const existing = this.records.get(key);
    if (existing) {
      if (input.ifExists === "raise") throw new ThreadExistsError(input.threadId);
      return copy(existing.record);
    }
    const record: ThreadRecord = {
      threadId: input.threadId,
      nextNodes: [],
      interrupts: [],
      metadata: { ...input.metadata },
      createdAt: input.now,
      updatedAt: input.now,
    };
    this.insert(key, input.tenantId, record);
    return copy(record);
  }

  async acquireLease(input: AcquireLeaseInput): Promise<ThreadRecord | undefined> {
    const key = recordKey(input.tenantId, input.threadId);
    const existing = this.records.get(key)?.record;
    if (!existing && input.mode !== "start-or-create")
      throw new ThreadNotFoundError(input.threadId);
    if (existing && isLeased(existing, input.now)) throw new ThreadBusyError(input.threadId);
    const rejection =
      input.mode === "resume" && existing ? resumeRejection(existing, input) : undefined;
    if (rejection) throw rejection;
    if (input.mode !== "resume" && input.rejectPaused && existing?.status === "PAUSED_FOR_HUMAN") {
      throw new ThreadPausedError(input.threadId);
    }
    const previous = existing ? copy(existing) : undefined;
    const record: ThreadRecord = existing ?? {
      threadId: input.threadId,
      nextNodes: [],
      interrupts: [],
      metadata: {},
      createdAt: input.now,
      updatedAt: input.now,
    };
    record.status = "RUNNING";
    record.updatedAt = input.now;
    record.leaseOwner = input.owner;
    record.leaseExpiresAt = input.expiresAt;
    record.assistantId = input.assistantId;
    this.insert(key, input.tenantId, record);
    return previous;
  }

  async releaseLease(input: ReleaseLeaseInput): Promise<boolean> {
    const entry = this.records.get(recordKey(input.tenantId, input.threadId));
    if (!entry || entry.record.leaseOwner !== input.owner) return false;
    const record = entry.record;
    record.status = input.status;
    record.nextNodes = [...input.nextNodes];
    record.interrupts = input.interrupts.map((item) => ({ ...item }));
    record.updatedAt = input.now;
    if (input.assistantId !== undefined) record.assistantId = input.assistantId;
    if (input.keepLease) return true;
    delete record.leaseOwner;
    delete record.leaseExpiresAt;
    return true;
  }

  async search(input: SearchThreadsInput): Promise<ThreadRecord[]> {
    const matches: ThreadRecord[] = [];
    for (const entry of this.records.values()) {
      if (entry.tenantId !== input.tenantId) continue;
      if (input.status !== undefined && entry.record.status !== input.status) continue;
      matches.push(entry.record);
    }
    matches.sort((a, b) => b.updatedAt - a.updatedAt);
    return matches.slice(input.offset, input.offset + input.limit).map(copy);
  }

  async lockForDelete(input: LockForDeleteInput): Promise<ThreadRecord | undefined> {
    const entry = this.records.get(recordKey(input.tenantId, input.threadId));
    if (!entry) return undefined;
    if (isLeased(entry.record, input.now)) throw new ThreadBusyError(input.threadId);
    const previous = copy(entry.record);
    entry.record.leaseOwner = input.owner;
    entry.record.leaseExpiresAt = input.expiresAt;
    return previous;
  }

  async delete(tenantId: string, threadId: string, owner: string): Promise<void> {
    const key = recordKey(tenantId, threadId);
    if (this.records.get(key)?.record.leaseOwner === owner) this.records.delete(key);
  }

  private insert(key: string, tenantId: string, record: ThreadRecord): void {
    // Re-inserting keeps Map order = least recently written first, which is the eviction order.
    this.records.delete(key);
    this.records.set(key, { tenantId, record });
    if (this.records.size <= this.maxThreads) return;
    for (const [candidate, entry] of this.records) {
      if (candidate === key || isLeased(entry.record, record.updatedAt)) continue;
      this.records.delete(candidate);
      break;
    }
  }
}

/** Callers get copies, so nothing outside the store can change a stored record (values are JSON data). */
function copy(record: ThreadRecord): ThreadRecord {
  return {
    ...record,
    nextNodes: [...record.nextNodes],
    interrupts: record.interrupts.map((item) => ({ ...item })),
    metadata: { ...record.metadata },
  };
}

function recordKey(tenantId: string, threadId: string): string {
  return `${tenantId}\u0000${threadId}`;
}
