import { randomUUID } from "node:crypto";
import fc from "fast-check";
import type { CancelAction, MultitaskStrategy } from "../../src/shared/runs";
import type {
  ClaimRunOutcome,
  EnqueueRunInput,
  EnqueueRunResult,
  PendingInterrupt,
  ThreadRecord,
  ThreadStatus,
  ThreadStore,
} from "../../src/shared/threads";

/**
 * The run protocol every ThreadStore follows (the rulebook of the thread store's redesign), run against the
 * in-memory store in the unit tier and against DynamoDB's thread records in the integration tier: example-based
 * tests for each rule, a model-based test (random schedules compared step by step with the small pure model
 * below), and concurrent bursts of enqueues.
 *
 * Time is a controlled number passed in every input (`now`, `expiresAt`): it starts at CONTRACT_EPOCH_MS, and a
 * store with a clock of its own (ThreadRecords, for its expiry) should be given that epoch as its clock.
 *
 * Tests marked `// fails on the store before the rulebook` check rules the stores did not follow before the
 * redesign; they are kept whole, not skipped.
 */
export const CONTRACT_EPOCH_MS = Date.UTC(2030, 0, 1);

/** What the rulebook adds to the enqueue input: a resume is checked when the run would start at once. */
export interface ResumeCheck {
  graphId: string;
  interruptIds?: string[];
}
export type SpecEnqueueRunInput = EnqueueRunInput & { resume?: ResumeCheck };
/** What the rulebook adds to a head claim's outcomes: the thread waits on a run that stopped renewing. */
export type SpecClaimRunOutcome = ClaimRunOutcome | { kind: "stalled"; runId: string };
/** What a finish did: applied (the lease was the caller's), and whether runs wait in the queue after it. */
export interface SpecFinishResult {
  applied: boolean;
  waiting: boolean;
}

export interface ThreadStoreContractOptions {
  /** Schedules the model-based test runs. */
  numRuns: number;
  /** Most steps per schedule. */
  maxSteps: number;
  /** Jest timeout of the model-based test, ms. */
  timeoutMs: number;
}

// ------------------------------------------------------------------ the reference model

/** The fields of a thread record the run protocol is about: what the model keeps and every step compares. */
export interface ModelRecord {
  status?: ThreadStatus;
  leaseOwner?: string;
  leaseExpiresAt?: number;
  runQueue: string[];
  cancelAction?: CancelAction;
  continuing?: string;
  nextNodes: string[];
  interrupts: PendingInterrupt[];
  graphId?: string;
}

/** A call's result as data: a value, or the name of the error thrown. */
type Outcome<T> = { value: T } | { error: string };
interface Step<T> {
  record: ModelRecord | undefined;
  outcome: Outcome<T>;
}

export function project(record: ThreadRecord | undefined): ModelRecord | undefined {
  if (!record) return undefined;
  return {
    status: record.status,
    leaseOwner: record.leaseOwner,
    leaseExpiresAt: record.leaseExpiresAt,
    runQueue: [...record.runQueue],
    cancelAction: record.cancelAction,
    continuing: record.continuing,
    nextNodes: [...record.nextNodes],
    interrupts: record.interrupts.map((item) => ({ ...item })),
    graphId: record.graphId,
  };
}

function emptyRecord(): ModelRecord {
  return { runQueue: [], nextNodes: [], interrupts: [] };
}

function clone(record: ModelRecord): ModelRecord {
  return structuredClone(record);
}

export function leased(r: ModelRecord, now: number): boolean {
  return r.leaseOwner !== undefined && r.leaseExpiresAt !== undefined && r.leaseExpiresAt >= now;
}

export function busy(r: ModelRecord, now: number): boolean {
  return leased(r, now) || r.continuing !== undefined || r.runQueue.length > 0;
}

export function holder(r: ModelRecord, now: number): string | undefined {
  return leased(r, now) ? r.leaseOwner : r.continuing;
}

/** The run the thread waits on although it stopped renewing its lease, or undefined. */
export function stalledRun(r: ModelRecord, now: number): string | undefined {
  if (leased(r, now)) return undefined;
  if (r.continuing !== undefined) return r.continuing;
  // A direct run's or a lock's lapsed lease (owner "~…") is no run to recover: the thread is simply free.
  return r.status === "RUNNING" && !r.leaseOwner?.startsWith("~") ? r.leaseOwner : undefined;
}

/** Why a resume may not go ahead on `r`, or undefined (the shared resumeRejection's rule, on the model). */
function resumeError(
  r: ModelRecord | undefined,
  graphId: string,
  interruptIds: string[] = [],
): string | undefined {
  if (r?.status !== "PAUSED_FOR_HUMAN") return "NothingToResumeError";
  if (r.graphId !== undefined && r.graphId !== graphId) return "AssistantMismatchError";
  const pending = new Set(r.interrupts.map((item) => item.id));
  return interruptIds.every((id) => pending.has(id)) ? undefined : "NothingToResumeError";
}

interface EnqueueCall {
  runId: string;
  strategy: MultitaskStrategy;
  createIfMissing: boolean;
  resume?: ResumeCheck;
  rejectPaused?: boolean;
  claimUntil?: number;
  now: number;
}

