import type { Client, ThreadState } from "@langchain/langgraph-sdk";
import { heldGraph, Latches } from "./graphs";
import { backendOptions, startTestServer, type Backend, type TestServer } from "./support";

type HeldValues = { steps: string[]; label: string };

/**
 * Rollback (the `rollback` multitask strategy and `cancel?action=rollback`) through the official SDK, on both
 * backends: a rolled-back run leaves no checkpoint, no run record and no trace in what reads the thread next
 * (state, history, state updates, copies, the next run). The graph's `held` node waits on a latch the test
 * releases, so a run is caught mid-way by design, not by a timer.
 */
describe.each<Backend>(["memory", "dynamodb"])("rollback (%s checkpointer)", (backend) => {
  let server: TestServer;
  let client: Client;
  const latches = new Latches();

  beforeAll(async () => {
    server = await startTestServer({
      assistants: { held: heldGraph(latches) },
      ...(await backendOptions(backend)),
    });
    client = await server.client(`tenant-rollback-${backend}`);
  });

  afterAll(async () => {
    latches.releaseAll();
    await server.close();
  });

  const run = (label: string) => ({ input: { label } });
  const steps = (state: ThreadState) => (state.values as HeldValues).steps ?? [];

  /** A thread with one completed run (`<label>`), and its state then. */
  async function threadWithOneRun(label: string) {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "held", run(label));
    const before = await client.threads.getState(thread.thread_id);
    expect(steps(before)).toEqual([`first:${label}`, `held:${label}`]);
    return { threadId: thread.thread_id, before };
  }

  /** Starts a run held in its `held` node, once its `first` step's checkpoint is stored. */
  async function startHeldRun(threadId: string, label: string) {
    const latch = latches.hold(label);
    const created = await client.runs.create(threadId, "held", run(label));
    await latch.entered;
    await waitFor(async () => (await history(threadId)).some((state) => mentions(state, label)));
    return { runId: created.run_id, latch };
  }

  async function history(threadId: string): Promise<ThreadState[]> {
    return client.threads.getHistory(threadId, { limit: 1000 });
  }

  /** Whether a checkpoint holds a step of run `label`, or names that run in its metadata. */
  function mentions(state: ThreadState, label: string, runId?: string): boolean {
    return (
      steps(state).some((step) => step.endsWith(`:${label}`)) ||
      (runId !== undefined && state.metadata?.run_id === runId)
    );
  }

  async function settled(threadId: string, runId: string): Promise<string> {
    let status = "";
    await waitFor(async () => {
      status = (await client.runs.get(threadId, runId)).status;
      return status !== "pending" && status !== "running";
    });
    return status;
  }

  it("a rollback run keeps the earlier completed run's steps: the rolled-back run leaves no checkpoint and no record", async () => {
    const { threadId } = await threadWithOneRun("r1-one");
    const held = await startHeldRun(threadId, "r1-two");
    const last = await client.runs.create(threadId, "held", {
      ...run("r1-three"),
      multitaskStrategy: "rollback",
    });
    expect(await settled(threadId, last.run_id)).toBe("success");

    const state = await client.threads.getState(threadId);
    expect(steps(state)).toEqual([
      "first:r1-one",
      "held:r1-one",
      "first:r1-three",
      "held:r1-three",
    ]);
    const checkpoints = await history(threadId);
    expect(checkpoints.some((item) => mentions(item, "r1-three"))).toBe(true);
    expect(checkpoints.filter((item) => mentions(item, "r1-two", held.runId))).toEqual([]);
    await expect(client.runs.get(threadId, held.runId)).rejects.toThrow(/404/);
    const listed = (await client.runs.list(threadId)).map((item) => item.run_id);
    expect(listed).toContain(last.run_id);
    expect(listed).not.toContain(held.runId);
    held.latch.release();
  });

  it("cancel?action=rollback&wait=true: state and checkpoint are at once as before the run; a state update then holds", async () => {
    const { threadId, before } = await threadWithOneRun("r2-one");
    const held = await startHeldRun(threadId, "r2-two");

    await client.runs.cancel(threadId, held.runId, true, "rollback");

    const after = await client.threads.getState(threadId);
    expect(after.values).toEqual(before.values);
    expect(after.checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
    expect(
      (await history(threadId)).filter((item) => mentions(item, "r2-two", held.runId)),
    ).toEqual([]);
    await expect(client.runs.get(threadId, held.runId)).rejects.toThrow(/404/);

    await client.threads.updateState(threadId, { values: { steps: ["manual"] }, asNode: "held" });
    const next = await client.runs.wait(threadId, "held", run("r2-three"));
    expect((next as HeldValues).steps).toEqual([
      "first:r2-one",
      "held:r2-one",
      "manual",
      "first:r2-three",
      "held:r2-three",
    ]);
    held.latch.release();
  });

  it("a run rolled back before it started (cancelled at once, after_seconds) leaves the state as it was; the next run builds on it", async () => {
    const { threadId, before } = await threadWithOneRun("r3-one");
    const waiting = await client.runs.create(threadId, "held", {
      ...run("r3-two"),
      afterSeconds: 30,
    });
    await client.runs.cancel(threadId, waiting.run_id, true, "rollback");

    const after = await client.threads.getState(threadId);
    expect(after.values).toEqual(before.values);
    expect(after.checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
    await expect(client.runs.get(threadId, waiting.run_id)).rejects.toThrow(/404/);
    const next = await client.runs.wait(threadId, "held", run("r3-three"));
    expect((next as HeldValues).steps).toEqual([
      "first:r3-one",
      "held:r3-one",
      "first:r3-three",
      "held:r3-three",
    ]);
  });

  it("a run rolled back while queued, then the run ahead of it rolled back: the next run starts from the thread's latest state", async () => {
    const { threadId, before } = await threadWithOneRun("r3q-one");
    const held = await startHeldRun(threadId, "r3q-two");
    const queued = await client.runs.create(threadId, "held", {
      ...run("r3q-three"),
      multitaskStrategy: "enqueue",
    });
    expect(queued.status).toBe("pending");
    await client.runs.cancel(threadId, queued.run_id, true, "rollback");
    await expect(client.runs.get(threadId, queued.run_id)).rejects.toThrow(/404/);
    await client.runs.cancel(threadId, held.runId, true, "rollback");

    const after = await client.threads.getState(threadId);
    expect(after.values).toEqual(before.values);
    expect(after.checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
    const next = await client.runs.wait(threadId, "held", run("r3q-four"));
    expect((next as HeldValues).steps).toEqual([
      "first:r3q-one",
      "held:r3q-one",
      "first:r3q-four",
      "held:r3q-four",
    ]);
    expect(
      (await history(threadId)).filter(
        (item) => mentions(item, "r3q-two", held.runId) || mentions(item, "r3q-three"),
      ),
    ).toEqual([]);
    held.latch.release();
  });

  it("updateState right after a rollback builds on the state from before the rolled-back run", async () => {
    const { threadId, before } = await threadWithOneRun("r7-one");
    const held = await startHeldRun(threadId, "r7-two");
    await client.runs.cancel(threadId, held.runId, true, "rollback");

    await client.threads.updateState(threadId, { values: { steps: ["manual"] }, asNode: "held" });
    const state = await client.threads.getState(threadId);
    expect(steps(state)).toEqual(["first:r7-one", "held:r7-one", "manual"]);
    expect(state.parent_checkpoint?.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
    held.latch.release();
  });

  it("threads.copy right after a rollback copies the state from before the rolled-back run", async () => {
    const { threadId, before } = await threadWithOneRun("r7c-one");
    const held = await startHeldRun(threadId, "r7c-two");
    await client.runs.cancel(threadId, held.runId, true, "rollback");

    const copy = await client.threads.copy(threadId);
    const copied = await client.threads.getState(copy.thread_id);
    expect(copied.values).toEqual(before.values);
    expect(
      (await history(copy.thread_id)).filter((item) => mentions(item, "r7c-two", held.runId)),
    ).toEqual([]);
    held.latch.release();
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
