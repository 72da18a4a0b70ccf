import { Writable } from "node:stream";
import { ScanCommand } from "@aws-sdk/client-dynamodb";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import pino from "pino";
import { createHandler, type ApiHandler } from "../../src/runtime/handler";
import {
  apiEvent,
  backendOptions,
  bookingAssistants,
  createTable,
  quietLogger,
  type Backend,
  type TableHandle,
} from "./support";

const invoke = (body: unknown, tenantId = "tenant-rules") =>
  apiEvent("POST", "/invoke", { body: JSON.stringify(body), tenantId });
const wait = (thread: string, body: unknown, tenantId = "tenant-rules") =>
  apiEvent("POST", `/threads/${thread}/runs/wait`, { body: JSON.stringify(body), tenantId });

describe.each<Backend>(["memory", "dynamodb"])("run rules (%s)", (backend) => {
  let handler: ApiHandler;
  let booked = 0;

  beforeAll(async () => {
    handler = createHandler({
      assistants: {
        ...bookingAssistants(() => {
          booked += 1;
        }),
        // A second assistant, so a resume can name the wrong one.
        other: bookingAssistants().booking!,
      },
      logger: quietLogger,
      metrics: false,
      ...(await backendOptions(backend)),
    });
  });

  it("answers 408 (re-send the original request) when the time left is under the margin before anything ran", async () => {
    const hurried = { awsRequestId: "hurried", getRemainingTimeInMillis: () => 1000 };
    const simple = await handler(
      invoke({ thread_id: "late", assistant_id: "booking", input: { request: "x" } }),
      hurried,
    );
    expect(simple.statusCode).toBe(408);
    const body = JSON.parse(simple.body!);
    expect(body.detail).toMatch(/re-send the original request/);
    expect(body).not.toHaveProperty("continue_with");
    const sdk = await handler(
      wait("late", { assistant_id: "booking", input: {}, if_not_exists: "create" }),
      hurried,
    );
    expect(sdk.statusCode).toBe(408);
    // Nothing was created: the thread does not exist.
    const thread = await handler(apiEvent("GET", "/threads/late", { tenantId: "tenant-rules" }));
    expect(thread.statusCode).toBe(404);
  });

  it("answers 409 to a re-sent start on a paused thread (simple face) and keeps the pending approval", async () => {
    const first = await handler(
      invoke({ thread_id: "resent", assistant_id: "booking", input: { request: "r" } }),
    );
    expect(first.statusCode).toBe(202);
    const before = JSON.parse(
      (await handler(apiEvent("GET", "/threads/resent/status", { tenantId: "tenant-rules" })))
        .body!,
    );
    const again = await handler(
      invoke({ thread_id: "resent", assistant_id: "booking", input: { request: "r" } }),
    );
    expect(again.statusCode).toBe(409);
    expect(JSON.parse(again.body!).detail).toMatch(/resume it .* or delete it/);
    const after = JSON.parse(
      (await handler(apiEvent("GET", "/threads/resent/status", { tenantId: "tenant-rules" })))
        .body!,
    );
    expect(after).toEqual(before);
    const resumed = await handler(
      invoke({ thread_id: "resent", assistant_id: "booking", resume: { approve: true } }),
    );
    expect(resumed.statusCode).toBe(200);
  });

  it("rejects a resume naming another assistant (409) without changing the thread", async () => {
    const paused = await handler(
      invoke({ thread_id: "mismatch", assistant_id: "booking", input: { request: "m" } }),
    );
    expect(paused.statusCode).toBe(202);
    const before = (
      await handler(apiEvent("GET", "/threads/mismatch", { tenantId: "tenant-rules" }))
    ).body!;
    const wrong = await handler(
      invoke({ thread_id: "mismatch", assistant_id: "other", resume: { approve: true } }),
    );
    expect(wrong.statusCode).toBe(409);
    expect(JSON.parse(wrong.body!).detail).toMatch(/Invalid assistant_id: expected booking/);
    const after = (
      await handler(apiEvent("GET", "/threads/mismatch", { tenantId: "tenant-rules" }))
    ).body!;
    expect(JSON.parse(after)).toEqual(JSON.parse(before));
    expect(JSON.parse(after)).toMatchObject({
      metadata: { graph_id: "booking" },
      status: "interrupted",
    });
    const bookedBefore = booked;
    const right = await handler(
      invoke({ thread_id: "mismatch", assistant_id: "booking", resume: { approve: true } }),
    );
    expect(right.statusCode).toBe(200);
    expect(booked).toBe(bookedBefore + 1);
  });
});