export const model = {
  enqueue(before: ModelRecord | undefined, input: EnqueueCall): Step<EnqueueRunResult> {
    const unchanged = (error: string) => ({ record: before, outcome: { error } });
    if (!before && !input.createIfMissing) return unchanged("ThreadNotFoundError");
    const r = before ? clone(before) : emptyRecord();
    const isBusy = busy(r, input.now);
    const stalled = stalledRun(r, input.now);
    if (input.strategy === "reject" && (isBusy || stalled !== undefined)) {
      return unchanged("ThreadBusyError");
    }
    // Choice (the rulebook is silent): a resume of a missing thread is checked like any idle thread's, so it
    // fails with NothingToResumeError and the thread is not created.
    if (input.resume && !isBusy) {
      const error = resumeError(before, input.resume.graphId, input.resume.interruptIds);
      if (error) return unchanged(error);
    }
    if (!input.resume && input.rejectPaused && before?.status === "PAUSED_FOR_HUMAN") {
      return unchanged("ThreadPausedError");
    }
    const cancelled: EnqueueRunResult["cancelled"] = [];
    const current = holder(r, input.now);
    if (input.strategy === "interrupt" || input.strategy === "rollback") {
      for (const runId of r.runQueue) cancelled.push({ runId, state: "queued" });
      r.runQueue = [];
      if (current !== undefined) {
        cancelled.push({ runId: current, state: "running" });
        r.cancelAction = input.strategy;
      }
    }
    const startsNow = r.runQueue.length === 0 && current === undefined;
    if (startsNow && input.claimUntil !== undefined && stalled === undefined) {
      // Taken in place: the run holds the thread at once and never waits in the queue.
      const previous = before ?? clone(r);
      r.leaseOwner = input.runId;
      r.leaseExpiresAt = input.claimUntil;
      r.status = "RUNNING";
      delete r.cancelAction;
      return {
        record: r,
        outcome: {
          value: {
            cancelled,
            startsNow,
            claimed: { runId: input.runId, previous: previous as unknown as ThreadRecord },
          },
        },
      };
    }
    r.runQueue.push(input.runId);
    return { record: r, outcome: { value: { cancelled, startsNow } } };
  },

  claim(
    before: ModelRecord | undefined,
    input: { runId?: string; now: number; expiresAt: number },
  ): Step<SpecClaimRunOutcome> {
    const none = { record: before, outcome: { value: { kind: "none" as const } } };
    if (!before) return none;
    const r = clone(before);
    const take = (runId: string): Step<SpecClaimRunOutcome> => {
      r.leaseOwner = runId;
      r.leaseExpiresAt = input.expiresAt;
      r.status = "RUNNING";
      return {
        record: r,
        outcome: { value: { kind: "claimed", run: { runId, previous: before as ThreadRecord } } },
      };
    };
    if (input.runId === undefined) {
      if (leased(r, input.now)) return none;
      const stalled = stalledRun(r, input.now);
      if (stalled !== undefined) {
        return { record: before, outcome: { value: { kind: "stalled", runId: stalled } } };
      }
      const head = r.runQueue.shift();
      if (head === undefined) return none;
      delete r.cancelAction;
      return take(head);
    }
    if (r.continuing === input.runId) {
      if (leased(r, input.now)) {
        return {
          record: before,
          outcome: { value: { kind: "wait", until: r.leaseExpiresAt! + 1 } },
        };
      }
      delete r.continuing;
      return take(input.runId);
    }
    if (r.leaseOwner === input.runId && !leased(r, input.now) && r.status === "RUNNING") {
      return take(input.runId);
    }
    return none;
  },

  renew(
    before: ModelRecord | undefined,
    input: { runId: string; expiresAt: number },
  ): Step<{ held: boolean; cancel?: CancelAction }> {
    if (before?.leaseOwner !== input.runId)
      return { record: before, outcome: { value: { held: false } } };
    const r = clone(before);
    r.leaseExpiresAt = input.expiresAt;
    const value = r.cancelAction ? { held: true, cancel: r.cancelAction } : { held: true };
    return { record: r, outcome: { value } };
  },

  cancel(
    before: ModelRecord | undefined,
    input: { runId: string; action: CancelAction },
  ): Step<"running" | "queued" | "absent"> {
    if (!before) return { record: before, outcome: { value: "absent" } };
    const r = clone(before);
    const position = r.runQueue.indexOf(input.runId);
    if (position >= 0) {
      r.runQueue.splice(position, 1);
      return { record: r, outcome: { value: "queued" } };
    }
    if (r.leaseOwner === input.runId || r.continuing === input.runId) {
      r.cancelAction = input.action;
      return { record: r, outcome: { value: "running" } };
    }
    return { record: before, outcome: { value: "absent" } };
  },

  finish(before: ModelRecord | undefined, input: FinishCall): Step<SpecFinishResult> {
    if (before?.leaseOwner === undefined || before.leaseOwner !== input.owner) {
      return { record: before, outcome: { value: { applied: false, waiting: false } } };
    }
    const r = clone(before);
    if (input.status === undefined) delete r.status;
    else r.status = input.status;
    r.nextNodes = [...input.nextNodes];
    r.interrupts = input.interrupts.map((item) => ({ ...item }));
    if (input.graphId !== undefined) r.graphId = input.graphId;
    if (input.keepLease && input.leaseUntil !== undefined) r.leaseExpiresAt = input.leaseUntil;
    // Runs waiting after the finish: the one who finished takes the next.
    const value = { applied: true, waiting: r.runQueue.length > 0 };
    if (input.handOff) {
      r.continuing = input.owner;
      return { record: r, outcome: { value } };
    }
    delete r.continuing;
    delete r.cancelAction;
    if (!input.keepLease) {
      delete r.leaseOwner;
      delete r.leaseExpiresAt;
    }
    return { record: r, outcome: { value } };
  },

  lock(
    before: ModelRecord | undefined,
    input: { owner: string; now: number; expiresAt: number },
  ): Step<ModelRecord | undefined> {
    if (!before) return { record: before, outcome: { value: undefined } };
    if (busy(before, input.now) || stalledRun(before, input.now) !== undefined) {
      return { record: before, outcome: { error: "ThreadBusyError" } };
    }
    const r = clone(before);
    r.leaseOwner = input.owner;
    r.leaseExpiresAt = input.expiresAt;
    return { record: r, outcome: { value: before } };
  },
};

interface FinishCall {
  owner: string;
  status: ThreadStatus | undefined;
  nextNodes: string[];
  interrupts: PendingInterrupt[];
  graphId?: string;
  handOff?: boolean;
  keepLease?: boolean;
  leaseUntil?: number;
}

// ------------------------------------------------------------------ schedules

type Command =
  | {
      kind: "enqueue";
      strategy: MultitaskStrategy;
      createIfMissing: boolean;
      resume: ResumeCheck | undefined;
      rejectPaused: boolean;
      /** Taken in place (the caller runs it) with a lease this long, when it may start at once. */
      inPlace: number | undefined;
    }
  | { kind: "claimHead"; lease: number }
  | { kind: "claimRun"; pick: number; lease: number }
  | { kind: "renew"; pick: number; lease: number }
  | { kind: "cancel"; pick: number; action: CancelAction }
  | {
      kind: "finish";
      pick: number;
      how: "done" | "paused" | "handOff" | "keepLease";
      status: ThreadStatus | undefined;
      interruptIds: string[];
      graphId: string | undefined;
      leaseUntil: number | undefined;
    }
  | { kind: "advance"; ms: number }
  | { kind: "crash" }
  | { kind: "lock"; lease: number };

