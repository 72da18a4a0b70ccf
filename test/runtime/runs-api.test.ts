import type { Client } from "@langchain/langgraph-sdk";
import { systemAssistantId } from "../../src/runtime/http/assistant-directory";
import { chatGraph, slowGraph } from "./graphs";
import {
  backendOptions,
  bookingAssistants,
  startTestServer,
  type Backend,
  type TestServer,
} from "./support";
import { sdkMatrix } from "../support/sdk-majors";

type SlowValues = { steps: string[] };
type RunStatus = "pending" | "running" | "success" | "error" | "timeout" | "interrupted";

/** Both backends with the current SDK, and the in-memory one with SDK 2.0.0 too. */
const cases = sdkMatrix<Backend>(["memory", "dynamodb"], ["memory"]);

/**
 * Background runs through the official @langchain/langgraph-sdk Client, unchanged, against the dev server (the
 * same run machinery the worker function runs, in process): create + join, the four multitask strategies,
 * cancel, list, get, delete, stateless runs, breakpoints and forks from a checkpoint.
 */
describe.each(cases)("background runs ($backend, SDK $sdk.version)", ({ backend, sdk }) => {
  let server: TestServer;
  let client: Client;
  let other: Client;
  const counts = { started: 0, finished: 0 };

  beforeAll(async () => {
    server = await startTestServer({
      assistants: { ...bookingAssistants(), chat: chatGraph, slow: slowGraph(counts) },
      ...(await backendOptions(backend)),
    });
    client = await server.client(`tenant-runs-${backend}`, sdk);
    other = await server.client(`tenant-runs-other-${backend}`, sdk);
  });

  afterAll(async () => {
    await server.close();
  });

  async function threadIsGone(threadId: string): Promise<boolean> {
    try {
      await client.threads.get(threadId);
      return false;
    } catch (error) {
      return /404/.test(String(error));
    }
  }

  /** Polls a run until it ends (LangGraph Server's own tests do the same); throws when it is gone. */
  async function settled(threadId: string, runId: string, timeoutMs = 20_000): Promise<RunStatus> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const run = await client.runs.get(threadId, runId);
      if (run.status !== "pending" && run.status !== "running") return run.status as RunStatus;
      if (Date.now() > until) throw new Error(`run ${runId} still ${run.status}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  const slow = (delayMs: number) => ({ input: { delayMs } });

  it("creates a run that runs in the background, and joins it for the thread's values", async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "slow", slow(300));
    expect(run).toMatchObject({
      thread_id: thread.thread_id,
      assistant_id: systemAssistantId("slow"),
      status: "pending",
      multitask_strategy: "reject",
    });
    const values = (await client.runs.join(thread.thread_id, run.run_id)) as SlowValues;
    expect(values.steps).toEqual(["prepare", "work_1"]);
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
    // Another tenant cannot see it.
    await expect(other.runs.get(thread.thread_id, run.run_id)).rejects.toThrow(/404/);
  });

  it("multitask reject: a second run is refused with 409 while the first runs; the first succeeds", async () => {
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, "slow", slow(500));
    await expect(
      client.runs.create(thread.thread_id, "slow", { ...slow(0), multitaskStrategy: "reject" }),
    ).rejects.toThrow(/409/);
    expect(await settled(thread.thread_id, first.run_id)).toBe("success");
    expect(await client.runs.list(thread.thread_id)).toHaveLength(1);
  });

  it("multitask interrupt: the first run stops where it is (interrupted), the second runs after it", async () => {
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, "slow", slow(2_000));
    await waitForStatus(thread.thread_id, first.run_id, "running");
    const second = await client.runs.create(thread.thread_id, "slow", {
      ...slow(0),
      multitaskStrategy: "interrupt",
    });
    expect(await settled(thread.thread_id, first.run_id)).toBe("interrupted");
    expect(await settled(thread.thread_id, second.run_id)).toBe("success");
    // The first run's finished step stays; its interrupted one never finished.
    const state = (await client.threads.getState(thread.thread_id)).values as SlowValues;
    expect(state.steps).toEqual(["prepare", "prepare", "work_1"]);
  });

  it("multitask rollback: the first run is deleted with its steps, the second runs from before it", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "slow", slow(0));
    const first = await client.runs.create(thread.thread_id, "slow", slow(2_000));
    await waitForStatus(thread.thread_id, first.run_id, "running");
    const second = await client.runs.create(thread.thread_id, "slow", {
      ...slow(0),
      multitaskStrategy: "rollback",
    });
    await expect(settled(thread.thread_id, first.run_id)).rejects.toThrow(/404/);
    expect(await settled(thread.thread_id, second.run_id)).toBe("success");
    const state = (await client.threads.getState(thread.thread_id)).values as SlowValues;
    expect(state.steps).toEqual(["prepare", "work_1", "prepare", "work_1"]);
    expect((await client.runs.list(thread.thread_id)).map((run) => run.run_id)).not.toContain(
      first.run_id,
    );
  });

  it("multitask enqueue: the second run waits, then runs on the first one's state", async () => {
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, "slow", slow(500));
    const second = await client.runs.create(thread.thread_id, "slow", {
      ...slow(0),
      multitaskStrategy: "enqueue",
    });
    expect(second.status).toBe("pending");
    expect(await settled(thread.thread_id, first.run_id)).toBe("success");
    expect(await settled(thread.thread_id, second.run_id)).toBe("success");
    const state = (await client.threads.getState(thread.thread_id)).values as SlowValues;
    expect(state.steps).toEqual(["prepare", "work_1", "prepare", "work_1"]);
    const listed = await client.runs.list(thread.thread_id);
    expect(listed.map((run) => run.run_id)).toEqual([second.run_id, first.run_id]);
  });

  it("cancels a running run (interrupt, and with wait), and a pending one", async () => {
    const thread = await client.threads.create();
    const running = await client.runs.create(thread.thread_id, "slow", slow(5_000));
    const queued = await client.runs.create(thread.thread_id, "slow", {
      ...slow(0),
      multitaskStrategy: "enqueue",
    });
    await waitForStatus(thread.thread_id, running.run_id, "running");
    await client.runs.cancel(thread.thread_id, queued.run_id);
    expect(await settled(thread.thread_id, queued.run_id)).toBe("interrupted");
    await client.runs.cancel(thread.thread_id, running.run_id, true);
    expect((await client.runs.get(thread.thread_id, running.run_id)).status).toBe("interrupted");
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
  });

  it("a run waiting out after_seconds holds the thread (updateState 409) and a cancel ends it at once", async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "chat", {
      input: { messages: [{ role: "human", content: "later" }] },
      afterSeconds: 5,
    });
    await expect(
      client.threads.updateState(thread.thread_id, {
        values: { messages: [{ type: "ai", content: "Sisyphus" }] },
        asNode: "agent",
      }),
    ).rejects.toThrow(/409/);
    await client.runs.cancel(thread.thread_id, run.run_id);
    expect(await settled(thread.thread_id, run.run_id, 2_000)).toBe("interrupted");
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
    expect(JSON.stringify(await client.threads.getState(thread.thread_id))).not.toContain("later");
    await client.threads.updateState(thread.thread_id, {
      values: { messages: [{ type: "ai", content: "Sisyphus" }] },
      asNode: "agent",
    });
    expect(JSON.stringify(await client.threads.getState(thread.thread_id))).toContain("Sisyphus");
  });

  it("deletes a thread with its runs: a new thread of the same id starts with none", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "chat", {
      input: { messages: [{ role: "human", content: "gone soon" }] },
    });
    expect(await client.runs.list(thread.thread_id)).toHaveLength(1);
    await client.threads.delete(thread.thread_id);
    await client.threads.create({ threadId: thread.thread_id });
    expect(await client.runs.list(thread.thread_id)).toEqual([]);
  });

  it("deletes an ended run; refuses to delete a running one", async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "slow", slow(1_000));
    await waitForStatus(thread.thread_id, run.run_id, "running");
    await expect(client.runs.delete(thread.thread_id, run.run_id)).rejects.toThrow(/409/);
    await settled(thread.thread_id, run.run_id);
    await client.runs.delete(thread.thread_id, run.run_id);
    await expect(client.runs.get(thread.thread_id, run.run_id)).rejects.toThrow(/404/);
  });

  it("lists a thread's runs newest first, by status, with limit and offset", async () => {
    const thread = await client.threads.create();
    const ids: string[] = [];
    for (let index = 0; index < 3; index++) {
      const run = await client.runs.create(thread.thread_id, "chat", {
        input: { messages: [{ role: "human", content: `m${index}` }] },
        multitaskStrategy: "enqueue",
      });
      ids.push(run.run_id);
    }
    for (const id of ids) await client.runs.join(thread.thread_id, id);
    expect((await client.runs.list(thread.thread_id)).map((run) => run.run_id)).toEqual(
      [...ids].reverse(),
    );
    expect(
      (await client.runs.list(thread.thread_id, { limit: 1, offset: 1 })).map((run) => run.run_id),
    ).toEqual([ids[1]]);
    expect(await client.runs.list(thread.thread_id, { status: "error" })).toEqual([]);
  });

  it("runs stateless runs: waited and in the background; the thread goes unless kept", async () => {
    const waited = (await client.runs.wait(null, "chat", {
      input: { messages: [{ role: "human", content: "once" }] },
    })) as { messages: Array<{ content: string }> };
    expect(waited.messages.at(-1)!.content).toBe("echo: once");

    const kept = await client.runs.create(null, "chat", {
      input: { messages: [{ role: "human", content: "keep me" }] },
      // LangGraph Server's values ("delete" | "keep"); the SDK's type names others.
      onCompletion: "keep" as never,
    });
    if (sdk.createSendsOnCompletion) {
      await client.runs.join(kept.thread_id, kept.run_id);
      const state = await client.threads.getState(kept.thread_id);
      expect(JSON.stringify(state.values)).toContain("keep me");
    } else {
      // The SDK left the option out: the server's default (delete) applies, as the reference's does.
      await waitFor(async () => threadIsGone(kept.thread_id));
      // Its stateless wait does send it (1.15's types leave it out of that call, hence the cast).
      let keptThread: string | undefined;
      const keepPayload = {
        input: { messages: [{ role: "human", content: "keep me" }] },
        onCompletion: "keep",
        onRunCreated: (created: { thread_id?: string }) => (keptThread = created.thread_id),
      };
      await client.runs.wait(null, "chat", keepPayload as never);
      const state = await client.threads.getState(keptThread!);
      expect(JSON.stringify(state.values)).toContain("keep me");
    }

    const temporary = await client.runs.create(null, "chat", {
      input: { messages: [{ role: "human", content: "forget me" }] },
    });
    await waitFor(async () => threadIsGone(temporary.thread_id));
  });

  it("creates a batch of stateless runs (runs.createBatch) that run; a bad item creates none", async () => {
    const created = await client.runs.createBatch([
      { assistantId: "chat", input: { messages: [{ role: "human", content: "first" }] } },
      {
        assistantId: "chat",
        input: { messages: [{ role: "human", content: "second" }] },
        // The SDK sends a batch's payloads as given (no snake_case), so this is the wire name.
        on_completion: "keep",
      } as never,
    ]);
    expect(created).toHaveLength(2);
    expect(new Set(created.map((run) => run.thread_id)).size).toBe(2);
    const kept = created[1]!;
    await client.runs.join(kept.thread_id, kept.run_id);
    expect(JSON.stringify((await client.threads.getState(kept.thread_id)).values)).toContain(
      "echo: second",
    );

    // The first run's thread is temporary: once it is gone, the thread count stays put unless a run is made.
    const temporary = created[0]!;
    await waitFor(async () => {
      try {
        await client.threads.get(temporary.thread_id);
        return false;
      } catch (error) {
        return /404/.test(String(error));
      }
    });
    const before = await client.threads.count();
    await expect(
      client.runs.createBatch([
        { assistantId: "chat", input: { messages: [] } },
        { assistantId: "chat", input: {}, config: { recursion_limit: 0 } },
      ]),
    ).rejects.toThrow(/422.*Run 1: Invalid config.recursion_limit/);
    await expect(
      client.runs.createBatch([
        { assistantId: "chat", input: {} },
        { assistantId: "no-such-assistant", input: {} },
      ]),
    ).rejects.toThrow(/404/);
    await expect(client.runs.createBatch([])).rejects.toThrow(/422.*expected 1 to 100 runs, got 0/);
    expect(await client.threads.count()).toBe(before);
  });

  it("stops at interrupt_before and continues with a run without input", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "slow", { ...slow(0), interruptBefore: ["work_1"] });
    const paused = await client.threads.get(thread.thread_id);
    expect(paused.status).toBe("interrupted");
    expect((await client.threads.getState(thread.thread_id)).next).toEqual(["work_1"]);
    const done = (await client.runs.wait(thread.thread_id, "slow", { input: null })) as SlowValues;
    expect(done.steps).toEqual(["prepare", "work_1"]);
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
  });

  /** The thread's next nodes as the server's thread record holds them (the simple face's status route). */
  async function recordedNext(threadId: string): Promise<string | null> {
    const response = await fetch(`${server.url}/threads/${threadId}/status`, {
      headers: { authorization: `Bearer ${await server.token(`tenant-runs-${backend}`)}` },
    });
    return ((await response.json()) as { next_node: string | null }).next_node;
  }

  it("stops at interrupt_after: the thread waits at the next node, and a run without input goes on", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "slow", { ...slow(0), interruptAfter: ["prepare"] });
    expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");
    expect((await client.threads.getState(thread.thread_id)).next).toEqual(["work_1"]);
    expect(await recordedNext(thread.thread_id)).toBe("work_1");
    const done = (await client.runs.wait(thread.thread_id, "slow", { input: null })) as SlowValues;
    expect(done.steps).toEqual(["prepare", "work_1"]);
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
  });

  it("a fork from an earlier checkpoint that stops at a breakpoint waits where the fork stopped, not where it started", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "slow", slow(0));
    const history = await client.threads.getHistory(thread.thread_id, { limit: 10 });
    const beforePrepare = history.find((state) => state.next.join() === "prepare")!;
    await client.runs.wait(thread.thread_id, "slow", {
      input: null,
      checkpointId: beforePrepare.checkpoint.checkpoint_id!,
      interruptBefore: ["work_1"],
    });
    expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");
    expect((await client.threads.getState(thread.thread_id)).next).toEqual(["work_1"]);
    expect(await recordedNext(thread.thread_id)).toBe("work_1");
  });

  it("forks from a checkpoint (time travel): the run starts there, later history stays", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "chat", {
      input: { messages: [{ role: "human", content: "one" }] },
    });
    const afterFirst = (await client.threads.getState(thread.thread_id)).checkpoint;
    await client.runs.wait(thread.thread_id, "chat", {
      input: { messages: [{ role: "human", content: "two" }] },
    });
    const forked = (await client.runs.wait(thread.thread_id, "chat", {
      input: { messages: [{ role: "human", content: "alt" }] },
      checkpointId: afterFirst.checkpoint_id!,
    })) as { messages: Array<{ content: string }> };
    expect(forked.messages.map((message) => message.content)).toEqual([
      "one",
      "echo: one",
      "alt",
      "echo: alt",
    ]);
  });

  it("resumes through command.goto and command.update", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "booking", { input: { request: "move it" } });
    const done = (await client.runs.wait(thread.thread_id, "booking", {
      command: { update: { approved: true }, goto: "finalize" },
    })) as Record<string, unknown>;
    expect(done).toMatchObject({ approved: true, booked: true });
  });

  it("resumes with both input and command, as Agent Chat UI sends them: the command wins", async () => {
    const thread = await client.threads.create();
    const paused = (await client.runs.wait(thread.thread_id, "booking", {
      input: { request: "move it" },
    })) as Record<string, unknown>;
    expect(paused.__interrupt__).toHaveLength(1);
    const done = (await client.runs.wait(thread.thread_id, "booking", {
      input: {},
      command: { resume: { approve: true } },
    })) as Record<string, unknown>;
    expect(done).toMatchObject({ approved: true, booked: true });
    expect(done.__interrupt__).toBeUndefined();
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
  });

  it("refuses a webhook to a host the operator did not allow, before creating anything", async () => {
    const thread = await client.threads.create();
    await expect(
      client.runs.create(thread.thread_id, "chat", {
        input: { messages: [] },
        webhook: "https://attacker.example/collect",
      }),
    ).rejects.toThrow(/422/);
    expect(await client.runs.list(thread.thread_id)).toEqual([]);
  });

  async function waitForStatus(threadId: string, runId: string, status: RunStatus) {
    await waitFor(async () => (await client.runs.get(threadId, runId)).status === status);
  }
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 15_000) {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
