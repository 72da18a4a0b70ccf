import { endedRun, RecentRuns, type EndedRun } from "../../../src/runtime/runs/recent-runs";
import type { RunRecord } from "../../../src/shared/runs";

function run(runId: string): EndedRun {
  return { runId, threadId: "t1", graphId: "booking", status: "success", temporary: false };
}

describe("RecentRuns: what a process remembers of runs that ended in it, bounded in time and number", () => {
  let clock = 0;
  const now = () => clock;
  beforeEach(() => {
    clock = 1_000;
  });

  it("keeps a run's record and its values as one entry, each told separately", () => {
    const recent = new RecentRuns(60_000, 10, now);
    recent.remember("r1", { values: { booked: true } });
    recent.remember("r1", { run: run("r1") });
    expect(recent.get("r1")).toMatchObject({ run: { runId: "r1" }, values: { booked: true } });
    expect(recent.size).toBe(1);
  });

  it("forgets a run once its time is up, and a later record starts its time again", () => {
    const recent = new RecentRuns(60_000, 10, now);
    recent.remember("r1", { values: { step: 1 } });
    clock += 59_999;
    expect(recent.get("r1")?.values).toEqual({ step: 1 });
    recent.remember("r1", { run: run("r1") });
    clock += 59_999;
    expect(recent.get("r1")).toMatchObject({ run: { runId: "r1" }, values: { step: 1 } });
    clock += 1;
    expect(recent.get("r1")).toBeUndefined();
    expect(recent.size).toBe(0);
  });

  it("holds at most its cap, forgetting the oldest first", () => {
    const recent = new RecentRuns(60_000, 3, now);
    for (const id of ["r1", "r2", "r3", "r4"]) {
      recent.remember(id, { run: run(id) });
      clock += 10;
    }
    expect(recent.size).toBe(3);
    expect(recent.get("r1")).toBeUndefined();
    expect(["r2", "r3", "r4"].map((id) => recent.get(id)?.run?.runId)).toEqual(["r2", "r3", "r4"]);
  });

  it("drops expired runs as new ones arrive, without a timer per run", () => {
    const recent = new RecentRuns(1_000, 100, now);
    recent.remember("old-1", { run: run("old-1") });
    recent.remember("old-2", { run: run("old-2") });
    clock += 1_000;
    recent.remember("new", { run: run("new") });
    expect(recent.size).toBe(1);
    expect(recent.get("new")?.run?.runId).toBe("new");
  });

  it("keeps of a run only what a join needs: how it ended, and whether its thread is gone", () => {
    const record = {
      runId: "r1",
      threadId: "t1",
      assistantId: "a1",
      graphId: "booking",
      status: "error",
      kwargs: { input: { request: "a long input" }, temporary: true },
      metadata: { user: "u" },
      multitaskStrategy: "reject",
      createdAt: 1,
      updatedAt: 2,
      legs: 1,
      error: { error: "ValueError", message: "bad", error_id: "e1" },
    } as RunRecord;
    expect(endedRun(record)).toEqual({
      runId: "r1",
      threadId: "t1",
      graphId: "booking",
      status: "error",
      error: { error: "ValueError", message: "bad", error_id: "e1" },
      temporary: true,
    });
  });
});
