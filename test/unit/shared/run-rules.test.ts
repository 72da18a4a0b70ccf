import {
  decideClaim,
  decideEnqueue,
  decideFinish,
  decideLock,
  lockOwner,
  newThreadRecord,
  stalledRunOf,
} from "../../../src/shared/run-rules";
import type { ThreadRecord } from "../../../src/shared/threads";

/** The rulebook's transitions as a table: each row an event on a record, what it writes and what it answers. */
const T = 1_000;
const base = (changes: Partial<ThreadRecord> = {}): ThreadRecord => ({
  ...newThreadRecord("t", 0),
  ...changes,
});
const enqueue = (strategy: "reject" | "enqueue" | "interrupt" | "rollback", runId = "new") => ({
  tenantId: "tenant",
  threadId: "t",
  runId,
  strategy,
  now: T,
  createIfMissing: false,
});

describe("the run rulebook", () => {
  it("enqueue on an idle thread starts now; on a busy one it waits, or reject refuses before writing", () => {
    expect(decideEnqueue(base(), enqueue("reject")).result).toEqual({
      cancelled: [],
      startsNow: true,
    });
    const held = base({ status: "RUNNING", leaseOwner: "a", leaseExpiresAt: T + 10 });
    expect(() => decideEnqueue(held, enqueue("reject"))).toThrow(
      expect.objectContaining({ name: "ThreadBusyError" }),
    );
    const queued = decideEnqueue(held, enqueue("enqueue"));
    expect(queued.result).toEqual({ cancelled: [], startsNow: false });
    expect(queued.next?.runQueue).toEqual(["new"]);
  });

  it("interrupt and rollback empty the queue and mark the holder; the new run waits for it", () => {
    const busy = base({
      status: "RUNNING",
      leaseOwner: "a",
      leaseExpiresAt: T + 10,
      runQueue: ["b", "c"],
    });
    const { next, result } = decideEnqueue(busy, enqueue("rollback"));
    expect(result).toEqual({
      cancelled: [
        { runId: "b", state: "queued" },
        { runId: "c", state: "queued" },
        { runId: "a", state: "running" },
      ],
      startsNow: false,
    });
    expect(next).toMatchObject({ runQueue: ["new"], cancelAction: "rollback" });
  });

  it("a resume on an idle thread is checked in the same decision; behind other runs it is not", () => {
    const resume = { ...enqueue("reject"), resume: { graphId: "g", interruptIds: ["i1"] } };
    expect(() => decideEnqueue(base({ status: "COMPLETED" }), resume)).toThrow(
      expect.objectContaining({ name: "NothingToResumeError" }),
    );
    const paused = base({
      status: "PAUSED_FOR_HUMAN",
      graphId: "g",
      interrupts: [{ id: "i1", value: 1 }],
    });
    expect(decideEnqueue(paused, resume).result.startsNow).toBe(true);
    const behind = { ...resume, strategy: "enqueue" as const };
    const busy = base({ status: "COMPLETED", runQueue: ["x"] });
    expect(decideEnqueue(busy, behind).next?.runQueue).toEqual(["x", "new"]);
  });

  it("a claim in place says when it created the thread (no checkpoint can exist), and only then", () => {
    const inPlace = { ...enqueue("reject"), createIfMissing: true, claimUntil: T + 10 };
    const created = decideEnqueue(undefined, inPlace).result.claimed;
    expect(created).toMatchObject({ runId: "new", createdThread: true });
    const existing = decideEnqueue(base(), inPlace).result.claimed;
    expect(existing?.runId).toBe("new");
    expect(existing).not.toHaveProperty("createdThread");
  });

  it("a head claim takes a stalled run over before the queue, and a live lease is never claimed twice", () => {
    const stalled = base({
      status: "RUNNING",
      leaseOwner: "a",
      leaseExpiresAt: T - 1,
      runQueue: ["b"],
    });
    expect(
      decideClaim(stalled, { tenantId: "tenant", threadId: "t", now: T, expiresAt: T + 5 }).result,
    ).toEqual({
      kind: "stalled",
      runId: "a",
    });
    const takeover = decideClaim(stalled, {
      tenantId: "tenant",
      threadId: "t",
      now: T,
      expiresAt: T + 5,
      runId: "a",
    });
    expect(takeover.next).toMatchObject({
      leaseOwner: "a",
      leaseExpiresAt: T + 5,
      runQueue: ["b"],
    });
    const live = base({ status: "RUNNING", leaseOwner: "a", leaseExpiresAt: T + 10 });
    expect(
      decideClaim(live, { tenantId: "tenant", threadId: "t", now: T, expiresAt: T + 5, runId: "a" })
        .result,
    ).toEqual({ kind: "none" });
  });

  it("a lock's lapsed lease is free, not a stalled run", () => {
    const owner = lockOwner();
    const crashed = base({ status: "COMPLETED", leaseOwner: owner, leaseExpiresAt: T - 1 });
    expect(stalledRunOf(crashed, T)).toBeUndefined();
    const locked = decideLock(crashed, {
      tenantId: "tenant",
      threadId: "t",
      owner: lockOwner(),
      expiresAt: T + 5,
      now: T,
    });
    expect(locked.result).toEqual(crashed);
    // A background run's lapsed lease is not free: it waits for its takeover.
    const run = base({ status: "RUNNING", leaseOwner: "run-1", leaseExpiresAt: T - 1 });
    expect(() =>
      decideLock(run, {
        tenantId: "tenant",
        threadId: "t",
        owner: lockOwner(),
        expiresAt: T + 5,
        now: T,
      }),
    ).toThrow(expect.objectContaining({ name: "ThreadBusyError" }));
    expect(() =>
      decideEnqueue(run, {
        tenantId: "tenant",
        threadId: "t",
        runId: "run-2",
        strategy: "reject",
        now: T,
        createIfMissing: false,
      }),
    ).toThrow(expect.objectContaining({ name: "ThreadBusyError" }));
  });

  it("finish frees the thread and says whether runs wait; a stranger's finish changes nothing", () => {
    const held = base({
      status: "RUNNING",
      leaseOwner: "a",
      leaseExpiresAt: T + 10,
      runQueue: ["b"],
    });
    const finish = {
      tenantId: "tenant",
      threadId: "t",
      owner: "a",
      now: T,
      status: "COMPLETED" as const,
      nextNodes: [],
      interrupts: [],
    };
    const done = decideFinish(held, finish);
    expect(done.result).toEqual({ applied: true, waiting: true });
    expect(done.next).toMatchObject({ status: "COMPLETED", runQueue: ["b"] });
    expect(done.next?.leaseOwner).toBeUndefined();
    expect(decideFinish(held, { ...finish, owner: "z" })).toEqual({
      result: { applied: false, waiting: false },
    });
  });
});
