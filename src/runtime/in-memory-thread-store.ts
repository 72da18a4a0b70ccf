import {
  ThreadBusyError,
  ThreadExistsError,
  ThreadNotFoundError,
  ThreadPausedError,
} from "../shared/errors";
import {
  isBusy,
  isLeased,
  resumeRejection,
  type AcquireLeaseInput,
  type CancelRunInput,
  type ClaimRunInput,
  type ClaimRunOutcome,
  type CreateThreadInput,
  type EnqueueRunInput,
  type EnqueueRunResult,
  type FinishRunInput,
  type LockThreadInput,
  type ReleaseLeaseInput,
  type RenewRunLeaseInput,
  type RunLeaseState,
  type PatchThreadInput,
  type ScanThreadsInput,
  type ThreadScan,
  type ThreadRecord,
  type ThreadStore,
} from "../shared/threads";

export interface InMemoryThreadStoreOptions {
  /** Most thread records kept; the least recently updated idle thread is dropped beyond it (default 10,000). */
  maxThreads?: number;
}

/**
 * Thread records in process memory, for checkpointers without a table (the dev server's in-memory saver).
 * Keyed by tenant and thread together, so no tenant can reach another tenant's record. Every method checks and
 * changes a record in one synchronous step, so concurrent calls see each other's effects whole, as the table's
 * conditional writes do.
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
    const record = newRecord(input.threadId, input.now, input.metadata);
    this.insert(key, input.tenantId, record);
    return copy(record);
  }

  async acquireLease(input: AcquireLeaseInput): Promise<ThreadRecord | undefined> {
    const key = recordKey(input.tenantId, input.threadId);
    const existing = this.records.get(key)?.record;
    if (!existing && input.mode !== "start-or-create") {
      throw new ThreadNotFoundError(input.threadId);
    }
    // Background runs waiting for the thread go first: a direct run takes only an idle thread.
    if (existing && isBusy(existing, input.now)) throw new ThreadBusyError(input.threadId);
    const rejection =
      input.mode === "resume" && existing ? resumeRejection(existing, input) : undefined;
    if (rejection) throw rejection;
    if (input.mode !== "resume" && input.rejectPaused && existing?.status === "PAUSED_FOR_HUMAN") {
      throw new ThreadPausedError(input.threadId);
    }
    const previous = existing ? copy(existing) : undefined;
    const record = existing ?? newRecord(input.threadId, input.now, {});
    record.status = "RUNNING";
    record.updatedAt = input.now;
    record.leaseOwner = input.owner;
    record.leaseExpiresAt = input.expiresAt;
    record.graphId = input.graphId;
    this.insert(key, input.tenantId, record);
    return previous;
  }

  async releaseLease(input: ReleaseLeaseInput): Promise<boolean> {
    return this.finishRun(input);
  }

  async finishRun(input: FinishRunInput): Promise<boolean> {
    const entry = this.records.get(recordKey(input.tenantId, input.threadId));
    if (!entry || entry.record.leaseOwner !== input.owner) return false;
    const record = entry.record;
    record.status = input.status;
    record.nextNodes = [...input.nextNodes];
    record.interrupts = input.interrupts.map((item) => ({ ...item }));
    record.updatedAt = input.now;
    if (input.graphId !== undefined) record.graphId = input.graphId;
    if (input.forkFrom !== undefined) record.forkFrom = input.forkFrom;
    if (input.keepLease && input.leaseUntil !== undefined) record.leaseExpiresAt = input.leaseUntil;
    if (input.handOff) {
      record.continuing = input.owner;
      return true;
    }
    delete record.continuing;
    delete record.cancelAction;
    if (input.keepLease) return true;
    delete record.leaseOwner;
    delete record.leaseExpiresAt;
    return true;
  }

  scan(input: ScanThreadsInput): ThreadScan {
    const matches: ThreadRecord[] = [];
    if (input.ids) {
      for (const threadId of new Set(input.ids)) {
        const entry = this.records.get(recordKey(input.tenantId, threadId));
        if (entry) matches.push(entry.record);
      }
    } else {
      for (const entry of this.records.values()) {
        if (entry.tenantId === input.tenantId) matches.push(entry.record);
      }
      // As the table's index: by creation, ties by id.
      matches.sort((a, b) => a.createdAt - b.createdAt || (a.threadId < b.threadId ? -1 : 1));
      if (input.order === "desc") matches.reverse();
    }
    const selected = matches
      .filter((record) => input.status === undefined || record.status === input.status)
      .map(copy);
    return {
      orderedBy: input.ids ? undefined : "created_at",
      records: (async function* () {
        yield* selected;
      })(),
    };
  }

  async patchMetadata(input: PatchThreadInput): Promise<ThreadRecord> {
    const entry = this.records.get(recordKey(input.tenantId, input.threadId));
    if (!entry) throw new ThreadNotFoundError(input.threadId);
    entry.record.metadata = { ...entry.record.metadata, ...structuredClone(input.metadata) };
    entry.record.updatedAt = input.now;
    return copy(entry.record);
  }

  async lockThread(input: LockThreadInput): Promise<ThreadRecord | undefined> {
    const entry = this.records.get(recordKey(input.tenantId, input.threadId));
    if (!entry) return undefined;
    if (isBusy(entry.record, input.now)) throw new ThreadBusyError(input.threadId);
    const previous = copy(entry.record);
    entry.record.leaseOwner = input.owner;
    entry.record.leaseExpiresAt = input.expiresAt;
    return previous;
  }

  async delete(tenantId: string, threadId: string, owner: string): Promise<void> {
    const key = recordKey(tenantId, threadId);
    if (this.records.get(key)?.record.leaseOwner === owner) this.records.delete(key);
  }

  async enqueueRun(input: EnqueueRunInput): Promise<EnqueueRunResult> {
    const key = recordKey(input.tenantId, input.threadId);
    const existing = this.records.get(key)?.record;
    if (!existing && !input.createIfMissing) throw new ThreadNotFoundError(input.threadId);
    const record = existing ?? newRecord(input.threadId, input.now, {});
    if (input.strategy === "reject" && isBusy(record, input.now)) {
      throw new ThreadBusyError(input.threadId);
    }
    const cancelled: EnqueueRunResult["cancelled"] = [];
    const holder = isLeased(record, input.now) ? record.leaseOwner : record.continuing;
    if (input.strategy === "interrupt" || input.strategy === "rollback") {
      for (const runId of record.runQueue) cancelled.push({ runId, state: "queued" });
      record.runQueue = [];
      if (holder !== undefined) {
        cancelled.push({ runId: holder, state: "running" });
        record.cancelAction = input.strategy;
      }
    }
    const startsNow = record.runQueue.length === 0 && holder === undefined;
    record.runQueue.push(input.runId);
    record.updatedAt = input.now;
    this.insert(key, input.tenantId, record);
    return { cancelled, startsNow };
  }

  async claimRun(input: ClaimRunInput): Promise<ClaimRunOutcome> {
    const record = this.records.get(recordKey(input.tenantId, input.threadId))?.record;
    if (!record) return { kind: "none" };
    const previous = copy(record);
    let forkFrom: string | undefined;
    if (input.runId !== undefined) {
      if (record.continuing !== input.runId && record.leaseOwner !== input.runId) {
        return { kind: "none" };
      }
      if (isLeased(record, input.now)) return { kind: "wait", until: record.leaseExpiresAt! + 1 };
      delete record.continuing;
    } else {
      const head = record.runQueue[0];
      if (head === undefined || isLeased(record, input.now) || record.continuing !== undefined) {
        return { kind: "none" };
      }
      record.runQueue.shift();
      forkFrom = record.forkFrom;
      delete record.forkFrom;
      delete record.cancelAction;
    }
    record.leaseOwner = input.runId ?? previous.runQueue[0]!;
    record.leaseExpiresAt = input.expiresAt;
    record.status = "RUNNING";
    record.updatedAt = input.now;
    return {
      kind: "claimed",
      run: {
        runId: record.leaseOwner,
        previous,
        ...(forkFrom !== undefined ? { forkFrom } : {}),
      },
    };
  }

  async renewRunLease(input: RenewRunLeaseInput): Promise<RunLeaseState> {
    const record = this.records.get(recordKey(input.tenantId, input.threadId))?.record;
    if (!record || record.leaseOwner !== input.runId) return { held: false };
    record.leaseExpiresAt = input.expiresAt;
    return record.cancelAction ? { held: true, cancel: record.cancelAction } : { held: true };
  }

  async cancelRun(input: CancelRunInput): Promise<"running" | "queued" | "absent"> {
    const record = this.records.get(recordKey(input.tenantId, input.threadId))?.record;
    if (!record) return "absent";
    const position = record.runQueue.indexOf(input.runId);
    if (position >= 0) {
      record.runQueue.splice(position, 1);
      return "queued";
    }
    if (record.leaseOwner === input.runId || record.continuing === input.runId) {
      record.cancelAction = input.action;
      return "running";
    }
    return "absent";
  }

  private insert(key: string, tenantId: string, record: ThreadRecord): void {
    // Re-inserting keeps Map order = least recently written first, which is the eviction order.
    this.records.delete(key);
    this.records.set(key, { tenantId, record });
    if (this.records.size <= this.maxThreads) return;
    for (const [candidate, entry] of this.records) {
      if (candidate === key || isBusy(entry.record, record.updatedAt)) continue;
      this.records.delete(candidate);
      break;
    }
  }
}

function newRecord(threadId: string, now: number, metadata: Record<string, unknown>): ThreadRecord {
  return {
    threadId,
    nextNodes: [],
    interrupts: [],
    metadata: { ...metadata },
    createdAt: now,
    updatedAt: now,
    runQueue: [],
  };
}

/** Callers get copies, so nothing outside the store can change a stored record (values are JSON data). */
function copy(record: ThreadRecord): ThreadRecord {
  return {
    ...record,
    nextNodes: [...record.nextNodes],
    interrupts: record.interrupts.map((item) => ({ ...item })),
    metadata: { ...record.metadata },
    runQueue: [...record.runQueue],
  };
}

function recordKey(tenantId: string, threadId: string): string {
  return `${tenantId}\u0000${threadId}`;
}
