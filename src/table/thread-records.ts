import {
  ThreadBusyError,
  ThreadExistsError,
  ThreadExpiredError,
  ThreadNotFoundError,
} from "../shared/errors";
import * as rules from "../shared/run-rules";
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
  ReleaseLeaseInput,
  RenewRunLeaseInput,
  RunLeaseState,
  PatchThreadInput,
  ScanThreadsInput,
  ThreadScan,
  ThreadRecord,
  ThreadStatus,
  ThreadStore,
} from "../shared/threads";
import type { Item, TableClient } from "./client";
import { THREAD_ATTRIBUTES as A } from "./definition";
import { isExpired, notExpired, type ExpiryPolicy } from "./expiry";
import { allOf, renderUpdate, updateFragment, type UpdateFragment } from "./expressions";
import { threadPartitionKey } from "./keys";
import { ThreadRecordCache, type ThreadLife } from "./thread-record-cache";
import {
  newGeneration,
  recordAbsent,
  recordExists,
  recordKey,
  statusFragment,
  toRecord,
  touchFragment,
  unchanged,
} from "./thread-record-model";
import { removeThreadLeftovers } from "./thread-removal";
import { ThreadRuleWriter } from "./thread-rule-writer";
import { scanThreadRecords, tenantThreadIds, unsettledThreads } from "./thread-scan";

// Attempts of a read-decide-write on the record's metadata before giving up as busy.
const MAX_QUEUE_ATTEMPTS = 5;

/**
 * The thread record (`sk = "m"`), its only owner: creation, expiry renewal and generation for the checkpoint
 * saver; leases, statuses, interrupts, metadata and the inbox for the HTTP runtime. One instance per container,
 * shared by both, keeps one cache of what it last saw of each record, so a lease write that renewed a thread
 * spares the saver its own renewal. Every key starts with the tenant, which every method takes explicitly.
 */
export class ThreadRecords implements ThreadStore {
  private readonly cache: ThreadRecordCache;
  private readonly ruleWriter: ThreadRuleWriter;
  private readonly renewals = new Map<string, Promise<ThreadLife>>();

  constructor(
    private readonly table: TableClient,
    readonly expiry: ExpiryPolicy,
    private readonly now: () => number = Date.now,
  ) {
    this.cache = new ThreadRecordCache(now);
    this.ruleWriter = new ThreadRuleWriter(table, this.cache, expiry);
  }

  // ------------------------------------------------------------------ the saver's side

  /** The live generation for a write, creating or renewing the record when needed (one UpdateItem at most). */
  async ensureWritable(tenantId: string, threadId: string): Promise<ThreadLife> {
    const pk = threadPartitionKey(tenantId, threadId);
    const known = this.cache.trusted(pk);
    if (known && !this.expiry.needsRenewal(known.expiry, this.now())) return known;
    const inFlight = this.renewals.get(pk);
    if (inFlight) return inFlight;
    const renewal = this.renew(tenantId, threadId).finally(() => this.renewals.delete(pk));
    this.renewals.set(pk, renewal);
    return renewal;
  }

  /** The live thread's generation and expiry, from this container's recent knowledge or one consistent read. */
  async readLife(tenantId: string, threadId: string): Promise<ThreadLife | undefined> {
    const known = this.knownLife(tenantId, threadId);
    if (known) return known;
    const pk = threadPartitionKey(tenantId, threadId);
    return this.observe(pk, await this.table.get(recordKey(pk)));
  }

  /** The live generation as this container saw it lately, without a request; undefined when it must be read. */
  knownLife(tenantId: string, threadId: string): ThreadLife | undefined {
    const known = this.cache.trusted(threadPartitionKey(tenantId, threadId));
    return known && !isExpired(known.expiry, this.now()) ? known : undefined;
  }

  /** Takes note of a record read along with other items (or of its absence); returns the life if it is live. */
  observe(pk: string, record: Item | undefined): ThreadLife | undefined {
    return this.cache.observe(pk, record);
  }

  /** A tenant's thread ids, newest thread first (from the keys-only index; expired ones read as absent later). */
  threadIds(tenantId: string): AsyncGenerator<string> {
    return tenantThreadIds(this.table, tenantId);
  }

