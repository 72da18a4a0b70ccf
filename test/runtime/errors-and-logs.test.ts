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

  it("logs an outcome on the runs routes: paused, completed, failed, queued, cancelled, and a streamed run's end", async () => {
    const { logger, lines } = capture();
    const handler = createHandler({
      assistants: { ...bookingAssistants(), failing },
      checkpointer: new InMemorySaver(),
      logger,
      metrics: false,
    });
    const send = async (method: string, path: string, body?: unknown) => {
      const result = await handler(
        apiEvent(method, path, { body: body === undefined ? undefined : JSON.stringify(body) }),
      );
      const isJson = result.headers?.["content-type"]?.startsWith("application/json") === true;
      return {
        status: result.statusCode,
        body: result.body && isJson ? JSON.parse(result.body) : undefined,
        text: result.body ?? "",
      };
    };
    // The outcome each request's line says, in request order.
    const outcomes = () =>
      lines
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((line) => line.msg === "request")
        .map(({ route, statusCode, outcome }) => ({ route, statusCode, outcome }));

    const thread = "/threads/outcomes";
    expect((await send("POST", "/threads", { thread_id: "outcomes" })).status).toBe(200);
    const start = { assistant_id: "booking", input: { request: "r" } };
    expect((await send("POST", `${thread}/runs/wait`, start)).body.__interrupt__).toHaveLength(1);
    const approve = { assistant_id: "booking", command: { resume: { approve: true } } };
    expect((await send("POST", `${thread}/runs/wait`, approve)).body).toMatchObject({
      booked: true,
    });
    const background = await send("POST", `${thread}/runs`, start);
    expect(background.status).toBe(200);
    const joined = await send("GET", `${thread}/runs/${background.body.run_id}/join`);
    expect(joined.body.__interrupt__).toHaveLength(1);
    const streamed = await send("POST", `${thread}/runs/stream`, approve);
    expect(streamed.status).toBe(200);
    expect(streamed.text).toMatch(/"booked":true/);
    // A run waiting a minute to start: cancelled before it runs.
    const later = await send("POST", `${thread}/runs`, { ...start, after_seconds: 60 });
    expect((await send("POST", `${thread}/runs/${later.body.run_id}/cancel`)).status).toBe(202);
    const failed = await send("POST", "/threads/failing/runs/wait", {
      assistant_id: "failing",
      input: { secret: "s" },
      if_not_exists: "create",
    });
    expect(failed.body.__error__).toMatchObject({ error: "Error" });

    expect(outcomes()).toEqual([
      { route: "POST /threads", statusCode: 200, outcome: undefined },
      { route: "POST /threads/{thread_id}/runs/wait", statusCode: 200, outcome: "paused" },
      { route: "POST /threads/{thread_id}/runs/wait", statusCode: 200, outcome: "completed" },
      { route: "POST /threads/{thread_id}/runs", statusCode: 200, outcome: "queued" },
      { route: "GET /threads/{thread_id}/runs/{run_id}/join", statusCode: 200, outcome: "paused" },
      { route: "POST /threads/{thread_id}/runs/stream", statusCode: 200, outcome: "completed" },
      { route: "POST /threads/{thread_id}/runs", statusCode: 200, outcome: "queued" },
      {
        route: "POST /threads/{thread_id}/runs/{run_id}/cancel",
        statusCode: 202,
        outcome: "cancelled",
      },
      { route: "POST /threads/{thread_id}/runs/wait", statusCode: 200, outcome: "failed" },
    ]);
  });

  it("logs `running` for a join that ends before its run does", async () => {
    const { logger, lines } = capture();
    // Less time than the deadline margin and the answer's margin: a join waits no time at all.
    const handler = createHandler({
      ...{ assistants: bookingAssistants(), checkpointer: new InMemorySaver(), logger },
      ...{ metrics: false, defaultRemainingMs: 2_500, deadlineMarginMs: 500 },
    });
    const created = await handler(
      apiEvent("POST", "/threads/outcome-running/runs", {
        body: JSON.stringify({
          assistant_id: "booking",
          input: { request: "r" },
          if_not_exists: "create",
          after_seconds: 60,
        }),
      }),
    );
    const runId = (JSON.parse(created.body!) as { run_id: string }).run_id;
    const joined = await handler(apiEvent("GET", `/threads/outcome-running/runs/${runId}/join`));
    expect(joined.statusCode).toBe(408);
    // Nothing left waiting after the test.
    const cancel = apiEvent("POST", `/threads/outcome-running/runs/${runId}/cancel`);
    expect((await handler(cancel)).statusCode).toBe(202);
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged.filter((line) => line.msg === "request").map((line) => line.outcome)).toEqual([
      "queued",
      "running",
      "cancelled",
    ]);
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
