import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { createHandler, type ApiHandler } from "../../src/runtime/handler";
import { apiEvent, backendOptions, quietLogger, type Backend } from "./support";

const State = Annotation.Root({
  prepared: Annotation<boolean>(),
  slowDone: Annotation<boolean>(),
});

interface SlowGraph {
  handler: ApiHandler;
  counts: { prepare: number; slow: number; active: number; maxActive: number };
}

/** prepare -> slow -> end; `slow` ignores the AbortSignal unless `honourSignal`. */
async function slowGraph(
  backend: Backend,
  slowNodeMs: number,
  deadlineMarginMs: number,
  honourSignal = false,
): Promise<SlowGraph> {
  const counts = { prepare: 0, slow: 0, active: 0, maxActive: 0 };
  const handler = createHandler({
    graph: ({ checkpointer }) =>
      new StateGraph(State)
        .addNode("prepare", () => {
          counts.prepare += 1;
          return { prepared: true };
        })
        .addNode("slow", async (_state, config: LangGraphRunnableConfig) => {
          counts.slow += 1;
          counts.active += 1;
          counts.maxActive = Math.max(counts.maxActive, counts.active);
          try {
            await new Promise<void>((resolve, reject) => {
              const timer = setTimeout(resolve, slowNodeMs);
              if (honourSignal) {
                config.signal?.addEventListener("abort", () => {
                  clearTimeout(timer);
                  reject(new Error("aborted"));
                });
              }
            });
          } finally {
            counts.active -= 1;
          }
          return { slowDone: true };
        })
        .addEdge(START, "prepare")
        .addEdge("prepare", "slow")
        .addEdge("slow", END)
        .compile({ checkpointer }),
    deadlineMarginMs,
    logger: quietLogger,
    metrics: false,
    ...(await backendOptions(backend)),
  });
  return { handler, counts };
}

const longLambda = { awsRequestId: "long", getRemainingTimeInMillis: () => 30_000 };

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000) {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each<Backend>(["memory", "dynamodb"])("deadline (%s checkpointer)", (backend) => {
  it("hands a waited run over to the background before the Lambda deadline; the next leg waits for the aborted node, then completes it", async () => {
    // The request may run the graph for 5 s less the 800 ms margin and 2 s kept to answer; the node takes 3 s
    // and ignores the abort, so it outlives the request's leg.
    const { handler, counts } = await slowGraph(backend, 3000, 800);
    const tenantId = `tenant-deadline-${backend}`;
    const shortLambda = { awsRequestId: "short", getRemainingTimeInMillis: () => 5000 };
    const stopped = await handler(
      apiEvent("POST", "/threads/slow-1/runs/wait", {
        body: JSON.stringify({ assistant_id: "agent", input: {}, if_not_exists: "create" }),
        tenantId,
      }),
      shortLambda,
    );
    expect(stopped.statusCode).toBe(200);
    expect(JSON.parse(stopped.body!)).toEqual({
      __error__: {
        error: "TimeoutError",
        message: expect.stringMatching(/continues in the background/),
      },
    });
    const location = stopped.headers["content-location"];
    expect(location).toMatch(/^\/threads\/slow-1\/runs\/[0-9a-f-]{36}$/);

    // The run still holds the thread: another waited run is refused (multitask strategy reject).
    const another = await handler(
      apiEvent("POST", "/threads/slow-1/runs/wait", {
        body: JSON.stringify({ assistant_id: "agent", input: null }),
        tenantId,
      }),
      longLambda,
    );
    expect(another.statusCode).toBe(409);
    expect(counts.slow).toBe(1);

    const joined = await handler(apiEvent("GET", `${location}/join`, { tenantId }), longLambda);
    expect(joined.statusCode).toBe(200);
    expect(JSON.parse(joined.body!)).toEqual({ prepared: true, slowDone: true });
    const run = JSON.parse((await handler(apiEvent("GET", location!, { tenantId }))).body!);
    expect(run.status).toBe("success");
    // `prepare` ran once: the next leg started from the checkpoint after it, and only once the aborted `slow`
    // had ended (its lease kept until the stopped request's deadline), so `slow` never overlapped itself.
    expect(counts.prepare).toBe(1);
    expect(counts.slow).toBe(2);
    expect(counts.maxActive).toBe(1);
    const thread = await handler(apiEvent("GET", "/threads/slow-1", { tenantId }));
    expect(JSON.parse(thread.body!)).toMatchObject({ status: "idle" });
  });

  it("the simple face says how to continue; the continuation runs once the stopped run's lease lapsed", async () => {
    const { handler, counts } = await slowGraph(backend, 3000, 800, true);
    const tenantId = `tenant-deadline-signal-${backend}`;
    const simple = await handler(
      apiEvent("POST", "/invoke", {
        body: JSON.stringify({ thread_id: "slow-2", input: {} }),
        tenantId,
      }),
      { awsRequestId: "short", getRemainingTimeInMillis: () => 1500 },
    );
    expect(simple.statusCode).toBe(202);
    expect(JSON.parse(simple.body!)).toMatchObject({
      status: "STOPPED_EARLY",
      continue_with: { thread_id: "slow-2", input: null },
    });
    expect(counts.active).toBe(0);
    // The lease lapses at the stopped run's Lambda deadline (1.5 s after it started).
    await waitFor(async () => {
      const status = await handler(apiEvent("GET", "/threads/slow-2/status", { tenantId }));
      return JSON.parse(status.body!).status === "ERROR";
    });
    const continued = await handler(
      apiEvent("POST", "/invoke", {
        body: JSON.stringify({ thread_id: "slow-2", input: null }),
        tenantId,
      }),
      longLambda,
    );
    expect(continued.statusCode).toBe(200);
    expect(JSON.parse(continued.body!)).toMatchObject({
      status: "COMPLETED",
      result: { prepared: true, slowDone: true },
    });
    expect(counts.prepare).toBe(1);
  });
});