  /** Sets a thread's operational status (and next node for paused threads), renewing its expiry. */
  async setStatus(
    tenantId: string,
    threadId: string,
    status: ThreadStatus,
    nextNode?: string,
  ): Promise<void> {
    // A status is part of the run state: the change moves the revision, so no rule decided before it applies.
    await this.renew(tenantId, threadId, [
      statusFragment(tenantId, status, nextNode),
      updateFragment({
        set: ["#rev = if_not_exists(#rev, :zero) + :one"],
        names: { "#rev": A.revision },
        values: { ":zero": 0, ":one": 1 },
      }),
    ]);
  }

  /**
   * Deletes a thread: its record first, so the thread is absent from then on whatever happens next, then every
   * other item of its partition (keeping a new life's items, should the thread be recreated meanwhile).
   */
  async remove(tenantId: string, threadId: string): Promise<void> {
    const pk = threadPartitionKey(tenantId, threadId);
    this.cache.forget(pk);
    await this.table.batchWrite([{ DeleteRequest: { Key: recordKey(pk) } }]);
    this.cache.noteRemoved(pk);
    await removeThreadLeftovers(this.table, pk, this.now);
  }

  // ------------------------------------------------------------------ the runtime's side (ThreadStore)

  async get(tenantId: string, threadId: string): Promise<ThreadRecord | undefined> {
    const pk = threadPartitionKey(tenantId, threadId);
    const item = await this.table.get(recordKey(pk));
    return this.observe(pk, item) ? toRecord(item!) : undefined;
  }

  async create(input: CreateThreadInput): Promise<ThreadRecord> {
    const pk = threadPartitionKey(input.tenantId, input.threadId);
    const outcome = await this.table.update(
      recordKey(pk),
      renderUpdate(
        [
          touchFragment(input.tenantId, input.threadId, input.now, this.expiry, newGeneration()),
          updateFragment({
            set: ["#metadata = :metadata"],
            names: { "#metadata": A.metadata },
            values: { ":metadata": JSON.stringify(input.metadata) },
          }),
        ],
        recordAbsent(),
      ),
      { returnValues: "ALL_NEW" },
    );
    if (outcome.applied) {
      this.observe(pk, outcome.attributes);
      return toRecord(outcome.attributes ?? {});
    }
    const current = outcome.current ?? {};
    // An expired thread's items must go before its id is reused (the caller removes them and retries).
    if (isExpired(current[A.ttl], input.now)) throw new ThreadExpiredError(input.threadId);
    if (input.ifExists === "raise") throw new ThreadExistsError(input.threadId);
    return toRecord(current);
  }

  async releaseLease(input: ReleaseLeaseInput): Promise<boolean> {
    return (await this.finishRun(input)).applied;
  }

  finishRun(input: FinishRunInput): Promise<FinishRunResult> {
    return this.ruleWriter.apply(input.tenantId, input.threadId, input.now, (record) =>
      rules.decideFinish(record, input),
    );
  }

  enqueueRun(input: EnqueueRunInput): Promise<EnqueueRunResult> {
    return this.ruleWriter.apply(
      input.tenantId,
      input.threadId,
      input.now,
      (record) => rules.decideEnqueue(record, input),
      // A run that may create its thread usually starts a new one: one write, no read, when it does.
      { renewLife: true, expired: "throw", guessAbsent: input.createIfMissing },
    );
  }

  claimRun(input: ClaimRunInput): Promise<ClaimRunOutcome> {
    return this.ruleWriter.apply(
      input.tenantId,
      input.threadId,
      input.now,
      (record) => rules.decideClaim(record, input),
      { renewLife: true },
    );
  }

  renewRunLease(input: RenewRunLeaseInput): Promise<RunLeaseState> {
    return this.ruleWriter.apply(input.tenantId, input.threadId, this.now(), (record) =>
      rules.decideRenew(record, input),
    );
  }

  cancelRun(input: CancelRunInput): Promise<"running" | "queued" | "absent"> {
    return this.ruleWriter.apply(input.tenantId, input.threadId, this.now(), (record) =>
      rules.decideCancel(record, input),
    );
  }

