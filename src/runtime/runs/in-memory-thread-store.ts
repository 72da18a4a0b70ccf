import { plainCopy } from "../../shared/plain-copy";
import { ThreadExistsError, ThreadNotFoundError } from "../../shared/errors";
import * as rules from "../../shared/run-rules";
import { copyRecord, isBusy, newThreadRecord } from "../../shared/run-rules";
import type {
  CancelRunInput,
  ClaimRunInput,
  ClaimRunOutcome,
  CreateThreadInput,
  EnqueueRunInput,
  EnqueueRunResult,
  FinishRunInput,
  FinishRunResult,
  LockThreadInput,
  PatchThreadInput,
  ReleaseLeaseInput,
  RenewRunLeaseInput,
  RunLeaseState,
  ScanThreadsInput,
  ThreadRecord,
  ThreadScan,
  ThreadStore,
} from "../../shared/threads";

export interface InMemoryThreadStoreOptions {
  /** Most thread records kept; the least recently updated idle thread is dropped beyond it (default 10,000). */
  maxThreads?: number;
}

/**
 * Thread records in process memory, for checkpointers without a table (the dev server's in-memory saver).
 * Keyed by tenant and thread together, so no tenant can reach another tenant's record. Run methods apply the
 * rulebook (run-rules.ts), as the table's thread records do.
 */
export class InMemoryThreadStore implements ThreadStore {
  private readonly records = new Map<string, { tenantId: string; record: ThreadRecord }>();
  private readonly maxThreads: number;

  constructor(options: InMemoryThreadStoreOptions = {}) {
    this.maxThreads = options.maxThreads ?? 10_000;
  }

  async get(tenantId: string, threadId: string): Promise<ThreadRecord | undefined> {
    const entry = this.records.get(recordKey(tenantId, threadId));
    return entry ? copyRecord(entry.record) : undefined;
  }

  async create(input: CreateThreadInput): Promise<ThreadRecord> {
    const key = recordKey(input.tenantId, input.threadId);
    const existing = this.records.get(key);
    if (existing) {
      if (input.ifExists === "raise") throw new ThreadExistsError(input.threadId);
      return copyRecord(existing.record);
    }
    const record = newThreadRecord(input.threadId, input.now, input.metadata);
    this.insert(key, input.tenantId, record);
    return copyRecord(record);
  }

  async releaseLease(input: ReleaseLeaseInput): Promise<boolean> {
    return (await this.finishRun(input)).applied;
  }

  finishRun(input: FinishRunInput): Promise<FinishRunResult> {
    return this.apply(input.tenantId, input.threadId, (record) =>
      rules.decideFinish(record, input),
    );
  }

  async *unsettledThreads(): AsyncGenerator<{ tenantId: string; threadId: string }> {
    for (const { tenantId, record } of [...this.records.values()]) {
      if (record.status === "RUNNING" || record.runQueue.length > 0 || record.continuing) {
        yield { tenantId, threadId: record.threadId };
      }
    }
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
      .map(copyRecord);
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
    entry.record.metadata = { ...entry.record.metadata, ...plainCopy(input.metadata) };
    entry.record.updatedAt = input.now;
    return copyRecord(entry.record);
  }

  lockThread(input: LockThreadInput): Promise<ThreadRecord | undefined> {
    return this.apply(input.tenantId, input.threadId, (record) => rules.decideLock(record, input));
  }

  async delete(tenantId: string, threadId: string, owner: string): Promise<void> {
    const key = recordKey(tenantId, threadId);
    if (this.records.get(key)?.record.leaseOwner === owner) this.records.delete(key);
  }

  enqueueRun(input: EnqueueRunInput): Promise<EnqueueRunResult> {
    return this.apply(input.tenantId, input.threadId, (record) =>
      rules.decideEnqueue(record, input),
    );
  }

  claimRun(input: ClaimRunInput): Promise<ClaimRunOutcome> {
    return this.apply(input.tenantId, input.threadId, (record) => rules.decideClaim(record, input));
  }

  renewRunLease(input: RenewRunLeaseInput): Promise<RunLeaseState> {
    return this.apply(input.tenantId, input.threadId, (record) => rules.decideRenew(record, input));
  }

  cancelRun(input: CancelRunInput): Promise<"running" | "queued" | "absent"> {
    return this.apply(input.tenantId, input.threadId, (record) =>
      rules.decideCancel(record, input),
    );
  }

  /**
   * Applies one rule of the rulebook to a record in one synchronous step (concurrent calls see each other's
   * effects whole). Callers get copies of records, so nothing outside can change a stored one.
   */
  private async apply<Result>(
    tenantId: string,
    threadId: string,
    rule: (record: ThreadRecord | undefined) => rules.Decision<Result>,
  ): Promise<Result> {
    const key = recordKey(tenantId, threadId);
    const stored = this.records.get(key)?.record;
    const { next, result } = rule(stored ? copyRecord(stored) : undefined);
    if (next) this.insert(key, tenantId, copyRecord(next));
    return result;
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

function recordKey(tenantId: string, threadId: string): string {
  return `${tenantId}\u0000${threadId}`;
}
