import { AIMessage } from "@langchain/core/messages";
import { END, MessagesValue, START, StateGraph, StateSchema } from "@langchain/langgraph";
import type { Client as LangGraphClient } from "@langchain/langgraph-sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { GraphFactory } from "../../src/runtime/types";
import {
  backendOptions,
  bookingAssistants,
  startTestServer,
  type Backend,
  type TestServer,
} from "./support";

/** The graph a tool call runs: a typed input (no other field allowed), an answer computed from it. */
const AnswerInput = z.object({ question: z.string() });
const AnswerState = z.object({ question: z.string(), answer: z.string() });

/**
 * `/mcp` with the official MCP SDK's Client and Streamable HTTP transport over loopback, against the dev server as
 * `npm start` wires it (real JWT checks), on both backends.
 */
describe.each<Backend>(["memory", "dynamodb"])("MCP endpoint via the MCP SDK (%s)", (backend) => {
  let server: TestServer;
  let alice: LangGraphClient;
  let mallory: LangGraphClient;
  /** Questions the answer graph was run with, in order. */
  const asked: string[] = [];

  const answer: GraphFactory = ({ checkpointer }) =>
    new StateGraph(AnswerState, { input: AnswerInput })
      .addNode("reply", (state) => {
        asked.push(state.question);
        return { answer: `${state.question.length} characters asked` };
      })
      .addEdge(START, "reply")
      .addEdge("reply", END)
      .compile({ checkpointer });

  const broken: GraphFactory = ({ checkpointer }) =>
    new StateGraph(AnswerState, { input: AnswerInput })
      .addNode("reply", () => {
        throw new RangeError("the oracle is out");
      })
      .addEdge(START, "reply")
      .addEdge("reply", END)
      .compile({ checkpointer });

  /** A chat graph: its output holds LangChain messages. */
  const chat: GraphFactory = ({ checkpointer }) =>
    new StateGraph(new StateSchema({ messages: MessagesValue }))
      .addNode("reply", () => ({ messages: [new AIMessage({ id: "ai-1", content: "hello" })] }))
      .addEdge(START, "reply")
      .addEdge("reply", END)
      .compile({ checkpointer });

  beforeAll(async () => {
    server = await startTestServer({
      assistants: { ...bookingAssistants(), answer, broken, chat },
      ...(await backendOptions(backend)),
    });
    alice = await server.client("tenant-alice");
    mallory = await server.client("tenant-mallory");
  });

  afterAll(async () => {
    await server.close();
  });

  /** An MCP client connected to `/mcp` with a tenant's token (none: no Authorization header). */
  async function connect(tenantId?: string): Promise<Client> {
    const headers: Record<string, string> =
      tenantId === undefined ? {} : { Authorization: `Bearer ${await server.token(tenantId)}` };
    const client = new Client({ name: "memory-table-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers },
      }),
    );
    return client;
  }

  async function withClient<T>(tenantId: string, use: (client: Client) => Promise<T>): Promise<T> {
    const client = await connect(tenantId);
    try {
      return await use(client);
    } finally {
      await client.close();
    }
  }

  function textOf(result: CallToolResult): string {
    const [first] = result.content;
    if (first?.type !== "text")
      throw new Error(`expected text content, got ${JSON.stringify(first)}`);
    return first.text;
  }

  it("lists each assistant as a tool with its graph's input schema", async () => {
    const { tools } = await withClient("tenant-alice", (client) => client.listTools());
    expect(tools.map((tool) => tool.name).sort()).toEqual(["answer", "booking", "broken", "chat"]);
    const answerTool = tools.find((tool) => tool.name === "answer")!;
    expect(answerTool.inputSchema).toMatchObject({
      type: "object",
      properties: { question: { type: "string" } },
      additionalProperties: false,
    });
    // A graph whose state carries no schema at run time (Annotation) takes any object.
    expect(tools.find((tool) => tool.name === "booking")!.inputSchema).toEqual({ type: "object" });
  });

  it("runs the assistant statelessly on a call and answers with the graph's output", async () => {
    const before = asked.length;
    const result = (await withClient("tenant-alice", (client) =>
      client.callTool({ name: "answer", arguments: { question: "Why is the sky blue?" } }),
    )) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const output = { question: "Why is the sky blue?", answer: "20 characters asked" };
    expect(result.structuredContent).toEqual(output);
    expect(JSON.parse(textOf(result))).toEqual(output);
    expect(asked.slice(before)).toEqual(["Why is the sky blue?"]);
    // Stateless: the run's thread was made for it and is gone.
    expect(await alice.threads.search({ limit: 100 })).toEqual([]);
  });

  it("writes messages of the output as plain dicts, as every route writes values", async () => {
    const result = (await withClient("tenant-alice", (client) =>
      client.callTool({
        name: "chat",
        arguments: { messages: [{ type: "human", content: "hi", id: "human-1" }] },
      }),
    )) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const messages = [
      expect.objectContaining({ type: "human", content: "hi", id: "human-1" }),
      expect.objectContaining({ type: "ai", content: "hello", id: "ai-1" }),
    ];
    expect(result.structuredContent).toEqual({ messages });
    expect(JSON.parse(textOf(result))).toEqual({ messages });
    expect(textOf(result)).not.toContain('"lc"');
  });

  it("refuses a client without a token (401) and answers GET and DELETE with 405", async () => {
    const refused = connect();
    await expect(refused).rejects.toBeInstanceOf(StreamableHTTPError);
    await expect(refused).rejects.toMatchObject({ code: 401 });
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "raw", version: "1" },
      },
    };
    const raw = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify(initialize),
    });
    expect(raw.status).toBe(401);
    const authorization = `Bearer ${await server.token("tenant-alice")}`;
    for (const method of ["GET", "DELETE"]) {
      const response = await fetch(`${server.url}/mcp`, {
        method,
        headers: { authorization, accept: "text/event-stream" },
      });
      expect({ method, status: response.status, allow: response.headers.get("allow") }).toEqual({
        method,
        status: 405,
        allow: "POST",
      });
    }
    // No session: the answer to an initialize names none.
    const initialized = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: {
        authorization,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify(initialize),
    });
    expect(initialized.status).toBe(200);
    expect(initialized.headers.get("mcp-session-id")).toBeNull();
    expect(await initialized.json()).toMatchObject({
      id: 1,
      result: { serverInfo: { name: "memory-table" }, capabilities: { tools: {} } },
    });
  });

  it("shows a tenant its own assistants only, and refuses a call to another tenant's", async () => {
    const created = await alice.assistants.create({
      graphId: "answer",
      name: "alice_oracle",
      description: "Answers Alice's questions",
    });
    const aliceTools = await withClient("tenant-alice", (client) => client.listTools());
    expect(aliceTools.tools.find((tool) => tool.name === "alice_oracle")).toMatchObject({
      description: "Answers Alice's questions",
      inputSchema: { properties: { question: { type: "string" } } },
    });
    const malloryTools = await withClient("tenant-mallory", (client) => client.listTools());
    expect(malloryTools.tools.map((tool) => tool.name).sort()).toEqual([
      "answer",
      "booking",
      "broken",
      "chat",
    ]);

    const before = asked.length;
    const stolen = withClient("tenant-mallory", (client) =>
      client.callTool({ name: "alice_oracle", arguments: { question: "Alice's secret?" } }),
    );
    await expect(stolen).rejects.toMatchObject({
      code: ErrorCode.InvalidParams,
      message: expect.stringContaining("Tool alice_oracle not found"),
    });
    expect(asked.length).toBe(before);
    expect(await mallory.threads.search({ limit: 100 })).toEqual([]);

    const own = (await withClient("tenant-alice", (client) =>
      client.callTool({ name: "alice_oracle", arguments: { question: "Mine?" } }),
    )) as CallToolResult;
    expect(own.structuredContent).toEqual({ question: "Mine?", answer: "5 characters asked" });
    await alice.assistants.delete(created.assistant_id);
  });

  it("answers an unknown tool with an MCP error", async () => {
    const call = withClient("tenant-alice", (client) =>
      client.callTool({ name: "no_such_agent", arguments: {} }),
    );
    await expect(call).rejects.toBeInstanceOf(McpError);
    await expect(call).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
  });

  it("refuses arguments that do not match the input schema, running and writing nothing", async () => {
    const before = asked.length;
    for (const args of [{ question: 42 }, { question: "ok", extra: true }]) {
      const result = (await withClient("tenant-alice", (client) =>
        client.callTool({ name: "answer", arguments: args }),
      )) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(
        /^Input validation error: Invalid arguments for tool answer: /,
      );
    }
    expect(asked.length).toBe(before);
    expect(await alice.threads.search({ limit: 100 })).toEqual([]);
  });

  it("answers a graph's failure and a pause for a human as tool errors", async () => {
    const failed = (await withClient("tenant-alice", (client) =>
      client.callTool({ name: "broken", arguments: { question: "?" } }),
    )) as CallToolResult;
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toMatch(/^RangeError: /);

    const paused = (await withClient("tenant-alice", (client) =>
      client.callTool({ name: "booking", arguments: { request: "a table for two" } }),
    )) as CallToolResult;
    expect(paused.isError).toBe(true);
    expect(textOf(paused)).toContain("cannot resume");
    // The threads made for both calls are gone, the paused one too.
    expect(await alice.threads.search({ limit: 100 })).toEqual([]);
  });
});

