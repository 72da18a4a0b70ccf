import {
  ThreadBusyError,
  ThreadExistsError,
  ThreadExpiredError,
  ThreadNotFoundError,
} from "../shared/errors";
import * as rules from "../shared/run-rules";
import { sleep } from "../shared/sleep";
import {
  INBOX_STATUSES,
  type AcquireLeaseInput,
  type CancelRunInput,
  type ClaimRunInput,
  type ClaimRunOutcome,
  type CreateThreadInput,
  type EnqueueRunInput,
  type EnqueueRunResult,
  type FinishRunInput,
  type FinishRunResult,
  type LockThreadInput,
  type ReleaseLeaseInput,
  type RenewRunLeaseInput,
  type RunLeaseState,
  type PatchThreadInput,
  type ScanThreadsInput,
  type ThreadScan,
  type ThreadRecord,
  type ThreadStatus,
  type ThreadStore,
} from "../shared/threads";
import type { Item, TableClient } from "./client";
import {
  TABLE_KEYS,
  THREAD_ATTRIBUTES as A,
  THREADS_BY_STATUS_INDEX,
  THREADS_BY_TENANT_INDEX,
} from "./definition";
import { isExpired, notExpired, type ExpiryPolicy } from "./expiry";
import {
  allOf,
  indexPartition,
  renderUpdate,
  updateFragment,
  type Expression,
  type UpdateFragment,
} from "./expressions";
import { parseThreadPartitionKey, threadPartitionKey } from "./keys";
import {
  newGeneration,
  recordAbsent,
  recordExists,
  recordKey,
  statusFragment,
  tenantStatus,
  toRecord,
  unchanged,
} from "./thread-record-model";
import { removeThreadLeftovers } from "./thread-removal";

/** What a writer needs of a live thread: the generation its items carry, and until when the thread lives. */
export interface ThreadLife {
  generation: string;
  /** Epoch seconds. */
  expiry: number;
}

interface CachedLife extends ThreadLife {
  /** Epoch milliseconds at which this container last read or wrote the record. */
  confirmedAt: number;
}

// Attempts of a read-decide-write on the record's metadata before giving up as busy.
const MAX_QUEUE_ATTEMPTS = 5;
// Refused rule writes retried at once before pausing between attempts (the record changed meanwhile).
const CONTENTION_ATTEMPTS_BEFORE_PAUSE = 1;
// How long what this container last saw of a record is trusted: another process may delete the thread, and a
// write must not go out under a generation that no longer has a record. (The HTTP runtime's lease excludes
// that race; long-lived processes, such as a dev server, rely on this bound.)
const CONFIRMATION_MS = 10_000;
const MAX_CACHED_LIVES = 10_000;
// Records per page of a thread scan: the first page small (one page of search results), then BatchGet's most.
const SCAN_FIRST_PAGE = 25;
const SCAN_PAGE = 100;

/**
 * The thread record (`sk = "m"`), its only owner: creation, expiry renewal and generation for the checkpoint
 * saver; leases, statuses, interrupts, metadata and the inbox for the HTTP runtime. One instance per container,
 * shared by both, keeps one cache of what it last saw of each record, so a lease write that renewed a thread
 * spares the saver its own renewal. Every key starts with the tenant, which every method takes explicitly.
 */
export class ThreadRecords implements ThreadStore {
  private readonly lives = new Map<string, CachedLife>();
  /** The records this container last wrote or read for a rule, with when (a rule's first guess). */
  private readonly records = new Map<string, { item: Item; at: number }>();
  private readonly renewals = new Map<string, Promise<ThreadLife>>();

  constructor(
    private readonly table: TableClient,
    readonly expiry: ExpiryPolicy,
    private readonly now: () => number = Date.now,
  ) {}

  // ------------------------------------------------------------------ the saver's side