const GRAPHS = ["g1", "g2"];
const INTERRUPT_IDS = ["i1", "i2"];
// Lease lengths and clock steps share values, so a lease is often read exactly at its last live instant.
const leaseArb = fc.constantFrom(1, 5, 10, 30);
// Mostly the holder (the first candidate), else any run seen.
const pickArb = fc.oneof({ weight: 2, arbitrary: fc.constant(0) }, fc.nat({ max: 7 }));
const graphArb = fc.constantFrom(...GRAPHS);
const idsArb = fc.subarray(INTERRUPT_IDS);

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("enqueue" as const),
      strategy: fc.constantFrom<MultitaskStrategy>("enqueue", "reject", "interrupt", "rollback"),
      createIfMissing: fc.boolean(),
      resume: fc.option(
        fc.record({ graphId: graphArb, interruptIds: fc.option(idsArb, { nil: undefined }) }),
        { nil: undefined, freq: 3 },
      ),
      rejectPaused: fc.boolean(),
      inPlace: fc.option(leaseArb, { nil: undefined, freq: 2 }),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("claimHead" as const), lease: leaseArb }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("claimRun" as const),
      pick: pickArb,
      lease: leaseArb,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("renew" as const), pick: pickArb, lease: leaseArb }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("cancel" as const),
      pick: pickArb,
      action: fc.constantFrom<CancelAction>("interrupt", "rollback"),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("finish" as const),
      pick: pickArb,
      how: fc.constantFrom(
        "done" as const,
        "paused" as const,
        "handOff" as const,
        "keepLease" as const,
      ),
      status: fc.constantFrom<ThreadStatus | undefined>(
        "COMPLETED",
        "ERROR",
        "RUNNING",
        "PAUSED_FOR_HUMAN",
        undefined,
      ),
      interruptIds: idsArb,
      graphId: fc.option(graphArb, { nil: undefined }),
      leaseUntil: fc.option(leaseArb, { nil: undefined }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("advance" as const),
      ms: fc.constantFrom(1, 5, 10, 30),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "crash" as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("lock" as const), lease: leaseArb }) },
);

/** The finish input a `finish` command stands for (statuses as the runtime writes them for each ending). */
function finishInput(command: Extract<Command, { kind: "finish" }>, owner: string, now: number) {
  const status: ThreadStatus | undefined =
    command.how === "paused"
      ? "PAUSED_FOR_HUMAN"
      : command.how === "done" && command.status === "RUNNING"
        ? "COMPLETED"
        : command.status;
  const paused = status === "PAUSED_FOR_HUMAN";
  return {
    owner,
    now,
    status,
    nextNodes: paused ? ["review"] : [],
    interrupts: paused ? command.interruptIds.map((id) => ({ id, value: { question: id } })) : [],
    ...(command.graphId !== undefined ? { graphId: command.graphId } : {}),
    ...(command.how === "handOff" ? { handOff: true } : {}),
    ...(command.how === "keepLease" ||
    (command.how === "handOff" && command.leaseUntil !== undefined)
      ? { keepLease: true }
      : {}),
    ...(command.leaseUntil !== undefined && command.how !== "done" && command.how !== "paused"
      ? { leaseUntil: now + command.leaseUntil }
      : {}),
  };
}

async function outcomeOf<T>(call: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { value: await call() };
  } catch (error) {
    return { error: error instanceof Error ? error.name : String(error) };
  }
}

function projectClaim(outcome: Outcome<SpecClaimRunOutcome>): unknown {
  if ("error" in outcome || outcome.value.kind !== "claimed") return outcome;
  const { runId, previous } = outcome.value.run;
  return { value: { kind: "claimed", run: { runId, previous: project(previous) } } };
}

function projectEnqueue(outcome: Outcome<EnqueueRunResult>): unknown {
  if ("error" in outcome || !outcome.value.claimed) return outcome;
  const { runId, previous } = outcome.value.claimed;
  const asModel = "threadId" in previous ? project(previous) : previous;
  return { value: { ...outcome.value, claimed: { runId, previous: asModel } } };
}

function projectRecordOutcome(outcome: Outcome<ThreadRecord | ModelRecord | undefined>): unknown {
  if ("error" in outcome) return outcome;
  const value = outcome.value;
  return { value: value && "threadId" in value ? project(value) : value };
}

/** Ids a step may act on: the holder first (where shrinking leads), then waiting runs, then any seen. */
function candidates(r: ModelRecord | undefined, known: string[], excluded: Set<string>): string[] {
  const ids = [r?.leaseOwner, r?.continuing, ...(r?.runQueue ?? []), ...known];
  return [...new Set(ids.filter((id): id is string => id !== undefined && !excluded.has(id)))];
}

// ------------------------------------------------------------------ the suite