describe("a rejected resume writes nothing (DynamoDB Local)", () => {
  let table: TableHandle;
  let handler: ApiHandler;
  const snapshot = async () =>
    JSON.stringify(
      (
        (
          await table.client.send(
            new ScanCommand({ TableName: table.tableName, ConsistentRead: true }),
          )
        ).Items ?? []
      ).sort((a, b) => `${a.pk?.S}/${a.sk?.S}`.localeCompare(`${b.pk?.S}/${b.sk?.S}`)),
    );

  beforeAll(async () => {
    table = await createTable();
    handler = createHandler({
      assistants: { ...bookingAssistants(), other: bookingAssistants().booking! },
      tableName: table.tableName,
      dynamodbClient: table.client,
      logger: quietLogger,
      metrics: false,
    });
    const paused = await handler(
      invoke({ thread_id: "held", assistant_id: "booking", input: { request: "h" } }),
    );
    expect(paused.statusCode).toBe(202);
  });

  it.each([
    ["another assistant (simple)", invoke({ thread_id: "held", assistant_id: "other", resume: 1 })],
    [
      "another assistant (SDK)",
      wait("held", { assistant_id: "other", command: { resume: { approve: true } } }),
    ],
    [
      "an interrupt id that is not pending",
      wait("held", {
        assistant_id: "booking",
        command: { resume: { "0123456789abcdef0123456789abcdef": { approve: true } } },
      }),
    ],
    [
      "a start over the pending approval (simple)",
      invoke({ thread_id: "held", assistant_id: "booking", input: {} }),
    ],
  ])("%s -> 409, no item changed", async (_name, event) => {
    const before = await snapshot();
    const result = await handler(event);
    expect(result.statusCode).toBe(409);
    expect(await snapshot()).toBe(before);
  });
});

describe("a graph error's id", () => {
  it("appears in an error-level log line with the request id and error name, never the message", async () => {
    const lines: string[] = [];
    const logger = pino(
      { level: "info" },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(...chunk.toString("utf8").trim().split("\n"));
          done();
        },
      }),
    );
    const State = Annotation.Root({ secret: Annotation<string>() });
    const handler = createHandler({
      graph: ({ checkpointer }) =>
        new StateGraph(State)
          .addNode("explode", (state) => {
            throw new TypeError(`boom near ${state.secret}`);
          })
          .addEdge(START, "explode")
          .addEdge("explode", END)
          .compile({ checkpointer }),
      ...(await backendOptions("memory")),
      logger,
      metrics: false,
    });
    const result = await handler(invoke({ thread_id: "err", input: { secret: "STATE-SECRET" } }));
    expect(result.statusCode).toBe(500);
    const errorId = JSON.parse(result.body!).error_id as string;
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const line = logged.find((entry) => entry.errorId === errorId);
    expect(line).toMatchObject({
      level: 50,
      requestId: "test-request",
      err: { name: "TypeError" },
      thread: "err",
    });
    expect(lines.join("\n")).not.toMatch(/STATE-SECRET|boom/);
  });
});

