import type { Client, Run } from "@langchain/langgraph-sdk";
import { heldGraph, Latches } from "./graphs";
import {
  backendOptions,
  bookingAssistants,
  startTestServer,
  type Backend,
  type TestServer,
} from "./support";

type HeldValues = { steps: string[] };
const BURST = 8;

/**
 * Runs racing for one thread through the official SDK: bursts of background runs with the strategies that never
 * refuse a busy thread (enqueue, interrupt, rollback) contend on the thread record's conditional writes, and are
 * still all accepted; concurrent resumes of a paused thread let exactly one through and leave no failed run.
 */
describe("bursts of runs on one busy thread (dynamodb checkpointer)", () => {
  let server: TestServer;
  let client: Client;
  const latches = new Latches();

  beforeAll(async () => {
    server = await startTestServer({
      assistants: { held: heldGraph(latches) },
      ...(await backendOptions("dynamodb")),
    });
    client = await server.client("tenant-burst");
  });

  afterAll(async () => {
    latches.releaseAll();
    await server.close();
  });

  /** A thread whose run `<prefix>-busy` holds it (in its `held` node) while the burst comes. */
  async function busyThread(prefix: string) {
    const thread = await client.threads.create();
    const latch = latches.hold(`${prefix}-busy`);
    const busy = await client.runs.create(thread.thread_id, "held", {
      input: { label: `${prefix}-busy` },
    });
    await latch.entered;
    return { threadId: thread.thread_id, busy, latch };
  }

  /** `BURST` runs created at once with one strategy; each outcome as the SDK saw it. */
  function burst(threadId: string, prefix: string, strategy: "enqueue" | "interrupt" | "rollback") {
    return Promise.allSettled(
      Array.from({ length: BURST }, (_, index) =>
        client.runs.create(threadId, "held", {
          input: { label: `${prefix}-${index}` },
          multitaskStrategy: strategy,
        }),
      ),
    );
  }

  function accepted(outcomes: PromiseSettledResult<Run>[]): Run[] {
    const refused = outcomes.flatMap((item) =>
      item.status === "rejected" ? [String(item.reason)] : [],
    );
    expect(refused).toEqual([]);
    return outcomes.map((item) => (item as PromiseFulfilledResult<Run>).value);
  }

  /** The run's final status, or "gone" once a rollback deleted it. */
  async function settled(threadId: string, runId: string): Promise<string> {
    let status = "";
    await waitFor(async () => {
      try {
        status = (await client.runs.get(threadId, runId)).status;
      } catch (error) {
        if (!/404/.test(String(error))) throw error;
        status = "gone";
      }
      return status !== "pending" && status !== "running";
    });
    return status;
  }

  /** The labels of `runs` in the order their steps stand in the thread's state (each run's two steps together). */
  async function runOrder(threadId: string, prefix: string): Promise<string[]> {
    const steps = ((await client.threads.getState(threadId)).values as HeldValues).steps;
    expect(steps.slice(0, 2)).toEqual([`first:${prefix}-busy`, `held:${prefix}-busy`]);
    const order: string[] = [];
    for (let index = 2; index < steps.length; index += 2) {
      const label = steps[index]!.slice("first:".length);
      expect(steps.slice(index, index + 2)).toEqual([`first:${label}`, `held:${label}`]);
      order.push(label);
    }
    return order;
  }

  /** The label a run was created with (the SDK's Run type leaves out the kwargs the server answers with). */
  const labelOf = (run: Run) =>
    (run as Run & { kwargs: { input: { label: string } } }).kwargs.input.label;

  it("enqueue: none of 8 concurrent creates is refused, and all 8 run to success, one after another, each once", async () => {
    const { threadId, busy, latch } = await busyThread("enq");
    const runs = accepted(await burst(threadId, "enq", "enqueue"));
    latch.release();

    expect(await settled(threadId, busy.run_id)).toBe("success");
    for (const run of runs) expect(await settled(threadId, run.run_id)).toBe("success");
    expect((await runOrder(threadId, "enq")).sort()).toEqual(runs.map(labelOf).sort());
    expect((await client.threads.get(threadId)).status).toBe("idle");
  });

  // Concurrent creates run in the order their enqueues were acknowledged, which can differ from their
  // created_at by the time contention held a write back: a create that answered first runs first.

  it.each(["interrupt", "rollback"] as const)(
    "%s: none of 8 concurrent creates is refused; the runs replaced end, the last one standing succeeds",
    async (strategy) => {
      const prefix = strategy.slice(0, 3);
      const { threadId, busy, latch } = await busyThread(prefix);
      const runs = accepted(await burst(threadId, prefix, strategy));

      const replaced = strategy === "rollback" ? "gone" : "interrupted";
      expect(await settled(threadId, busy.run_id)).toBe(replaced);
      const statuses: string[] = [];
      for (const run of runs) statuses.push(await settled(threadId, run.run_id));
      expect(statuses.every((status) => status === "success" || status === replaced)).toBe(true);
      expect(statuses).toContain("success");
      // The runs that succeeded ran one after another on one state; a rolled-back run left nothing in it.
      const state = await client.threads.getState(threadId);
      const steps = (state.values as HeldValues).steps;
      const succeeded = runs.filter((_, index) => statuses[index] === "success");
      for (const run of succeeded) {
        const label = labelOf(run);
        expect(steps.filter((step) => step.endsWith(`:${label}`))).toEqual([
          `first:${label}`,
          `held:${label}`,
        ]);
      }
      if (strategy === "rollback") {
        // Every checkpoint left is one of a run that stands; none is a rolled-back run's.
        const standing = new Set(succeeded.map((run) => run.run_id));
        const history = await client.threads.getHistory(threadId, { limit: 1000 });
        const strays = history.filter((item) => !standing.has(String(item.metadata?.run_id)));
        expect(
          strays.map((item) => [item.metadata?.run_id, (item.values as HeldValues).steps]),
        ).toEqual([]);
        expect(steps).toHaveLength(2 * succeeded.length);
      }
      expect((await client.threads.get(threadId)).status).toBe("idle");
      latch.release();
    },
  );
});