export function describeThreadStoreContract(
  name: string,
  open: () => ThreadStore,
  tenantPrefix: string,
  options: ThreadStoreContractOptions,
): void {
  describe(`${name}: the ThreadStore run protocol`, () => {
    const nonce = randomUUID().slice(0, 8);
    const tenantId = `${tenantPrefix}-${nonce}`;
    let serial = 0;
    const T = CONTRACT_EPOCH_MS;
    let store: ThreadStore;

    beforeEach(() => {
      store = open();
    });

    function freshThread(): string {
      serial += 1;
      return `thread-${nonce}-${serial}`;
    }

    const enqueue = (threadId: string, input: Partial<SpecEnqueueRunInput> & { runId: string }) =>
      store.enqueueRun({
        tenantId,
        threadId,
        strategy: "enqueue",
        now: T,
        createIfMissing: true,
        ...input,
      } as SpecEnqueueRunInput);
    const claim = async (threadId: string, now: number, expiresAt: number, runId?: string) =>
      (await store.claimRun({
        tenantId,
        threadId,
        now,
        expiresAt,
        ...(runId !== undefined ? { runId } : {}),
      })) as SpecClaimRunOutcome;
    const finish = (threadId: string, owner: string, now: number, extra: object = {}) =>
      store.finishRun({
        tenantId,
        threadId,
        owner,
        now,
        status: "COMPLETED",
        nextNodes: [],
        interrupts: [],
        ...extra,
      });
    const read = async (threadId: string) => project(await store.get(tenantId, threadId));

    /** A thread paused at interrupt i1 in graph g1 by run `p`, its lease released. */
    async function pausedThread(): Promise<string> {
      const threadId = freshThread();
      await enqueue(threadId, { runId: "p" });
      await claim(threadId, T, T + 10);
      await finish(threadId, "p", T + 1, {
        status: "PAUSED_FOR_HUMAN",
        nextNodes: ["review"],
        interrupts: [{ id: "i1", value: "ok?" }],
        graphId: "g1",
      });
      return threadId;
    }

    /** A thread whose run `a` holds a lease until T + 10. */
    async function heldThread(): Promise<string> {
      const threadId = freshThread();
      await enqueue(threadId, { runId: "a" });
      await claim(threadId, T, T + 10);
      return threadId;
    }

    /** A thread whose run `a` handed off to its next leg, its lease live until T + 10. */
    async function continuingThread(): Promise<string> {
      const threadId = await heldThread();
      await finish(threadId, "a", T + 1, { status: "RUNNING", handOff: true });
      return threadId;
    }

    describe("enqueueRun", () => {
      it("refuses a missing thread it may not create, writing nothing", async () => {
        const threadId = freshThread();
        await expect(
          enqueue(threadId, { runId: "a", createIfMissing: false }),
        ).rejects.toMatchObject({ name: "ThreadNotFoundError" });
        expect(await store.get(tenantId, threadId)).toBeUndefined();
      });

      it("creates a missing thread it may create, with an empty status, and the run starts now", async () => {
        const threadId = freshThread();
        expect(await enqueue(threadId, { runId: "a" })).toEqual({ cancelled: [], startsNow: true });
        expect(await read(threadId)).toEqual({ runQueue: ["a"], nextNodes: [], interrupts: [] });
      });

      it("appends with `enqueue`: the run waits behind the queue and the holder", async () => {
        const threadId = await heldThread();
        expect(await enqueue(threadId, { runId: "b" })).toEqual({
          cancelled: [],
          startsNow: false,
        });
        expect(await enqueue(threadId, { runId: "c" })).toEqual({
          cancelled: [],
          startsNow: false,
        });
        expect((await read(threadId))?.runQueue).toEqual(["b", "c"]);
      });

      it.each([
        ["a queued run", "queued"],
        ["a live lease", "held"],
        ["a continuing run", "continuing"],
      ])("refuses `reject` on a thread busy with %s, writing nothing", async (_case, kind) => {
        const threadId =
          kind === "queued"
            ? freshThread()
            : kind === "held"
              ? await heldThread()
              : await continuingThread();
        if (kind === "queued") await enqueue(threadId, { runId: "a" });
        const before = await read(threadId);
        await expect(
          enqueue(threadId, { runId: "x", strategy: "reject", now: T + 2 }),
        ).rejects.toMatchObject({ name: "ThreadBusyError" });
        expect(await read(threadId)).toEqual(before);
      });

      it.each(["interrupt", "rollback"] as const)(
        "with `%s` cancels the queued runs in order, then the holder, and marks the holder",
        async (strategy) => {
          const threadId = await heldThread();
          await enqueue(threadId, { runId: "b" });
          await enqueue(threadId, { runId: "c" });
          expect(await enqueue(threadId, { runId: "d", strategy, now: T + 2 })).toEqual({
            cancelled: [
              { runId: "b", state: "queued" },
              { runId: "c", state: "queued" },
              { runId: "a", state: "running" },
            ],
            startsNow: false,
          });
          const after = await read(threadId);
          expect(after?.runQueue).toEqual(["d"]);
          expect(after?.cancelAction).toBe(strategy);
        },
      );

      it("with `interrupt` and no holder, replaces the queue, starts now and marks nothing", async () => {
        const threadId = freshThread();
        await enqueue(threadId, { runId: "a" });
        expect(await enqueue(threadId, { runId: "b", strategy: "interrupt" })).toEqual({
          cancelled: [{ runId: "a", state: "queued" }],
          startsNow: true,
        });
        const after = await read(threadId);
        expect(after?.runQueue).toEqual(["b"]);
        expect(after?.cancelAction).toBeUndefined();
      });

      it("a lapsed lease is no holder: `interrupt` cancels nothing running", async () => {
        const threadId = freshThread();
        await enqueue(threadId, { runId: "a" });
        await claim(threadId, T, T + 10);
        await finish(threadId, "a", T + 1, { keepLease: true, leaseUntil: T + 5 });
        expect(await enqueue(threadId, { runId: "b", strategy: "interrupt", now: T + 6 })).toEqual({
          cancelled: [],
          startsNow: true,
        });
      });

      it("queues a resume of a thread paused at the named interrupts in the same graph", async () => {
        const threadId = await pausedThread();
        const result = await enqueue(threadId, {
          runId: "r",
          now: T + 2,
          resume: { graphId: "g1", interruptIds: ["i1"] },
        });
        expect(result).toEqual({ cancelled: [], startsNow: true });
        expect((await read(threadId))?.runQueue).toEqual(["r"]);
      });

      // fails on the store before the rulebook
      it.each([
        ["a thread that is not paused", "idle", { graphId: "g1" }, "NothingToResumeError"],
        ["another graph", "paused", { graphId: "g2" }, "AssistantMismatchError"],
        [
          "an interrupt that is not pending",
          "paused",
          { graphId: "g1", interruptIds: ["i1", "i2"] },
          "NothingToResumeError",
        ],
        ["a missing thread", "missing", { graphId: "g1" }, "NothingToResumeError"],
      ])("refuses a resume of %s, writing nothing", async (_case, kind, resume, error) => {
        let threadId = freshThread();
        if (kind === "paused") threadId = await pausedThread();
        if (kind === "idle") {
          await enqueue(threadId, { runId: "p" });
          await claim(threadId, T, T + 10);
          await finish(threadId, "p", T + 1, { graphId: "g1" });
        }
        const before = await read(threadId);
        await expect(enqueue(threadId, { runId: "r", now: T + 2, resume })).rejects.toMatchObject({
          name: error,
        });
        expect(await read(threadId)).toEqual(before);
      });

      it("skips the resume check on a busy thread: the run waits its turn", async () => {
        const threadId = await heldThread();
        expect(
          await enqueue(threadId, {
            runId: "r",
            now: T + 2,
            resume: { graphId: "g2", interruptIds: ["zz"] },
          }),
        ).toEqual({ cancelled: [], startsNow: false });
        expect((await read(threadId))?.runQueue).toEqual(["r"]);
      });

      // fails on the store before the rulebook (DynamoDB: conditional writes give up after a few attempts)
      it.each([["enqueue"], ["interrupt"], ["rollback"]] as const)(
        "takes a burst of 8 concurrent `%s` calls without ThreadBusyError, each run queued exactly once",
        async (strategy) => {
          const threadId = freshThread();
          await enqueue(threadId, { runId: "first" });
          const runs = Array.from({ length: 8 }, (_, index) => `burst-${index}`);
          const settled = await Promise.allSettled(
            runs.map((runId) => enqueue(threadId, { runId, strategy, now: T + 1 })),
          );
          const refused = settled.filter((result) => result.status === "rejected");
          expect(refused.map((result) => (result.reason as Error).name)).toEqual([]);
          const results = settled.map(
            (result) => (result as PromiseFulfilledResult<EnqueueRunResult>).value,
          );
          const queue = (await read(threadId))?.runQueue ?? [];
          if (strategy === "enqueue") {
            expect(queue[0]).toBe("first");
            expect([...queue].sort()).toEqual(["first", ...runs].sort());
            expect(
              results.every((result) => result.cancelled.length === 0 && !result.startsNow),
            ).toBe(true);
          } else {
            // Each run is either the one left waiting or cancelled, while queued, by exactly one later call.
            const cancelled = results.flatMap((result) => result.cancelled);
            expect(cancelled.every((item) => item.state === "queued")).toBe(true);
            expect(queue).toHaveLength(1);
            expect([...queue, ...cancelled.map((item) => item.runId)].sort()).toEqual(
              ["first", ...runs].sort(),
            );
          }
        },
      );
    });

    describe("claimRun at the head of the queue", () => {
      it("answers none for a missing thread, an empty queue and a live lease", async () => {
        expect(await claim(freshThread(), T, T + 10)).toEqual({ kind: "none" });
        const idle = freshThread();
        await store.create({ tenantId, threadId: idle, metadata: {}, now: T, ifExists: "raise" });
        expect(await claim(idle, T, T + 10)).toEqual({ kind: "none" });
        const held = await heldThread();
        await enqueue(held, { runId: "b" });
        expect(await claim(held, T + 10, T + 20)).toEqual({ kind: "none" });
      });

      it("takes the head: lease, RUNNING, the cancel mark removed, and the record as it was", async () => {
        const threadId = await heldThread();
        await enqueue(threadId, { runId: "b" });
        await enqueue(threadId, { runId: "c" });
        await store.cancelRun({ tenantId, threadId, runId: "a", action: "rollback" });
        await finish(threadId, "a", T + 2, { keepLease: true, leaseUntil: T + 3 });
        await store.cancelRun({ tenantId, threadId, runId: "a", action: "interrupt" });
        const before = await read(threadId);
        const outcome = await claim(threadId, T + 4, T + 20);
        expect(outcome.kind).toBe("claimed");
        if (outcome.kind !== "claimed") return;
        expect(outcome.run.runId).toBe("b");
        expect(project(outcome.run.previous)).toEqual(before);
        expect(await read(threadId)).toEqual({
          ...before,
          status: "RUNNING",
          leaseOwner: "b",
          leaseExpiresAt: T + 20,
          runQueue: ["c"],
          cancelAction: undefined,
        });
      });

      // fails on the store before the rulebook (ThreadRecords: its RUNNING status write drops the next nodes)
      it("leaves the next nodes and interrupts as they were", async () => {
        const threadId = await pausedThread();
        await enqueue(threadId, { runId: "b", now: T + 2 });
        const outcome = await claim(threadId, T + 2, T + 20);
        expect(outcome.kind).toBe("claimed");
        expect(await read(threadId)).toMatchObject({
          nextNodes: ["review"],
          interrupts: [{ id: "i1", value: "ok?" }],
        });
      });

      // fails on the store before the rulebook
      it("answers stalled, writing nothing, when a continuing run's lease lapsed", async () => {
        const threadId = await continuingThread();
        await enqueue(threadId, { runId: "b", now: T + 2 });
        const before = await read(threadId);
        expect(await claim(threadId, T + 11, T + 30)).toEqual({ kind: "stalled", runId: "a" });
        expect(await read(threadId)).toEqual(before);
      });

      // fails on the store before the rulebook
      it("answers stalled, writing nothing, when a RUNNING run stopped renewing its lease", async () => {
        const threadId = await heldThread();
        await enqueue(threadId, { runId: "b", now: T + 2 });
        const before = await read(threadId);
        expect(await claim(threadId, T + 11, T + 30)).toEqual({ kind: "stalled", runId: "a" });
        expect(await read(threadId)).toEqual(before);
      });

      it("takes the head once a kept lease of a finished run lapsed (the thread is not RUNNING)", async () => {
        const threadId = await heldThread();
        await enqueue(threadId, { runId: "b" });
        await finish(threadId, "a", T + 2, { keepLease: true, leaseUntil: T + 5 });
        expect(await claim(threadId, T + 5, T + 30)).toEqual({ kind: "none" });
        const outcome = await claim(threadId, T + 6, T + 30);
        expect(outcome.kind === "claimed" && outcome.run.runId).toBe("b");
      });
    });

    describe("claimRun of a given run", () => {
      it("waits while the continuing run's previous leg holds the lease", async () => {
        const threadId = await continuingThread();
        expect(await claim(threadId, T + 10, T + 30, "a")).toEqual({ kind: "wait", until: T + 11 });
      });

      it("takes a continuing run's next leg once the lease lapsed, keeping the cancel mark", async () => {
        const threadId = await continuingThread();
        await store.cancelRun({ tenantId, threadId, runId: "a", action: "interrupt" });
        const before = await read(threadId);
        const outcome = await claim(threadId, T + 11, T + 30, "a");
        expect(outcome.kind === "claimed" && outcome.run.runId).toBe("a");
        expect(await read(threadId)).toEqual({
          ...before,
          status: "RUNNING",
          leaseOwner: "a",
          leaseExpiresAt: T + 30,
          continuing: undefined,
          cancelAction: "interrupt",
        });
      });

      it("takes over a RUNNING run whose lease lapsed", async () => {
        const threadId = await heldThread();
        const outcome = await claim(threadId, T + 11, T + 30, "a");
        expect(outcome.kind === "claimed" && outcome.run.runId).toBe("a");
        expect((await read(threadId))?.leaseExpiresAt).toBe(T + 30);
      });

      // fails on the store before the rulebook
      it("answers none for a run actively holding a live lease: no run is claimed twice", async () => {
        const threadId = await heldThread();
        const before = await read(threadId);
        expect(await claim(threadId, T + 5, T + 30, "a")).toEqual({ kind: "none" });
        expect(await read(threadId)).toEqual(before);
      });

      // fails on the store before the rulebook
      it("answers none for a finished run whose kept lease lapsed", async () => {
        const threadId = await heldThread();
        await finish(threadId, "a", T + 2, { keepLease: true, leaseUntil: T + 5 });
        const before = await read(threadId);
        expect(await claim(threadId, T + 6, T + 30, "a")).toEqual({ kind: "none" });
        expect(await read(threadId)).toEqual(before);
      });

      it("answers none for a run that neither holds nor continues on the thread", async () => {
        const threadId = await heldThread();
        await enqueue(threadId, { runId: "b" });
        expect(await claim(threadId, T + 11, T + 30, "b")).toEqual({ kind: "none" });
        expect(await claim(freshThread(), T, T + 30, "b")).toEqual({ kind: "none" });
      });
    });

    describe("renewRunLease", () => {
      it("extends the holder's lease and tells it to stop when asked", async () => {
        const threadId = await heldThread();
        const renew = (runId: string, expiresAt: number) =>
          store.renewRunLease({ tenantId, threadId, runId, expiresAt });
        expect(await renew("a", T + 40)).toEqual({ held: true });
        await store.cancelRun({ tenantId, threadId, runId: "a", action: "rollback" });
        expect(await renew("a", T + 50)).toEqual({ held: true, cancel: "rollback" });
        expect((await read(threadId))?.leaseExpiresAt).toBe(T + 50);
        const before = await read(threadId);
        expect(await renew("b", T + 60)).toEqual({ held: false });
        expect(await read(threadId)).toEqual(before);
        expect(
          await store.renewRunLease({
            tenantId,
            threadId: freshThread(),
            runId: "a",
            expiresAt: T,
          }),
        ).toEqual({ held: false });
      });
    });

    describe("cancelRun", () => {
      it("removes a queued run, marks the holder and the continuing run, and knows no other", async () => {
        const threadId = await heldThread();
        await enqueue(threadId, { runId: "b" });
        await enqueue(threadId, { runId: "c" });
        const cancel = (runId: string, action: CancelAction = "interrupt") =>
          store.cancelRun({ tenantId, threadId, runId, action });
        expect(await cancel("b")).toBe("queued");
        expect((await read(threadId))?.runQueue).toEqual(["c"]);
        expect(await cancel("a", "rollback")).toBe("running");
        expect((await read(threadId))?.cancelAction).toBe("rollback");
        expect(await cancel("zz")).toBe("absent");
        const continuing = await continuingThread();
        expect(
          await store.cancelRun({
            tenantId,
            threadId: continuing,
            runId: "a",
            action: "interrupt",
          }),
        ).toBe("running");
        expect(
          await store.cancelRun({
            tenantId,
            threadId: freshThread(),
            runId: "a",
            action: "interrupt",
          }),
        ).toBe("absent");
      });
    });

    describe("finishRun", () => {
      it("refuses a run that does not hold the lease, writing nothing", async () => {
        const threadId = await heldThread();
        const before = await read(threadId);
        expect(await finish(threadId, "b", T + 1)).toEqual({ applied: false, waiting: false });
        expect(await read(threadId)).toEqual(before);
        expect(await finish(freshThread(), "a", T + 1)).toEqual({
          applied: false,
          waiting: false,
        });
      });

      it("writes the outcome and frees the thread", async () => {
        const threadId = await heldThread();
        await store.cancelRun({ tenantId, threadId, runId: "a", action: "interrupt" });
        expect(
          await finish(threadId, "a", T + 1, {
            status: "PAUSED_FOR_HUMAN",
            nextNodes: ["review"],
            interrupts: [{ id: "i1", value: { q: 1 } }],
            graphId: "g2",
          }),
        ).toMatchObject({ applied: true });
        expect(await read(threadId)).toEqual({
          status: "PAUSED_FOR_HUMAN",
          runQueue: [],
          nextNodes: ["review"],
          interrupts: [{ id: "i1", value: { q: 1 } }],
          graphId: "g2",
        });
      });

      it("removes the status when none is given and keeps the graph when none is given", async () => {
        const threadId = await pausedThread();
        await enqueue(threadId, { runId: "b", now: T + 2 });
        await claim(threadId, T + 2, T + 10);
        expect(await finish(threadId, "b", T + 3, { status: undefined })).toMatchObject({
          applied: true,
        });
        expect(await read(threadId)).toEqual({
          runQueue: [],
          nextNodes: [],
          interrupts: [],
          graphId: "g1",
        });
      });

      it("hands off to the next leg: the lease, its expiry and the cancel mark stay", async () => {
        const threadId = await heldThread();
        await store.cancelRun({ tenantId, threadId, runId: "a", action: "rollback" });
        expect(
          await finish(threadId, "a", T + 1, {
            status: "RUNNING",
            handOff: true,
            keepLease: true,
            leaseUntil: T + 20,
          }),
        ).toMatchObject({ applied: true });
        expect(await read(threadId)).toEqual({
          status: "RUNNING",
          leaseOwner: "a",
          leaseExpiresAt: T + 20,
          continuing: "a",
          cancelAction: "rollback",
          runQueue: [],
          nextNodes: [],
          interrupts: [],
        });
      });

      it("keeps the lease until leaseUntil, clearing the cancel mark and the continuing run", async () => {
        const threadId = await continuingThread();
        await claim(threadId, T + 11, T + 30, "a");
        await store.cancelRun({ tenantId, threadId, runId: "a", action: "interrupt" });
        expect(
          await finish(threadId, "a", T + 12, {
            status: "ERROR",
            keepLease: true,
            leaseUntil: T + 40,
          }),
        ).toMatchObject({ applied: true });
        expect(await read(threadId)).toEqual({
          status: "ERROR",
          leaseOwner: "a",
          leaseExpiresAt: T + 40,
          runQueue: [],
          nextNodes: [],
          interrupts: [],
        });
      });
    });

    describe("unsettledThreads (the recovery sweep's list)", () => {
      const listed = async (threadId: string) => {
        for await (const thread of store.unsettledThreads()) {
          if (thread.tenantId === tenantId && thread.threadId === threadId) return true;
        }
        return false;
      };

      it("lists a thread while a run waits for, holds or continues on it, and not once it is settled", async () => {
        const threadId = freshThread();
        await store.create({ tenantId, threadId, metadata: {}, now: T, ifExists: "raise" });
        expect(await listed(threadId)).toBe(false);
        await enqueue(threadId, { runId: "a", now: T });
        expect(await listed(threadId)).toBe(true);
        await claim(threadId, T + 1, T + 10);
        expect(await listed(threadId)).toBe(true);
        await finish(threadId, "a", T + 2, { handOff: true, status: "RUNNING" });
        expect(await listed(threadId)).toBe(true);
        await claim(threadId, T + 3, T + 10, "a");
        await finish(threadId, "a", T + 4);
        expect(await listed(threadId)).toBe(false);
        // A lock is no run: its thread is not listed.
        await store.lockThread({
          tenantId,
          threadId,
          owner: "~lock",
          expiresAt: T + 20,
          now: T + 5,
        });
        expect(await listed(threadId)).toBe(false);
      });
    });

    describe("runs taken in place, and lockThread", () => {
      const inPlace = (threadId: string, runId: string, now: number, extra = {}) =>
        store.enqueueRun({
          tenantId,
          threadId,
          runId,
          strategy: "reject",
          now,
          createIfMissing: true,
          claimUntil: now + 10,
          ...extra,
        });
      const lock = (threadId: string, now: number, owner = "lock") =>
        store.lockThread({ tenantId, threadId, owner, expiresAt: now + 10, now });

      it("a lock's lapsed lease (its process died) leaves the thread free: no run to recover", async () => {
        const threadId = freshThread();
        await store.create({ tenantId, threadId, metadata: {}, now: T, ifExists: "raise" });
        await lock(threadId, T, "~crashed");
        expect(await claim(threadId, T + 20, T + 30)).toEqual({ kind: "none" });
        expect(project(await lock(threadId, T + 20, "~next"))).toMatchObject({
          leaseOwner: "~crashed",
        });
        expect(await read(threadId)).toMatchObject({ leaseOwner: "~next" });
      });

      it("a run taken in place holds the thread at once, outside the queue; others are refused", async () => {
        const threadId = freshThread();
        const taken = await inPlace(threadId, "a", T);
        expect(taken.startsNow).toBe(true);
        expect(taken.claimed?.runId).toBe("a");
        expect(await read(threadId)).toMatchObject({
          status: "RUNNING",
          leaseOwner: "a",
          leaseExpiresAt: T + 10,
          runQueue: [],
        });
        await expect(inPlace(threadId, "b", T + 1)).rejects.toMatchObject({
          name: "ThreadBusyError",
        });
        await expect(lock(threadId, T + 1)).rejects.toMatchObject({ name: "ThreadBusyError" });
        // A run that may wait queues behind it, untaken.
        const queued = await inPlace(threadId, "c", T + 2, { strategy: "enqueue" });
        expect(queued).toEqual({ cancelled: [], startsNow: false });
        expect(await read(threadId)).toMatchObject({ leaseOwner: "a", runQueue: ["c"] });
        const idle = freshThread();
        await store.create({ tenantId, threadId: idle, metadata: {}, now: T, ifExists: "raise" });
        expect(project(await lock(idle, T))).toMatchObject({ runQueue: [] });
        expect(await read(idle)).toMatchObject({ leaseOwner: "lock", leaseExpiresAt: T + 10 });
        expect(await lock(freshThread(), T)).toBeUndefined();
      });

      // fails on the store before the rulebook
      it("a stalled run keeps the thread: reject and locks are refused, other runs queue untaken", async () => {
        const threadId = freshThread();
        await inPlace(threadId, "a", T);
        const before = await read(threadId);
        await expect(inPlace(threadId, "b", T + 11)).rejects.toMatchObject({
          name: "ThreadBusyError",
        });
        await expect(lock(threadId, T + 11)).rejects.toMatchObject({ name: "ThreadBusyError" });
        expect(await read(threadId)).toEqual(before);
        const queued = await inPlace(threadId, "c", T + 12, { strategy: "enqueue" });
        expect(queued.claimed).toBeUndefined();
        expect(await claim(threadId, T + 12, T + 30)).toEqual({ kind: "stalled", runId: "a" });
      });

      it("a start that refuses a paused thread does; a resume of it goes ahead", async () => {
        const threadId = freshThread();
        await inPlace(threadId, "a", T);
        await finish(threadId, "a", T + 1, {
          status: "PAUSED_FOR_HUMAN",
          interrupts: [{ id: "i1", value: 1 }],
          graphId: "g1",
        });
        await expect(inPlace(threadId, "b", T + 2, { rejectPaused: true })).rejects.toMatchObject({
          name: "ThreadPausedError",
        });
        const resumed = await inPlace(threadId, "c", T + 3, {
          rejectPaused: true,
          resume: { graphId: "g1", interruptIds: ["i1"] },
        });
        expect(resumed.claimed?.runId).toBe("c");
      });
    });

    // Schedules: see the counts where the suite is called (a modest number on DynamoDB Local, more in memory).
    // fails on the store before the rulebook (both stores: every rule marked above, and the stalled liveness)
    it(
      "follows the reference model step by step on random schedules",
      async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.boolean(),
            fc.array(commandArb, { maxLength: options.maxSteps, size: "max" }),
            (created, commands) => runSchedule(store, tenantId, freshThread(), created, commands),
          ),
          {
            numRuns: options.numRuns,
            interruptAfterTimeLimit: options.timeoutMs - 10_000,
            markInterruptAsFailure: true,
          },
        );
      },
      options.timeoutMs,
    );
  });
}