describe("MCP endpoint: a call longer than the request's time (memory)", () => {
  let server: TestServer;
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let finished: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    finished = resolve;
  });

  /** Waits for the test to let it go: it outlives any request's time however fast the machine is. */
  const slow: GraphFactory = ({ checkpointer }) =>
    new StateGraph(AnswerState, { input: AnswerInput })
      .addNode("reply", async (state) => {
        await gate;
        finished();
        return { answer: state.question };
      })
      .addEdge(START, "reply")
      .addEdge("reply", END)
      .compile({ checkpointer });

  beforeAll(async () => {
    // A request's time as API Gateway's 30 s scaled down: the run outlives it.
    server = await startTestServer({
      assistants: { slow },
      ...(await backendOptions("memory")),
      defaultRemainingMs: 4_000,
      deadlineMarginMs: 500,
    });
  });

  afterAll(async () => {
    release();
    await server.close();
  });

  it("answers a tool error naming the run, which goes on in the background", async () => {
    const mcp = new Client({ name: "memory-table-test", version: "1.0.0" });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: {
          headers: { Authorization: `Bearer ${await server.token("tenant-slow")}` },
        },
      }),
    );
    const result = (await mcp.callTool({
      name: "slow",
      arguments: { question: "take your time" },
    })) as CallToolResult;
    await mcp.close();
    expect(result.isError).toBe(true);
    expect(result.content[0]).toEqual({
      type: "text",
      text: expect.stringMatching(/^TimeoutError: Run \S+ continues in the background/),
    });
    release();
    await done;
  });
});

