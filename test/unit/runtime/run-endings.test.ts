import { InMemoryRunStore } from "../../../src/runtime/runs/in-memory-run-store";
import { RunEndings } from "../../../src/runtime/runs/run-endings";
import type { RunRecord } from "../../../src/shared/runs";

const TENANT = "tenant-endings";

function runningRun(runId: string): RunRecord {
  const now = Date.now();
  return {
    runId,
    threadId: "thread-1",
    assistantId: "a",
    graphId: "g",
    status: "running",
    kwargs: {},
    metadata: {},
    multitaskStrategy: "enqueue",
    createdAt: now,
    updatedAt: now,
    legs: 1,
  };
}

/** The in-memory run store, counting its reads. */
class CountingRunStore extends InMemoryRunStore {
  reads = 0;
  override async getRun(tenantId: string, threadId: string, runId: string) {
    this.reads += 1;
    return super.getRun(tenantId, threadId, runId);
  }
}

describe("RunEndings.join", () => {
  it("waits for the end of a run whose leg runs here instead of polling the store", async () => {
    const store = new CountingRunStore();
    const endings = new RunEndings(Date.now);
    const run = runningRun("run-here");
    await store.putRun(TENANT, run);
    const joined = endings.join(
      store,
      TENANT,
      "thread-1",
      run.runId,
      10_000,
      undefined,
      () => true,
    );
    await new Promise((resolve) => setTimeout(resolve, 400));
    endings.ended(run.runId, { ...run, status: "success" });
    const result = await joined;
    expect(result?.done).toBe(true);
    expect(result?.run.status).toBe("success");
    expect(store.reads).toBe(1);
  });

  it("polls a run that runs elsewhere until its record says it ended", async () => {
    const store = new CountingRunStore();
    const endings = new RunEndings(Date.now);
    const run = runningRun("run-elsewhere");
    await store.putRun(TENANT, run);
    const joined = endings.join(store, TENANT, "thread-1", run.runId, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 400));
    await store.updateRun(TENANT, "thread-1", run.runId, { status: "success" }, Date.now());
    const result = await joined;
    expect(result?.done).toBe(true);
    expect(store.reads).toBeGreaterThan(2);
  });
});
