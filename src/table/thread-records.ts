import {
  NothingToResumeError,
  ThreadBusyError,
  ThreadExistsError,
  ThreadExpiredError,
  ThreadNotFoundError,
  ThreadPausedError,
} from "../shared/errors";
import {
  INBOX_STATUSES,
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
  expression,
  indexPartition,
  renderUpdate,
  updateFragment,
  type Expression,
  type UpdateFragment,
} from "./expressions";
import { parseThreadPartitionKey, threadPartitionKey } from "./keys";
import {
  graphIs,
  interruptPending,
  leaseFree,
  leaseHeldBy,
  newGeneration,
  queueIdle,
  queueUnchanged,
  recordAbsent,
  recordExists,
  recordKey,
  statusFragment,
  statusIs,
  statusIsNot,
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

// Attempts of a read-decide-write on the run queue before giving up as busy.
const MAX_QUEUE_ATTEMPTS = 5;
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
      this.lives.delete(pk);
      return undefined;
    }
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
    await this.renew(tenantId, threadId, statusFragment(tenantId, status, nextNode));
  }

  /**
   * Deletes a thread: its record first, so the thread is absent from then on whatever happens next, then every
   * other item of its partition (keeping a new life's items, should the thread be recreated meanwhile).
   */
  async remove(tenantId: string, threadId: string): Promise<void> {
    const pk = threadPartitionKey(tenantId, threadId);
    this.lives.delete(pk);
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

  async acquireLease(input: AcquireLeaseInput): Promise<ThreadRecord | undefined> {
    const pk = threadPartitionKey(input.tenantId, input.threadId);
    const proposed = newGeneration();
    // Background runs waiting for the thread go first: a direct run takes only an idle thread.
    const conditions: Expression[] = [leaseFree(input.now), notExpired(input.now), queueIdle()];
    if (input.mode !== "start-or-create") conditions.push(recordExists());
    if (input.mode === "resume") {
      conditions.push(statusIs("PAUSED_FOR_HUMAN"), graphIs(input.graphId));
      (input.resumeIds ?? []).forEach((id, index) => conditions.push(interruptPending(id, index)));
    } else if (input.rejectPaused) {
      conditions.push(statusIsNot("PAUSED_FOR_HUMAN"));
    }
    const outcome = await this.table.update(
      recordKey(pk),
      renderUpdate(
        [
          this.touch(input.tenantId, input.threadId, input.now, proposed),
          statusFragment(input.tenantId, "RUNNING"),
          updateFragment({
            set: ["#owner = :owner", "#expires = :expires", "#graph = :graph"],
            names: {
              "#owner": A.leaseOwner,
              "#expires": A.leaseExpiresAt,
              "#graph": A.graphId,
            },
            values: {
              ":owner": input.owner,
              ":expires": input.expiresAt,
              ":graph": input.graphId,
            },
          }),
        ],
        allOf(...conditions),
      ),
      { returnValues: "ALL_OLD" },
    );
    if (outcome.applied) {
      const old = outcome.attributes;
      // The lease write renewed the record: the saver of this run needs no renewal of its own.
      this.remember(
        pk,
        old ? String(old[A.generation]) : proposed,
        this.expiry.renewedExpiry(input.now),
      );
      return old ? toRecord(old) : undefined;
    }
    const current = outcome.current;
    const old = current ? toRecord(current) : undefined;
    if (!current || !old) throw new ThreadNotFoundError(input.threadId);
    if (isExpired(current[A.ttl], input.now)) throw new ThreadExpiredError(input.threadId);
    if (isBusy(old, input.now)) throw new ThreadBusyError(input.threadId);
    if (input.mode !== "resume" && old.status === "PAUSED_FOR_HUMAN") {
      throw new ThreadPausedError(input.threadId);
    }
    throw (
      resumeRejection(old, input) ??
      new NothingToResumeError(input.threadId, "the thread is not paused at an interrupt")
    );
  }

  releaseLease(input: ReleaseLeaseInput): Promise<boolean> {
    return this.finishRun(input);
  }

  async finishRun(input: FinishRunInput): Promise<boolean> {
    const pk = threadPartitionKey(input.tenantId, input.threadId);
    const fragments: UpdateFragment[] = [
      input.status === undefined
        ? updateFragment({
            remove: ["#status", "#tenant_status", "#next_node"],
            names: {
              "#status": A.status,
              "#tenant_status": A.tenantStatus,
              "#next_node": A.nextNode,
            },
          })
        : statusFragment(input.tenantId, input.status, input.nextNodes.join(",")),
      updateFragment({
        set: ["#updated_at = :now_ms", "#interrupts = :interrupts"],
        names: { "#updated_at": A.updatedAt, "#interrupts": A.interrupts },
        values: { ":now_ms": input.now, ":interrupts": JSON.stringify(input.interrupts) },
      }),
    ];
    if (input.graphId !== undefined) {
      fragments.push(
        updateFragment({
          set: ["#graph = :graph"],
          names: { "#graph": A.graphId },
          values: { ":graph": input.graphId },
        }),
      );
    }
    if (input.keepLease && input.leaseUntil !== undefined) {
      fragments.push(
        updateFragment({
          set: ["#expires = :lease_until"],
          names: { "#expires": A.leaseExpiresAt },
          values: { ":lease_until": input.leaseUntil },
        }),
      );
    }
    if (input.handOff) {
      // The lease stays (until it lapses: a node the leg aborted may still run); the next leg takes it over.
      fragments.push(
        updateFragment({
          set: ["#continuing = :owner"],
          names: { "#continuing": A.continuing },
          values: { ":owner": input.owner },
        }),
      );
    } else {
      fragments.push(
        updateFragment({
          remove: ["#continuing", "#cancel", ...(input.keepLease ? [] : ["#owner", "#expires"])],
          names: {
            "#continuing": A.continuing,
            "#cancel": A.cancelAction,
            ...(input.keepLease ? {} : { "#owner": A.leaseOwner, "#expires": A.leaseExpiresAt }),
          },
        }),
      );
    }
    if (input.forkFrom !== undefined) {
      fragments.push(
        updateFragment({
          set: ["#fork_from = :fork_from"],
          names: { "#fork_from": A.forkFrom },
          values: { ":fork_from": input.forkFrom },
        }),
      );
    }
    const outcome = await this.table.update(
      recordKey(pk),
      renderUpdate(fragments, leaseHeldBy(input.owner)),
    );
    return outcome.applied;
  }

  async enqueueRun(input: EnqueueRunInput): Promise<EnqueueRunResult> {
    const pk = threadPartitionKey(input.tenantId, input.threadId);
    // Read, decide, write if nothing changed meanwhile: the queue and the holder are compared as read.
    for (let attempt = 0; attempt < MAX_QUEUE_ATTEMPTS; attempt += 1) {
      const current = await this.table.get(recordKey(pk));
      if (current && isExpired(current[A.ttl], input.now)) {
        throw new ThreadExpiredError(input.threadId);
      }
      const record = current ? toRecord(current) : undefined;
      if (!record && !input.createIfMissing) throw new ThreadNotFoundError(input.threadId);
      const busy = record !== undefined && isBusy(record, input.now);
      if (input.strategy === "reject" && busy) throw new ThreadBusyError(input.threadId);
      const cancelled: EnqueueRunResult["cancelled"] = [];
      let queue = record?.runQueue ?? [];
      const holder = record && isLeased(record, input.now) ? record.leaseOwner : record?.continuing;
      const cancels = input.strategy === "interrupt" || input.strategy === "rollback";
      if (cancels) {
        for (const runId of queue) cancelled.push({ runId, state: "queued" });
        queue = [];
        if (holder !== undefined) cancelled.push({ runId: holder, state: "running" });
      }
      const fragments: UpdateFragment[] = [
        this.touch(input.tenantId, input.threadId, input.now, newGeneration()),
        updateFragment({
          set: ["#queue = :queue"],
          names: { "#queue": A.runQueue },
          values: { ":queue": [...queue, input.runId] },
        }),
      ];
      if (cancels && holder !== undefined) {
        fragments.push(
          updateFragment({
            set: ["#cancel = :cancel"],
            names: { "#cancel": A.cancelAction },
            values: { ":cancel": input.strategy },
          }),
        );
      }
      const expected = record
        ? allOf(
            recordExists(),
            notExpired(input.now),
            queueUnchanged(record.runQueue),
            unchanged("owner", A.leaseOwner, record.leaseOwner),
            unchanged("continuing", A.continuing, record.continuing),
          )
        : recordAbsent();
      const outcome = await this.table.update(recordKey(pk), renderUpdate(fragments, expected), {
        returnValues: "ALL_NEW",
      });
      if (outcome.applied) {
        this.observe(pk, outcome.attributes);
        return { cancelled, startsNow: queue.length === 0 && holder === undefined };
      }
    }
    // The thread changed under every attempt: runs are being added or taken as fast as this one tries.
    throw new ThreadBusyError(input.threadId);
  }

  async claimRun(input: ClaimRunInput): Promise<ClaimRunOutcome> {
    const pk = threadPartitionKey(input.tenantId, input.threadId);
    const current = await this.table.get(recordKey(pk));
    if (!current || isExpired(current[A.ttl], input.now)) return { kind: "none" };
    const record = toRecord(current);
    let runId: string;
    const fragments: UpdateFragment[] = [
      this.touch(input.tenantId, input.threadId, input.now, newGeneration()),
      statusFragment(input.tenantId, "RUNNING"),
    ];
    const conditions: Expression[] = [recordExists(), notExpired(input.now)];
    if (input.runId !== undefined) {
      // The run's next leg: the thread must still be this run's, and its previous leg's lease must have lapsed.
      if (record.continuing !== input.runId && record.leaseOwner !== input.runId) {
        return { kind: "none" };
      }
      if (isLeased(record, input.now)) return { kind: "wait", until: record.leaseExpiresAt! + 1 };
      runId = input.runId;
      fragments.push(
        updateFragment({
          remove: ["#continuing"],
          names: { "#continuing": A.continuing },
        }),
      );
      conditions.push(
        unchanged("owner", A.leaseOwner, record.leaseOwner),
        unchanged("continuing", A.continuing, record.continuing),
        leaseFree(input.now),
      );
    } else {
      const head = record.runQueue[0];
      if (head === undefined || isLeased(record, input.now) || record.continuing !== undefined) {
        return { kind: "none" };
      }
      runId = head;
      fragments.push(
        updateFragment({
          remove: ["#queue[0]", "#fork_from", "#cancel"],
          names: { "#queue": A.runQueue, "#fork_from": A.forkFrom, "#cancel": A.cancelAction },
        }),
      );
      conditions.push(
        expression("#queue[0] = :head", { "#queue": A.runQueue }, { ":head": head }),
        leaseFree(input.now),
        expression("attribute_not_exists(#continuing)", { "#continuing": A.continuing }),
      );
    }
    fragments.push(
      updateFragment({
        set: ["#owner = :owner", "#expires = :expires"],
        names: { "#owner": A.leaseOwner, "#expires": A.leaseExpiresAt },
        values: { ":owner": runId, ":expires": input.expiresAt },
      }),
    );
    const outcome = await this.table.update(
      recordKey(pk),
      renderUpdate(fragments, allOf(...conditions)),
      { returnValues: "ALL_OLD" },
    );
    // Another claim won the race: it runs the run, and the next one after it.
    if (!outcome.applied) return { kind: "none" };
    const old = outcome.attributes ?? current;
    const previous = toRecord(old);
    // The claim renewed the record: the saver of this run needs no renewal of its own.
    this.remember(pk, String(old[A.generation]), this.expiry.renewedExpiry(input.now));
    return {
      kind: "claimed",
      run: {
        runId,
        previous,
        ...(input.runId === undefined && record.forkFrom !== undefined
          ? { forkFrom: record.forkFrom }
          : {}),
      },
    };
  }

  async renewRunLease(input: RenewRunLeaseInput): Promise<RunLeaseState> {
    const pk = threadPartitionKey(input.tenantId, input.threadId);
    const outcome = await this.table.update(
      recordKey(pk),
      renderUpdate(
        [
          updateFragment({
            set: ["#expires = :expires"],
            names: { "#expires": A.leaseExpiresAt },
            values: { ":expires": input.expiresAt },
          }),
        ],
        leaseHeldBy(input.runId),
      ),
      { returnValues: "ALL_NEW" },
    );
    if (!outcome.applied) return { held: false };
    const record = toRecord(outcome.attributes ?? {});
    return record.cancelAction ? { held: true, cancel: record.cancelAction } : { held: true };
  }

  async cancelRun(input: CancelRunInput): Promise<"running" | "queued" | "absent"> {
    const pk = threadPartitionKey(input.tenantId, input.threadId);
    for (let attempt = 0; attempt < MAX_QUEUE_ATTEMPTS; attempt += 1) {
      const current = await this.table.get(recordKey(pk));
      if (!current) return "absent";
      const record = toRecord(current);
      const position = record.runQueue.indexOf(input.runId);
      let outcome;
      if (position >= 0) {
        outcome = await this.table.update(
          recordKey(pk),
          renderUpdate(
            [
              updateFragment({
                remove: [`#queue[${position}]`],
                names: { "#queue": A.runQueue },
              }),
            ],
            expression(
              `#queue[${position}] = :run`,
              { "#queue": A.runQueue },
              { ":run": input.runId },
            ),
          ),
        );
        if (outcome.applied) return "queued";
      } else if (record.leaseOwner === input.runId || record.continuing === input.runId) {
        outcome = await this.table.update(
          recordKey(pk),
          renderUpdate(
            [
              updateFragment({
                set: ["#cancel = :cancel"],
                names: { "#cancel": A.cancelAction },
                values: { ":cancel": input.action },
              }),
            ],
            allOf(
              unchanged("owner", A.leaseOwner, record.leaseOwner),
              unchanged("continuing", A.continuing, record.continuing),
            ),
          ),
        );
        if (outcome.applied) return "running";
      } else {
        return "absent";
      }
    }
    throw new ThreadBusyError(input.threadId);
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
              set: ["#metadata = :metadata", "#updated = :updated"],
              names: { "#metadata": A.metadata, "#updated": A.updatedAt },
              values: { ":metadata": JSON.stringify(merged), ":updated": input.now },
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
      if (outcome.applied) return toRecord(outcome.attributes ?? {});
      if (attempt >= MAX_QUEUE_ATTEMPTS) throw new ThreadBusyError(input.threadId);
    }
  }

  async lockThread(input: LockThreadInput): Promise<ThreadRecord | undefined> {
    const pk = threadPartitionKey(input.tenantId, input.threadId);
    const outcome = await this.table.update(
      recordKey(pk),
      renderUpdate(
        [
          updateFragment({
            set: ["#owner = :owner", "#expires = :expires"],
            names: { "#owner": A.leaseOwner, "#expires": A.leaseExpiresAt },
            values: { ":owner": input.owner, ":expires": input.expiresAt },
          }),
        ],
        // Like a run's lease: only an existing, unexpired thread that no run holds or waits for.
        allOf(recordExists(), leaseFree(input.now), notExpired(input.now), queueIdle()),
      ),
      { returnValues: "ALL_OLD" },
    );
    if (outcome.applied) return toRecord(outcome.attributes ?? {});
    const current = outcome.current;
    if (!current || isExpired(current[A.ttl], input.now)) return undefined;
    throw new ThreadBusyError(input.threadId);
  }

  async delete(tenantId: string, threadId: string, owner: string): Promise<void> {
    // Usually gone already: the saver's deletion removes the record first. The module grants no DeleteItem, so
    // no conditional delete: the record is removed only while this deletion still holds its lease.
    const pk = threadPartitionKey(tenantId, threadId);
    const item = await this.table.get(recordKey(pk));
    if (item?.[A.leaseOwner] !== owner) return;
    this.lives.delete(pk);
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
    extra?: UpdateFragment,
  ): Promise<ThreadLife> {
    const pk = threadPartitionKey(tenantId, threadId);
    const send = () => {
      const nowMs = this.now();
      const fragments = [this.touch(tenantId, threadId, nowMs, newGeneration())];
      if (extra) fragments.push(extra);
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