  /** The live generation for a write, creating or renewing the record when needed (one UpdateItem at most). */
  async ensureWritable(tenantId: string, threadId: string): Promise<ThreadLife> {
    const pk = threadPartitionKey(tenantId, threadId);
    const known = this.trusted(pk);
    if (known && !this.expiry.needsRenewal(known.expiry, this.now())) return known;
    const inFlight = this.renewals.get(pk);
    if (inFlight) return inFlight;
    const renewal = this.renew(tenantId, threadId).finally(() => this.renewals.delete(pk));
    this.renewals.set(pk, renewal);
    return renewal;
  }

  /** The live thread's generation and expiry, from this container's recent knowledge or one consistent read. */
  async readLife(tenantId: string, threadId: string): Promise<ThreadLife | undefined> {
    const pk = threadPartitionKey(tenantId, threadId);
    const known = this.trusted(pk);
    if (known && !isExpired(known.expiry, this.now())) return known;
    return this.observe(pk, await this.table.get(recordKey(pk)));
  }

  /** Takes note of a record read along with other items (or of its absence); returns the life if it is live. */
  observe(pk: string, record: Item | undefined): ThreadLife | undefined {
    if (!record) {
      this.forget(pk);
      return undefined;
    }
    this.seen(pk, record);
    const life = this.remember(pk, String(record[A.generation]), Number(record[A.ttl]));
    return isExpired(life.expiry, this.now()) ? undefined : life;
  }

