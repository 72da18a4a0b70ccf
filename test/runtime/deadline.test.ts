import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { createHandler } from "../../src/runtime/handler";
import { apiEvent, backendOptions, quietLogger, type Backend } from "./support";

const State = Annotation.Root({
  prepared: Annotation<boolean>(),
  slowDone: Annotation<boolean>(),
});

describe.each<Backend>(["memory", "dynamodb"])("deadline (%s checkpointer)", (backend) => {
  it("stops a run before the Lambda deadline, frees the lease, and a later call completes it", async () => {
    // The node outlasts the short Lambda's budget (2.5 s minus the 200 ms margin) by far, even on a loaded machine.
    const slowNodeMs = 6000;
    let prepareRuns = 0;
    let slowRuns = 0;
    const handler = createHandler({
      graph: ({ checkpointer }) =>
        new StateGraph(State)
          .addNode("prepare", () => {
            prepareRuns += 1;
            return { prepared: true };
          })
          .addNode("slow", async () => {
            slowRuns += 1;
            await new Promise((resolve) => setTimeout(resolve, slowNodeMs));
            return { slowDone: true };
          })
          .addEdge(START, "prepare")
          .addEdge("prepare", "slow")
          .addEdge("slow", END)
          .compile({ checkpointer }),
      deadlineMarginMs: 200,
      logger: quietLogger,
      metrics: false,
      ...(await backendOptions(backend)),
    });
    const tenantId = `tenant-deadline-${backend}`;
    const shortLambda = { awsRequestId: "short", getRemainingTimeInMillis: () => 2500 };
    const stopped = await handler(
      apiEvent("POST", "/threads/slow-1/runs/wait", {
        body: JSON.stringify({ assistant_id: "agent", input: {}, if_not_exists: "create" }),
        tenantId,
      }),
      shortLambda,
    );
    expect(stopped.statusCode).toBe(200);
    expect(JSON.parse(stopped.body!)).toEqual({
      __error__: { error: "TimeoutError", message: expect.stringMatching(/stopped early/) },
    });

    // The lease is free (status is not busy) and the thread kept its last checkpoint.
    const thread = await handler(apiEvent("GET", "/threads/slow-1", { tenantId }));
    expect(JSON.parse(thread.body!)).toMatchObject({ status: "error", values: { prepared: true } });
    const state = JSON.parse(
      (await handler(apiEvent("GET", "/threads/slow-1/state", { tenantId }))).body!,
    );
    expect(state.next).toEqual(["slow"]);

    // The simple face says the same, and how to continue.
    const simple = await handler(
      apiEvent("POST", "/invoke", {
        body: JSON.stringify({ thread_id: "slow-2", input: {} }),
        tenantId,
      }),
      shortLambda,
    );
    expect(simple.statusCode).toBe(202);
    expect(JSON.parse(simple.body!)).toMatchObject({
      status: "STOPPED_EARLY",
      continue_with: { thread_id: "slow-2", input: null },
    });

    const continued = await handler(
      apiEvent("POST", "/threads/slow-1/runs/wait", {
        body: JSON.stringify({ assistant_id: "agent", input: null }),
        tenantId,
      }),
      { awsRequestId: "long", getRemainingTimeInMillis: () => 30_000 },
    );
    expect(continued.statusCode).toBe(200);
    expect(JSON.parse(continued.body!)).toEqual({ prepared: true, slowDone: true });
    // `prepare` ran once per thread: the continuation started from the checkpoint after it.
    expect(prepareRuns).toBe(2);
    expect(slowRuns).toBe(3);
  });
});