describe("MCP endpoint on a handler without a checkpointer", () => {
  let server: TestServer;

  const answer: GraphFactory = () =>
    new StateGraph(AnswerState, { input: AnswerInput })
      .addNode("reply", (state) => ({ answer: state.question.toUpperCase() }))
      .addEdge(START, "reply")
      .addEdge("reply", END)
      .compile();

  beforeAll(async () => {
    server = await startTestServer({
      assistants: { ...bookingAssistants(), answer },
      checkpointer: false,
    });
  });

  afterAll(async () => {
    await server.close();
  });

  it("runs a call in the request, and answers a known refusal as a JSON-RPC error with its message", async () => {
    const mcp = new Client({ name: "memory-table-test", version: "1.0.0" });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: {
          headers: { Authorization: `Bearer ${await server.token("tenant-stateless")}` },
        },
      }),
    );
    try {
      const result = (await mcp.callTool({
        name: "answer",
        arguments: { question: "loud" },
      })) as CallToolResult;
      expect(result.structuredContent).toEqual({ question: "loud", answer: "LOUD" });
      // Pausing needs a checkpointer (CheckpointerRequiredError, a 400 on the HTTP routes).
      await expect(
        mcp.callTool({ name: "booking", arguments: { request: "a table" } }),
      ).rejects.toMatchObject({
        code: ErrorCode.InvalidRequest,
        message: expect.stringContaining("checkpointer"),
      });
    } finally {
      await mcp.close();
    }
  });
});