describe("a GraphFactory that throws", () => {
  it("is a failed run: 200 __error__ on the SDK face, 500 with an error id on the simple face; the thread is untouched", async () => {
    let attempts = 0;
    const handler = createHandler({
      assistants: {
        ...bookingAssistants(),
        broken: () => {
          attempts += 1;
          throw new RangeError("bad CONFIG-SECRET");
        },
      },
      ...(await backendOptions("memory")),
      logger: quietLogger,
      metrics: false,
    });
    const sdk = await handler(
      wait("f1", { assistant_id: "broken", input: {}, if_not_exists: "create" }),
    );
    expect(sdk.statusCode).toBe(200);
    expect(JSON.parse(sdk.body!).__error__).toEqual({
      error: "RangeError",
      message: "The graph of assistant broken could not be built",
      error_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(sdk.body).not.toMatch(/CONFIG-SECRET/);
    const simple = await handler(invoke({ thread_id: "f2", assistant_id: "broken", input: {} }));
    expect(simple.statusCode).toBe(500);
    expect(JSON.parse(simple.body!)).toMatchObject({ error_id: expect.any(String) });
    expect(attempts).toBe(2);

    // A paused thread resumed with a broken assistant would be a mismatch; a start on an idle thread keeps it.
    const created = await handler(
      apiEvent("POST", "/threads", {
        body: JSON.stringify({ thread_id: "f3" }),
        tenantId: "tenant-rules",
      }),
    );
    expect(created.statusCode).toBe(200);
    await handler(wait("f3", { assistant_id: "broken", input: {} }));
    const thread = JSON.parse(
      (await handler(apiEvent("GET", "/threads/f3", { tenantId: "tenant-rules" }))).body!,
    );
    expect(thread.status).toBe("idle");
  });
});

describe("runs.wait without a checkpointer", () => {
  it("honours if_not_exists: 404 for a thread never created, a run with create", async () => {
    const previous = process.env.TABLE_NAME;
    delete process.env.TABLE_NAME;
    try {
      const State = Annotation.Root({ n: Annotation<number>() });
      const handler = createHandler({
        graph: () =>
          new StateGraph(State)
            .addNode("inc", ({ n }) => ({ n: n + 1 }))
            .addEdge(START, "inc")
            .addEdge("inc", END)
            .compile(),
        logger: quietLogger,
        metrics: false,
      });
      const missing = await handler(wait("never", { assistant_id: "agent", input: { n: 1 } }));
      expect(missing.statusCode).toBe(404);
      expect(JSON.parse(missing.body!).detail).toMatch(/if_not_exists "create"/);
      const created = await handler(
        wait("never", { assistant_id: "agent", input: { n: 1 }, if_not_exists: "create" }),
      );
      expect(created.statusCode).toBe(200);
      expect(JSON.parse(created.body!)).toEqual({ n: 2 });
    } finally {
      if (previous !== undefined) process.env.TABLE_NAME = previous;
    }
  });
});

describe("the run budget", () => {
  it("never exceeds API Gateway's 30 s, whatever time the Lambda has left", async () => {
    const State = Annotation.Root({ done: Annotation<boolean>() });
    const handler = createHandler({
      graph: ({ checkpointer }) =>
        new StateGraph(State)
          .addNode("slow", async (_state, config) => {
            await new Promise<void>((resolve, reject) => {
              const timer = setTimeout(resolve, 5000);
              config.signal?.addEventListener("abort", () => {
                clearTimeout(timer);
                reject(new Error("aborted"));
              });
            });
            return { done: true };
          })
          .addEdge(START, "slow")
          .addEdge("slow", END)
          .compile({ checkpointer }),
      // 30 s cap minus 29 s margin: a 1 s budget, although the function has 15 minutes left.
      deadlineMarginMs: 29_000,
      ...(await backendOptions("memory")),
      logger: quietLogger,
      metrics: false,
    });
    const result = await handler(invoke({ thread_id: "capped", input: {} }), {
      awsRequestId: "long-function",
      getRemainingTimeInMillis: () => 15 * 60_000,
    });
    expect(JSON.parse(result.body!)).toMatchObject({ status: "STOPPED_EARLY" });
  });
});