describe.each<Backend>(["memory", "dynamodb"])(
  "concurrent resumes of a paused thread (%s checkpointer)",
  (backend) => {
    let server: TestServer;
    let client: Client;
    let booked = 0;

    beforeAll(async () => {
      server = await startTestServer({
        assistants: bookingAssistants(() => {
          booked += 1;
        }),
        ...(await backendOptions(backend)),
      });
      client = await server.client(`tenant-resumes-${backend}`);
    });

    afterAll(async () => {
      await server.close();
    });

    it("of 10 concurrent runs.wait resumes, exactly one books; the others answer 409 and leave no failed run (5 rounds)", async () => {
      for (let round = 0; round < 5; round++) {
        const thread = await client.threads.create();
        const paused = (await client.runs.wait(thread.thread_id, "booking", {
          input: { request: `round ${round}` },
        })) as { __interrupt__?: unknown[] };
        expect(paused.__interrupt__).toHaveLength(1);
        const before = booked;

        const outcomes = await Promise.allSettled(
          Array.from({ length: 10 }, () =>
            client.runs.wait(thread.thread_id, "booking", {
              command: { resume: { approve: true } },
            }),
          ),
        );
        const won = outcomes.filter((item) => item.status === "fulfilled");
        const refused = outcomes.flatMap((item) =>
          item.status === "rejected" ? [String(item.reason)] : [],
        );
        expect(won).toHaveLength(1);
        expect(refused).toHaveLength(9);
        for (const reason of refused) expect(reason).toMatch(/409/);
        expect((won[0] as PromiseFulfilledResult<unknown>).value).toMatchObject({ booked: true });
        expect(booked - before).toBe(1);

        const listed = await client.runs.list(thread.thread_id, { limit: 100 });
        expect(listed.filter((run) => run.status === "error")).toEqual([]);
        expect(listed.filter((run) => run.status === "success")).toHaveLength(2);
        expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
      }
    });
  },
);

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