/** Runs one schedule on a fresh thread, comparing the store with the model and checking the invariants. */
async function runSchedule(
  store: ThreadStore,
  tenantId: string,
  threadId: string,
  created: boolean,
  commands: Command[],
): Promise<void> {
  let now = CONTRACT_EPOCH_MS;
  let modelRecord: ModelRecord | undefined;
  if (created) {
    await store.create({ tenantId, threadId, metadata: {}, now, ifExists: "raise" });
    modelRecord = emptyRecord();
  }
  let serial = 0;
  const known: string[] = [];
  const crashed = new Set<string>();
  // Independent of the model: runs in enqueue order, those gone from the queue, and who believes it holds.
  const enqueued: string[] = [];
  const gone = new Set<string>();
  const believers = new Map<string, number>();
  let stored = project(await store.get(tenantId, threadId));
  const freshId = (prefix: string) => {
    serial += 1;
    const id = `${prefix}${serial}`;
    known.push(id);
    return id;
  };
  const base = { tenantId, threadId };

  for (const [index, command] of commands.entries()) {
    const before = modelRecord;
    let expected: Step<unknown>;
    let actual: unknown;
    let expectedOutcome: unknown;
    const actors = candidates(before, known, crashed);
    const pick = (value: number, ids: string[]) =>
      ids.length ? ids[value % ids.length] : undefined;
    switch (command.kind) {
      case "enqueue": {
        const runId = freshId("run");
        const input = {
          runId,
          strategy: command.strategy,
          createIfMissing: command.createIfMissing,
          now,
          ...(command.resume ? { resume: command.resume } : {}),
          ...(command.rejectPaused ? { rejectPaused: true } : {}),
          ...(command.inPlace !== undefined ? { claimUntil: now + command.inPlace } : {}),
        };
        const step = model.enqueue(before, input);
        const outcome = await outcomeOf(() =>
          store.enqueueRun({ ...base, ...input } as SpecEnqueueRunInput),
        );
        if ("value" in outcome) {
          // A run taken in place never waits in the queue: the FIFO check below skips it.
          if (outcome.value.claimed && input.claimUntil !== undefined) {
            believers.set(runId, input.claimUntil);
          } else enqueued.push(runId);
          for (const item of outcome.value.cancelled) {
            if (item.state === "queued") gone.add(item.runId);
          }
        }
        expected = step;
        actual = projectEnqueue(outcome);
        expectedOutcome = projectEnqueue(step.outcome);
        break;
      }
      case "claimHead":
      case "claimRun": {
        const runId = command.kind === "claimRun" ? pick(command.pick, actors) : undefined;
        if (command.kind === "claimRun" && runId === undefined) continue;
        const input = {
          now,
          expiresAt: now + command.lease,
          ...(runId !== undefined ? { runId } : {}),
        };
        const step = model.claim(before, input);
        const outcome = await outcomeOf(
          async () => (await store.claimRun({ ...base, ...input })) as SpecClaimRunOutcome,
        );
        if ("value" in outcome && outcome.value.kind === "claimed") {
          const claimed = outcome.value.run.runId;
          believers.set(claimed, input.expiresAt);
          if (runId === undefined) {
            // FIFO: the head claimed is the oldest run still waiting.
            const oldest = enqueued.find((id) => !gone.has(id));
            expect({ step: index, headClaimed: claimed }).toEqual({
              step: index,
              headClaimed: oldest,
            });
            gone.add(claimed);
          }
        }
        if (runId === undefined && stored && stored.runQueue.length > 0) {
          // Liveness: a waiting run with nobody holding the thread is never answered with `none`.
          // (A continuing run whose lease lapsed holds nothing live: the answer is then `stalled`.)
          if (!leased(stored, now)) {
            expect({
              step: index,
              answer: "error" in outcome ? outcome : outcome.value.kind,
            }).not.toEqual({
              step: index,
              answer: "none",
            });
          }
        }
        expected = step;
        actual = projectClaim(outcome);
        expectedOutcome = projectClaim(step.outcome as Outcome<SpecClaimRunOutcome>);
        break;
      }
      case "renew": {
        const runId = pick(command.pick, actors);
        if (runId === undefined) continue;
        const input = { runId, expiresAt: now + command.lease };
        const step = model.renew(before, input);
        const outcome = await outcomeOf(() => store.renewRunLease({ ...base, ...input }));
        if ("value" in outcome) {
          if (outcome.value.held) believers.set(runId, input.expiresAt);
          else believers.delete(runId);
        }
        expected = step;
        actual = outcome;
        expectedOutcome = step.outcome;
        break;
      }
      case "cancel": {
        // Anyone may ask any run to stop, a crashed one included.
        const runId = pick(command.pick, candidates(before, known, new Set()));
        if (runId === undefined) continue;
        const input = { runId, action: command.action };
        const step = model.cancel(before, input);
        const outcome = await outcomeOf(() => store.cancelRun({ ...base, ...input }));
        if ("value" in outcome && outcome.value === "queued") gone.add(runId);
        expected = step;
        actual = outcome;
        expectedOutcome = step.outcome;
        break;
      }
      case "finish": {
        const owner = pick(command.pick, actors);
        if (owner === undefined) continue;
        const input = finishInput(command, owner, now);
        const step = model.finish(before, input);
        const outcome = await outcomeOf(() => store.finishRun({ ...base, ...input }));
        // A finished run holds nothing any more (a kept lease only fences off a node it aborted); a run handing
        // off keeps the thread, until a new expiry when it gives one.
        if (!("value" in outcome) || !outcome.value.applied || !input.handOff) {
          believers.delete(owner);
        } else if (input.leaseUntil !== undefined) believers.set(owner, input.leaseUntil);
        expected = step;
        actual = outcome;
        expectedOutcome = step.outcome;
        break;
      }
      case "advance":
        now += command.ms;
        continue;
      case "crash": {
        const victim = before ? (holder(before, now) ?? before.leaseOwner) : undefined;
        if (victim === undefined) continue;
        crashed.add(victim);
        believers.delete(victim);
        continue;
      }
      case "lock": {
        const owner = freshId("lock");
        const input = { owner, now, expiresAt: now + command.lease };
        const step = model.lock(before, input);
        const outcome = await outcomeOf(() => store.lockThread({ ...base, ...input }));
        if ("value" in outcome && outcome.value !== undefined)
          believers.set(owner, input.expiresAt);
        expected = step;
        actual = projectRecordOutcome(outcome);
        expectedOutcome = projectRecordOutcome(step.outcome as Outcome<ModelRecord | undefined>);
        break;
      }
    }
    modelRecord = expected.record;
    stored = project(await store.get(tenantId, threadId));
    expect({ step: index, command, now, result: actual, record: stored }).toEqual({
      step: index,
      command,
      now,
      result: expectedOutcome,
      record: modelRecord,
    });
    // At most one holder: of the runs told they hold the thread, at most one still has a live lease.
    const live = [...believers].filter(([, expiresAt]) => expiresAt >= now).map(([runId]) => runId);
    expect({ step: index, liveHolders: live.length <= 1 ? "at most one" : live }).toEqual({
      step: index,
      liveHolders: "at most one",
    });
    // FIFO: the queue keeps the enqueue order of the runs still waiting.
    const waiting = stored?.runQueue ?? [];
    expect({ step: index, queue: waiting }).toEqual({
      step: index,
      queue: enqueued.filter((id) => waiting.includes(id)),
    });
  }
}