  /** Through the threads-unsettled index (thread-scan.ts). */
  unsettledThreads(): AsyncIterable<{ tenantId: string; threadId: string }> {
    return unsettledThreads(this.table);
  }

  /** Through the thread indexes (thread-scan.ts): an inbox status's own, else the tenant's. */
  scan(input: ScanThreadsInput): ThreadScan {
    return scanThreadRecords(this.table, input, this.now);
  }

  async patchMetadata(input: PatchThreadInput): Promise<ThreadRecord> {
    const pk = threadPartitionKey(input.tenantId, input.threadId);
    // Read, merge, write back only if nobody changed the metadata meanwhile.
    for (let attempt = 1; ; attempt++) {
      const current = await this.table.get(recordKey(pk));
      if (!current || isExpired(current[A.ttl], input.now)) {
        throw new ThreadNotFoundError(input.threadId);
      }
      const merged = { ...toRecord(current).metadata, ...input.metadata };
      const outcome = await this.table.update(
        recordKey(pk),
        renderUpdate(
          [
            updateFragment({
              // The rulebook writes metadata too (a run's graph and assistant): the revision moves with it.
              set: [
                "#metadata = :metadata",
                "#updated = :updated",
                "#rev = if_not_exists(#rev, :zero) + :one",
              ],
              names: { "#metadata": A.metadata, "#updated": A.updatedAt, "#rev": A.revision },
              values: {
                ":metadata": JSON.stringify(merged),
                ":updated": input.now,
                ":zero": 0,
                ":one": 1,
              },
            }),
          ],
          allOf(
            recordExists(),
            notExpired(input.now),
            unchanged("metadata", A.metadata, current[A.metadata]),
          ),
        ),
        { returnValues: "ALL_NEW" },
      );
      if (outcome.applied) {
        this.observe(pk, outcome.attributes);
        return toRecord(outcome.attributes ?? {});
      }
      if (attempt >= MAX_QUEUE_ATTEMPTS) throw new ThreadBusyError(input.threadId);
    }
  }

  lockThread(input: LockThreadInput): Promise<ThreadRecord | undefined> {
    return this.ruleWriter.apply(input.tenantId, input.threadId, input.now, (record) =>
      rules.decideLock(record, input),
    );
  }

  async delete(tenantId: string, threadId: string, owner: string): Promise<void> {
    // Usually gone already: the saver's deletion removes the record first. When this container's saver did so
    // after this deletion's lock (a write this cache saw), nothing is left to read or delete. The module grants
    // no DeleteItem, so no conditional delete: the record is removed only while this deletion still holds its
    // lease.
    const pk = threadPartitionKey(tenantId, threadId);
    if (this.cache.takeRemoved(pk)) return;
    const item = await this.table.get(recordKey(pk));
    if (item?.[A.leaseOwner] !== owner) return;
    this.cache.forget(pk);
    await this.table.batchWrite([{ DeleteRequest: { Key: recordKey(pk) } }]);
  }

  // ------------------------------------------------------------------ plumbing

  /**
   * One conditional UpdateItem on the record: create or renew it, plus `extra`. An expired record is a gone
   * thread: its items are removed first (never renewed, or its old checkpoints would come back).
   */
  private async renew(
    tenantId: string,
    threadId: string,
    extra: UpdateFragment[] = [],
  ): Promise<ThreadLife> {
    const pk = threadPartitionKey(tenantId, threadId);
    const send = () => {
      const nowMs = this.now();
      const fragments = [touchFragment(tenantId, threadId, nowMs, this.expiry, newGeneration())];
      fragments.push(...extra);
      return this.table.update(recordKey(pk), renderUpdate(fragments, notExpired(nowMs)), {
        returnValues: "ALL_NEW",
      });
    };
    let outcome = await send();
    if (!outcome.applied) {
      await this.remove(tenantId, threadId);
      outcome = await send();
    }
    const life = outcome.applied ? this.observe(pk, outcome.attributes) : undefined;
    if (!life) throw new ThreadNotFoundError(threadId);
    return life;
  }
}
