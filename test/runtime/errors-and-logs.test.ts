import { Writable } from "node:stream";
import { Annotation, END, interrupt, START, StateGraph } from "@langchain/langgraph";
import pino from "pino";
import { InMemorySaver } from "../../src/checkpoint/memory";
import { createHandler } from "../../src/runtime/handler";
import { apiEvent, bookingAssistants, quietLogger } from "./support";

const State = Annotation.Root({ secret: Annotation<string>(), answer: Annotation<string>() });

function capture(): { logger: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString("utf8").trim().split("\n"));
      done();
    },
  });
  return { logger: pino({ level: "info" }, stream), lines };
}

describe("graph errors, logs and metrics", () => {
  const failing = ({ checkpointer }: { checkpointer?: unknown }) =>
    new StateGraph(State)
      .addNode("explode", (state) => {
        throw new Error(`boom near ${state.secret}`);
      })
      .addEdge(START, "explode")
      .addEdge("explode", END)
      .compile({ checkpointer: checkpointer as InMemorySaver });

  it("answers a graph error with 200 __error__ (SDK) and a 500 with an error id (simple); the thread is in error", async () => {
    const handler = createHandler({
      graph: failing,
      checkpointer: new InMemorySaver(),
      logger: quietLogger,
      metrics: false,
    });
    const sdk = await handler(
      apiEvent("POST", "/threads/t1/runs/wait", {
        body: JSON.stringify({
          assistant_id: "agent",
          input: { secret: "s3" },
          if_not_exists: "create",
        }),
      }),
    );
    expect(sdk.statusCode).toBe(200);
    expect(JSON.parse(sdk.body!).__error__).toMatchObject({
      error: "Error",
      message: expect.stringMatching(/boom/),
    });
    const thread = await handler(apiEvent("GET", "/threads/t1"));
    expect(JSON.parse(thread.body!).status).toBe("error");

    const simple = await handler(
      apiEvent("POST", "/invoke", {
        body: JSON.stringify({ thread_id: "t2", input: { secret: "s3" } }),
      }),
    );
    expect(simple.statusCode).toBe(500);
    const body = JSON.parse(simple.body!);
    expect(body).toEqual({
      status: "ERROR",
      thread_id: "t2",
      detail: "The graph failed",
      error_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(simple.body).not.toMatch(/boom|s3|at /);
    const status = await handler(apiEvent("GET", "/threads/t2/status"));
    expect(JSON.parse(status.body!).status).toBe("ERROR");
  });

  it("logs one line per request without state, inputs, resume values or the authorization header", async () => {
    const { logger, lines } = capture();
    const metricLines: string[] = [];
    const handler = createHandler({
      assistants: {
        ask: ({ checkpointer }) =>
          new StateGraph(State)
            .addNode("ask", (state) => ({
              answer: interrupt<string, string>(`about ${state.secret}`),
            }))
            .addEdge(START, "ask")
            .addEdge("ask", END)
            .compile({ checkpointer }),
      },
      checkpointer: new InMemorySaver(),
      logger,
      metrics: (line) => metricLines.push(line),
    });
    const event = apiEvent("POST", "/invoke", {
      body: JSON.stringify({ thread_id: "log-1", input: { secret: "INPUT-SECRET-1" } }),
    });
    event.headers.authorization = "Bearer TOKEN-SECRET-2";
    expect((await handler(event)).statusCode).toBe(202);
    const resume = apiEvent("POST", "/invoke", {
      body: JSON.stringify({ thread_id: "log-1", resume: "RESUME-SECRET-3" }),
    });
    resume.headers.authorization = "Bearer TOKEN-SECRET-2";
    expect((await handler(resume)).statusCode).toBe(200);

    expect(lines).toHaveLength(2);
    const [first, second] = lines.map((line) => JSON.parse(line));
    expect(first).toMatchObject({
      requestId: "test-request",
      tenant: "tenant-a",
      thread: "log-1",
      assistant: "ask",
      route: "POST /invoke",
      statusCode: 202,
      outcome: "paused",
      durationMs: expect.any(Number),
    });
    expect(second).toMatchObject({ statusCode: 200, outcome: "completed" });
    const all = lines.join("\n");
    expect(all).not.toMatch(/SECRET/);

    expect(metricLines).toHaveLength(2);
    const metric = JSON.parse(metricLines[0]!);
    expect(metric._aws.CloudWatchMetrics[0].Namespace).toBe("MemoryTable");
    expect(metric).toMatchObject({
      Assistant: "ask",
      RunsStarted: 1,
      RunsPaused: 1,
      RunsCompleted: 0,
    });
    expect(JSON.parse(metricLines[1]!)).toMatchObject({
      RunsCompleted: 1,
      RunDuration: expect.any(Number),
    });
    expect(metricLines.join("\n")).not.toMatch(/SECRET/);
  });

  it("runs stateless without a checkpointer and answers 400 to what needs one", async () => {
    const previous = process.env.TABLE_NAME;
    delete process.env.TABLE_NAME;
    try {
      const echo = () =>
        new StateGraph(State)
          .addNode("echo", (state) => ({ answer: `echo ${state.secret}` }))
          .addEdge(START, "echo")
          .addEdge("echo", END)
          .compile();
      const handler = createHandler({ graph: echo, logger: quietLogger, metrics: false });
      const done = await handler(
        apiEvent("POST", "/invoke", {
          body: JSON.stringify({ thread_id: "s", input: { secret: "x" } }),
        }),
      );
      expect(done.statusCode).toBe(200);
      expect(JSON.parse(done.body!).result).toEqual({ secret: "x", answer: "echo x" });
      const resume = await handler(
        apiEvent("POST", "/invoke", { body: JSON.stringify({ thread_id: "s", resume: 1 }) }),
      );
      expect(resume.statusCode).toBe(400);
      expect(JSON.parse(resume.body!).detail).toMatch(/needs a checkpointer/);
      for (const [method, path] of [
        ["GET", "/threads/s"],
        ["POST", "/threads"],
        ["POST", "/threads/search"],
      ] as const) {
        const result = await handler(apiEvent(method, path, { body: "{}" }));
        expect(result.statusCode).toBe(400);
      }
      const booking = createHandler({
        assistants: bookingAssistants(),
        logger: quietLogger,
        metrics: false,
      });
      const paused = await booking(
        apiEvent("POST", "/invoke", {
          body: JSON.stringify({ thread_id: "s", input: { request: "x" } }),
        }),
      );
      expect(paused.statusCode).toBe(400);
    } finally {
      if (previous !== undefined) process.env.TABLE_NAME = previous;
    }
  });

  it("builds each assistant's graph once per container and tenant, not per request", async () => {
    let builds = 0;
    const handler = createHandler({
      assistants: {
        booking: (context) => {
          builds += 1;
          return bookingAssistants().booking!(context);
        },
      },
      checkpointer: new InMemorySaver(),
      logger: quietLogger,
      metrics: false,
    });
    for (let index = 0; index < 3; index += 1) {
      await handler(
        apiEvent("POST", "/invoke", {
          body: JSON.stringify({ thread_id: `b${index}`, input: { request: "x" } }),
        }),
      );
    }
    expect(builds).toBe(1);
    await handler(
      apiEvent("POST", "/invoke", {
        body: JSON.stringify({ thread_id: "b0", input: { request: "x" } }),
        tenantId: "tenant-b",
      }),
    );
    expect(builds).toBe(2);
  });
});