  /** A tenant's thread ids, newest thread first (from the keys-only index; expired ones read as absent later). */
  async *threadIds(tenantId: string): AsyncGenerator<string> {
    for await (const page of this.table.queryPages({
      IndexName: THREADS_BY_TENANT_INDEX.name,
      ...indexPartition(THREADS_BY_TENANT_INDEX.partitionKey, tenantId),
      ScanIndexForward: false,
    })) {
      for (const item of page) {
        const threadId = parseThreadPartitionKey(tenantId, String(item[TABLE_KEYS.partitionKey]));
        if (threadId !== undefined) yield threadId;
      }
    }
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
    this.forget(pk);
    await this.table.batchWrite([{ DeleteRequest: { Key: recordKey(pk) } }]);
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
          this.touch(input.tenantId, input.threadId, input.now, newGeneration()),
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

  acquireLease(input: AcquireLeaseInput): Promise<ThreadRecord | undefined> {
    return this.apply(
      input.tenantId,
      input.threadId,
      input.now,
      (record) => rules.decideAcquire(record, input),
      // A direct run that may create its thread usually starts a new one: one write, no read, when it does.
      { renewLife: true, expired: "throw", guessAbsent: input.mode === "start-or-create" },
    );
  }

  async releaseLease(input: ReleaseLeaseInput): Promise<boolean> {
    return (await this.finishRun(input)).applied;
  }

  finishRun(input: FinishRunInput): Promise<FinishRunResult> {
    return this.apply(input.tenantId, input.threadId, input.now, (record) =>
      rules.decideFinish(record, input),
    );
  }

  enqueueRun(input: EnqueueRunInput): Promise<EnqueueRunResult> {
    return this.apply(
      input.tenantId,
      input.threadId,
      input.now,
      (record) => rules.decideEnqueue(record, input),
      { renewLife: true, expired: "throw" },
    );
  }

  claimRun(input: ClaimRunInput): Promise<ClaimRunOutcome> {
    return this.apply(
      input.tenantId,
      input.threadId,
      input.now,
      (record) => rules.decideClaim(record, input),
      { renewLife: true },
    );
  }

  renewRunLease(input: RenewRunLeaseInput): Promise<RunLeaseState> {
    return this.apply(input.tenantId, input.threadId, this.now(), (record) =>
      rules.decideRenew(record, input),
    );
  }

  cancelRun(input: CancelRunInput): Promise<"running" | "queued" | "absent"> {
    return this.apply(input.tenantId, input.threadId, this.now(), (record) =>
      rules.decideCancel(record, input),
    );
  }

  /**
   * The inbox statuses are served by the sparse status index (records included). Other searches walk the
   * keys-only tenant index, newest thread first, and read the records by key, consistently.
   */
  scan(input: ScanThreadsInput): ThreadScan {
    if (input.ids) return { orderedBy: undefined, records: this.scanIds(input) };
    const inbox = input.status !== undefined && INBOX_STATUSES.includes(input.status);
    return {
      orderedBy: inbox ? "updated_at" : "created_at",
      records: this.scanIndex(input, inbox),
    };
  }

  /** Pages of an index: an inbox status's own (records projected), else the tenant's (keys, then records). */
  private async *scanIndex(input: ScanThreadsInput, inbox: boolean): AsyncIterable<ThreadRecord> {
    const { status } = input;
    const index = inbox ? THREADS_BY_STATUS_INDEX : THREADS_BY_TENANT_INDEX;
    const partition = inbox ? tenantStatus(input.tenantId, status!) : input.tenantId;
    let startKey: Item | undefined;
    let pageSize = SCAN_FIRST_PAGE;
    do {
      const page = await this.table.query({
        IndexName: index.name,
        ...indexPartition(index.partitionKey, partition),
        ScanIndexForward: input.order === "asc",
        // Small first: most searches want one page of results; later pages are read larger.
        Limit: pageSize,
        ExclusiveStartKey: startKey,
      });
      pageSize = SCAN_PAGE;
      const items = inbox ? (page.Items ?? []) : await this.readRecords(page.Items ?? []);
      const now = this.now();
      for (const item of items) {
        // TTL deletion lags: an expired record is no thread.
        if (isExpired(item[A.ttl], now)) continue;
        const record = toRecord(item);
        if (status === undefined || record.status === status) yield record;
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
  }

  private async *scanIds(input: ScanThreadsInput): AsyncIterable<ThreadRecord> {
    const ids = [...new Set(input.ids)];
    for (let start = 0; start < ids.length; start += SCAN_PAGE) {
      const keys = ids
        .slice(start, start + SCAN_PAGE)
        .map((threadId) => recordKey(threadPartitionKey(input.tenantId, threadId)));
      const now = this.now();
      for (const item of await this.readRecords(keys)) {
        if (isExpired(item[A.ttl], now)) continue;
        const record = toRecord(item);
        if (input.status === undefined || record.status === input.status) yield record;
      }
    }
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
    return this.apply(input.tenantId, input.threadId, input.now, (record) =>
      rules.decideLock(record, input),
    );
  }

  async delete(tenantId: string, threadId: string, owner: string): Promise<void> {
    // Usually gone already: the saver's deletion removes the record first. The module grants no DeleteItem, so
    // no conditional delete: the record is removed only while this deletion still holds its lease.
    const pk = threadPartitionKey(tenantId, threadId);
    const item = await this.table.get(recordKey(pk));
    if (item?.[A.leaseOwner] !== owner) return;
    this.forget(pk);
    await this.table.batchWrite([{ DeleteRequest: { Key: recordKey(pk) } }]);
  }

  // ------------------------------------------------------------------ plumbing

  /**
   * Applies one rule of the rulebook (run-rules.ts): decides on the record as this container last saw it (or as
   * one consistent read finds it), and writes what changed only if the record is still the one decided on (same
   * life, same revision). A refused write returns the record as it is, and the rule decides again on it, after a
   * short random pause when others are writing too: contention delays a change, it never refuses one. A
   * decision to change nothing is made on a fresh read, never on a copy that may be stale.
   */
  private async apply<Result>(
    tenantId: string,
    threadId: string,
    now: number,
    rule: (record: ThreadRecord | undefined) => rules.Decision<Result>,
    options: {
      renewLife?: boolean;
      expired?: "throw";
      /** A record this container has not seen is first taken to be absent (a refused write says otherwise). */
      guessAbsent?: boolean;
    } = {},
  ): Promise<Result> {
    const pk = threadPartitionKey(tenantId, threadId);
    let item = this.lastSeen(pk);
    let fresh = false;
    if (item === undefined && !options.guessAbsent) {
      item = await this.table.get(recordKey(pk));
      fresh = true;
    }
    for (let attempt = 0; ; attempt++) {
      const live = item && !isExpired(item[A.ttl], now) ? item : undefined;
      if (item && !live && options.expired === "throw") {
        throw new ThreadExpiredError(threadId);
      }
      const record = live ? toRecord(live) : undefined;
      const { next, result } = rule(record);
      if (!next) {
        if (fresh) return result;
        item = await this.table.get(recordKey(pk));
        fresh = true;
        continue;
      }
      // An expired record is a gone thread: a rule never writes over it (its items must go first).
      if (item && !live) return rule(undefined).result;
      const outcome = await this.table.update(
        recordKey(pk),
        renderUpdate(
          this.changeOf(tenantId, live, next, now, options.renewLife === true),
          live ? allOf(recordExists(), notExpired(now), sameRevision(live)) : recordAbsent(),
        ),
        { returnValues: "ALL_NEW" },
      );
      if (outcome.applied) {
        this.observe(pk, outcome.attributes);
        return result;
      }
      item = outcome.current;
      fresh = true;
      if (attempt >= CONTENTION_ATTEMPTS_BEFORE_PAUSE) await contentionPause(attempt);
    }
  }

  /** The update that turns `record` (undefined: none yet) into `next`: only the run fields that changed. */
  private changeOf(
    tenantId: string,
    live: Item | undefined,
    next: ThreadRecord,
    nowMs: number,
    renewLife: boolean,
  ): UpdateFragment[] {
    const record = live ? toRecord(live) : undefined;
    const fragments: UpdateFragment[] = [
      updateFragment({
        set: ["#rev = :rev"],
        names: { "#rev": A.revision },
        values: { ":rev": revisionOf(live) + 1 },
      }),
    ];
    if (renewLife || !record) {
      fragments.push(this.touch(tenantId, next.threadId, nowMs, newGeneration()));
    } else if (next.updatedAt !== record.updatedAt) {
      fragments.push(setOrRemove("updated_at", A.updatedAt, next.updatedAt));
    }
    if (
      next.status !== record?.status ||
      next.nextNodes.join(",") !== (record?.nextNodes ?? []).join(",")
    ) {
      fragments.push(
        next.status === undefined
          ? updateFragment({
              remove: ["#status", "#tenant_status", "#next_node"],
              names: {
                "#status": A.status,
                "#tenant_status": A.tenantStatus,
                "#next_node": A.nextNode,
              },
            })
          : statusFragment(tenantId, next.status, next.nextNodes.join(",")),
      );
    }
    const interrupts = JSON.stringify(next.interrupts);
    if (interrupts !== JSON.stringify(record?.interrupts ?? [])) {
      fragments.push(setOrRemove("interrupts", A.interrupts, interrupts));
    }
    const metadata = JSON.stringify(next.metadata);
    if (metadata !== JSON.stringify(record?.metadata ?? {})) {
      fragments.push(setOrRemove("metadata", A.metadata, metadata));
    }
    const fields = [
      ["graph", A.graphId, next.graphId, record?.graphId],
      ["owner", A.leaseOwner, next.leaseOwner, record?.leaseOwner],
      ["expires", A.leaseExpiresAt, next.leaseExpiresAt, record?.leaseExpiresAt],
      ["cancel", A.cancelAction, next.cancelAction, record?.cancelAction],
      ["continuing", A.continuing, next.continuing, record?.continuing],
    ] as const;
    for (const [placeholder, attribute, value, was] of fields) {
      if (value !== was) fragments.push(setOrRemove(placeholder, attribute, value));
    }
    if (next.runQueue.join("\n") !== (record?.runQueue ?? []).join("\n")) {
      fragments.push(setOrRemove("queue", A.runQueue, next.runQueue));
    }
    return fragments;
  }

  /** This container's copy of a record it wrote or read recently (what a rule decides on first). */
  private lastSeen(pk: string): Item | undefined {
    const known = this.records.get(pk);
    if (!known || this.now() - known.at >= CONFIRMATION_MS) return undefined;
    return known.item;
  }

  private seen(pk: string, item: Item | undefined): void {
    this.records.delete(pk);
    if (!item) return;
    this.records.set(pk, { item, at: this.now() });
    if (this.records.size > MAX_CACHED_LIVES) {
      const oldest = this.records.keys().next().value;
      if (oldest !== undefined) this.records.delete(oldest);
    }
  }

  private forget(pk: string): void {
    this.lives.delete(pk);
    this.records.delete(pk);
  }

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
      const fragments = [this.touch(tenantId, threadId, nowMs, newGeneration())];
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

  /** Creates the record if needed and renews its expiry; the generation is kept when the record exists. */
  private touch(
    tenantId: string,
    threadId: string,
    nowMs: number,
    generation: string,
  ): UpdateFragment {
    return updateFragment({
      set: [
        "#tenant = :tenant",
        "#thread_id = :thread_id",
        "#updated_at = :now_ms",
        "#created_at = if_not_exists(#created_at, :now_ms)",
        "#ttl = :ttl",
        "#gen = if_not_exists(#gen, :gen)",
      ],
      names: {
        "#tenant": A.tenant,
        "#thread_id": A.threadId,
        "#updated_at": A.updatedAt,
        "#created_at": A.createdAt,
        "#ttl": A.ttl,
        "#gen": A.generation,
      },
      values: {
        ":tenant": tenantId,
        ":thread_id": threadId,
        ":now_ms": nowMs,
        ":ttl": this.expiry.renewedExpiry(nowMs),
        ":gen": generation,
      },
    });
  }

  private trusted(pk: string): CachedLife | undefined {
    const known = this.lives.get(pk);
    return known && this.now() - known.confirmedAt < CONFIRMATION_MS ? known : undefined;
  }

  private remember(pk: string, generation: string, expiry: number): CachedLife {
    const life = { generation, expiry, confirmedAt: this.now() };
    this.lives.delete(pk);
    this.lives.set(pk, life);
    if (this.lives.size > MAX_CACHED_LIVES) {
      const oldest = this.lives.keys().next().value;
      if (oldest !== undefined) this.lives.delete(oldest);
    }
    return life;
  }

  /** The records behind keys-only index entries, in the entries' order. */
  private async readRecords(keys: Item[]): Promise<Item[]> {
    if (keys.length === 0) return [];
    const records = await this.table.batchGet(
      keys.map((key) => ({
        [TABLE_KEYS.partitionKey]: String(key[TABLE_KEYS.partitionKey]),
        [TABLE_KEYS.sortKey]: String(key[TABLE_KEYS.sortKey]),
      })),
    );
    const byPk = new Map(
      records.map((record) => [String(record[TABLE_KEYS.partitionKey]), record]),
    );
    return keys.flatMap((key): Item[] => {
      const record = byPk.get(String(key[TABLE_KEYS.partitionKey]));
      return record ? [record] : [];
    });
  }
}

/** The record's revision as read (0 before the rulebook first changed it). */
function revisionOf(item: Item | undefined): number {
  const revision = item?.[A.revision];
  return typeof revision === "number" ? revision : 0;
}

/** The record is still the life and the revision a decision was made on. */
function sameRevision(item: Item): Expression {
  return allOf(
    unchanged("gen", A.generation, item[A.generation]),
    unchanged("rev", A.revision, item[A.revision]),
  );
}

function setOrRemove(placeholder: string, attribute: string, value: unknown): UpdateFragment {
  const name = `#${placeholder}`;
  if (value === undefined) return updateFragment({ remove: [name], names: { [name]: attribute } });
  return updateFragment({
    set: [`${name} = :${placeholder}`],
    names: { [name]: attribute },
    values: { [`:${placeholder}`]: value },
  });
}

/** A random pause that grows with the attempts (full jitter, 5 ms doubling up to 250 ms). */
function contentionPause(attempt: number): Promise<void> {
  const ceiling = Math.min(250, 5 * 2 ** Math.min(attempt, 6));
  return sleep(Math.random() * ceiling);
}
