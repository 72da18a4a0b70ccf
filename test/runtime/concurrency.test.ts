import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { buildBookingGraph } from "../../src/examples/booking";
import { createHandler } from "../../src/runtime/handler";
import { LOCAL_CLIENT_CONFIG } from "../support/dynamodb-local";
import { localEndpoint } from "../support/dynamodb";
import { apiEvent, createTable, quietLogger } from "./support";

describe("run lease on DynamoDB Local", () => {
  it("lets exactly one of ten simultaneous resumes through separate handler instances run", async () => {
    const { tableName } = await createTable();
    let finalized = 0;
    // Ten containers: each its own handler, DynamoDB client and compiled graph.
    const handlers = Array.from({ length: 10 }, () =>
      createHandler({
        assistants: {
          booking: ({ checkpointer }) =>
            buildBookingGraph({
              checkpointer,
              onBooked: async () => {
                finalized += 1;
              },
            }),
        },
        tableName,
        dynamodbClient: new DynamoDBClient({ ...LOCAL_CLIENT_CONFIG, endpoint: localEndpoint() }),
        logger: quietLogger,
        metrics: false,
      }),
    );
    const body = (payload: unknown) => ({ body: JSON.stringify(payload), tenantId: "tenant-race" });
    const started = await handlers[0]!(
      apiEvent("POST", "/invoke", body({ thread_id: "race", input: { request: "x" } })),
    );
    expect(started.statusCode).toBe(202);

    const results = await Promise.all(
      handlers.map((handler) =>
        handler(
          apiEvent("POST", "/invoke", body({ thread_id: "race", resume: { approve: true } })),
        ),
      ),
    );
    const statuses = results.map((result) => result.statusCode).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    expect(finalized).toBe(1);

    const status = await handlers[5]!(
      apiEvent("GET", "/threads/race/status", { tenantId: "tenant-race" }),
    );
    expect(JSON.parse(status.body!)).toMatchObject({ status: "COMPLETED" });
  });

  it("answers 409 to a run on a busy thread and frees the lease afterwards", async () => {
    const { tableName, client } = await createTable();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered: () => void = () => undefined;
    const running = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const State = Annotation.Root({ n: Annotation<number>() });
    const handler = createHandler({
      graph: ({ checkpointer }) =>
        new StateGraph(State)
          .addNode("wait", async () => {
            entered();
            await gate;
            return { n: 1 };
          })
          .addEdge(START, "wait")
          .addEdge("wait", END)
          .compile({ checkpointer }),
      tableName,
      dynamodbClient: client,
      logger: quietLogger,
      metrics: false,
    });
    const event = () =>
      apiEvent("POST", "/invoke", {
        body: JSON.stringify({ thread_id: "busy", input: { n: 0 } }),
        tenantId: "tenant-busy",
      });
    const first = handler(event());
    // The first run holds the lease while its node waits at the gate.
    await running;
    const second = await handler(event());
    expect(second.statusCode).toBe(409);
    expect(JSON.parse(second.body!).detail).toMatch(/busy/);
    const busy = await handler(
      apiEvent("POST", "/threads/search", {
        body: JSON.stringify({ status: "busy" }),
        tenantId: "tenant-busy",
      }),
    );
    expect(JSON.parse(busy.body!).map((thread: { thread_id: string }) => thread.thread_id)).toEqual(
      ["busy"],
    );
    release();
    expect((await first).statusCode).toBe(200);
    expect((await handler(event())).statusCode).toBe(200);
  });
});
