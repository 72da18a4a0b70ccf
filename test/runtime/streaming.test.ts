import type { Client } from "@langchain/langgraph-sdk";
import { nestedGraph, slowGraph, streamingChatGraph } from "./graphs";
import { createHandler } from "../../src/runtime/handler";
import {
  apiEvent,
  backendOptions,
  quietLogger,
  startTestServer,
  type Backend,
  type TestServer,
} from "./support";
import { sdkMatrix } from "../support/sdk-majors";

type Part = { event: string; data: unknown };
type Message = { type: string; content: string; id?: string };

/** Both backends with the current SDK, and the in-memory one with SDK 2.0.0 too. */
const cases = sdkMatrix<Backend>(["memory", "dynamodb"], ["memory"]);

/**
 * Streaming runs through the official @langchain/langgraph-sdk Client, unchanged, against the dev server: every
 * stream mode, subgraph namespaces, joins, reconnection with Last-Event-ID, and the rules every run follows.
 */
describe.each(cases)("streaming runs ($backend, SDK $sdk.version)", ({ backend, sdk }) => {
  let server: TestServer;
  let client: Client;
  const counts = { started: 0, finished: 0 };

  beforeAll(async () => {
    server = await startTestServer({
      assistants: { chat: streamingChatGraph(), slow: slowGraph(counts, 2), nested: nestedGraph },
      ...(await backendOptions(backend)),
    });
    client = await server.client(`tenant-stream-${backend}`, sdk);
  });

  afterAll(async () => {
    await server.close();
  });

  async function collect(stream: AsyncIterable<Part>): Promise<Part[]> {
    const parts: Part[] = [];
    for await (const part of stream) parts.push({ event: part.event, data: part.data });
    return parts;
  }
  const hi = { messages: [{ role: "human", content: "hi" }] };

  it("streams values by default: metadata first, then each state", async () => {
    const thread = await client.threads.create();
    const parts = await collect(client.runs.stream(thread.thread_id, "chat", { input: hi }));
    expect(parts[0]).toEqual({
      event: "metadata",
      data: { run_id: expect.any(String), attempt: 1 },
    });
    expect(parts.slice(1).map((part) => part.event)).toEqual(["values", "values"]);
    expect(parts.at(-1)!.data).toMatchObject({
      messages: [
        { type: "human", content: "hi" },
        { type: "ai", content: "hello there" },
      ],
    });
  });

  it("gives events the client's thread id, and leaves text containing the saver's scoped id as written", async () => {
    const thread = await client.threads.create();
    // What a shared saver keys the thread by (the tenant, then the id): only whole ids are the client's business.
    const text = `${`tenant-stream-${backend}`}#${thread.thread_id} is my ticket`;
    const parts = await collect(
      client.runs.stream(thread.thread_id, "chat", {
        input: { messages: [{ role: "human", content: text }] },
        streamMode: ["values", "debug"],
      }),
    );
    const values = parts.filter((part) => part.event === "values").at(-1)!.data as {
      messages: Array<{ content: string }>;
    };
    expect(values.messages.map((message) => message.content)).toEqual([text, "hello there"]);
    const debug = parts.filter((part) => part.event === "debug").map((part) => part.data) as Array<{
      type: string;
      payload: { checkpoint?: { thread_id: string } };
    }>;
    const checkpoint = debug.find((entry) => entry.type === "checkpoint")!.payload;
    expect(checkpoint.checkpoint?.thread_id).toBe(thread.thread_id);
  });

  it("streams tokens: messages-tuple as [chunk, metadata], messages as partial/complete", async () => {
    const thread = await client.threads.create();
    const tuples = await collect(
      client.runs.stream(thread.thread_id, "chat", { input: hi, streamMode: "messages-tuple" }),
    );
    const chunks = tuples.filter((part) => part.event === "messages");
    expect(chunks.length).toBeGreaterThan(3);
    const [first, metadata] = chunks[0]!.data as [Message, Record<string, unknown>];
    // Chunks go out as dicts (as LangGraph Server serializes them), typed as their message.
    expect(first.type).toBe("ai");
    expect(metadata).toMatchObject({ langgraph_node: "agent" });
    expect(chunks.map((part) => (part.data as [Message])[0].content).join("")).toBe("hello there");

    const legacy = await collect(
      client.runs.stream(thread.thread_id, "chat", { input: hi, streamMode: "messages" }),
    );
    const names = new Set(legacy.map((part) => part.event));
    expect(names).toEqual(
      new Set(["metadata", "messages/metadata", "messages/partial", "messages/complete"]),
    );
    const partials = legacy.filter((part) => part.event === "messages/partial");
    expect((partials.at(-1)!.data as Message[])[0]!.content).toBe("hello there");
  });

  it("streams updates, custom, tasks, checkpoints and debug in one run", async () => {
    const thread = await client.threads.create();
    const parts = await collect(
      client.runs.stream(thread.thread_id, "chat", {
        input: hi,
        streamMode: ["updates", "custom", "tasks", "checkpoints", "debug"],
      }),
    );
    const byEvent = (name: string) => parts.filter((part) => part.event === name);
    expect(byEvent("updates").map((part) => Object.keys(part.data as object))).toEqual([["agent"]]);
    expect(byEvent("custom").map((part) => part.data)).toEqual([{ progress: "thinking" }]);
    expect(byEvent("tasks").map((part) => (part.data as { name: string }).name)).toEqual([
      "agent",
      "agent",
    ]);
    const checkpoints = byEvent("checkpoints").map(
      (part) => part.data as { metadata: { source: string; step: number }; next: string[] },
    );
    expect(checkpoints.map((checkpoint) => [checkpoint.metadata.step, checkpoint.next])).toEqual([
      [-1, ["__start__"]],
      [0, ["agent"]],
      [1, []],
    ]);
    const debug = byEvent("debug").map(
      (part) => part.data as { type: string; payload: { checkpoint?: { thread_id: string } } },
    );
    expect(debug.map((entry) => entry.type)).toContain("checkpoint");
    // Configs come out with the client's thread id and without callbacks or internal keys.
    const checkpoint = debug.find((entry) => entry.type === "checkpoint")!.payload;
    expect(checkpoint.checkpoint?.thread_id).toBe(thread.thread_id);
    expect(JSON.stringify(parts)).not.toMatch(/callbacks|"lc":1|tenant-stream/);
  });

  it("streams callback events (events mode)", async () => {
    const thread = await client.threads.create();
    const parts = await collect(
      client.runs.stream(thread.thread_id, "chat", { input: hi, streamMode: "events" }),
    );
    const kinds = new Set(
      parts
        .filter((part) => part.event === "events")
        .map((part) => (part.data as { event: string }).event),
    );
    for (const kind of ["on_chain_start", "on_chat_model_stream", "on_chain_end"]) {
      expect(kinds).toContain(kind);
    }
  });

  it("sends the first event before the run ends", async () => {
    const thread = await client.threads.create();
    const finishedBefore = counts.finished;
    // How many of the graph's two work steps had finished when each update came: an order, not a time.
    const seen: Array<{ update: string; workDone: number }> = [];
    for await (const part of client.runs.stream(thread.thread_id, "slow", {
      input: { delayMs: 700 },
      streamMode: "updates",
    })) {
      if (part.event !== "updates") continue;
      seen.push({
        update: Object.keys(part.data as object).join(),
        workDone: counts.finished - finishedBefore,
      });
    }
    expect(seen.map(({ update }) => update)).toEqual(["prepare", "work_1", "work_2"]);
    // "prepare" reached the client while the run still had work to do: nothing waited for the run's end.
    expect(seen[0]!.workDone).toBeLessThan(2);
    expect(counts.finished - finishedBefore).toBe(2);
  });

  it("namespaces subgraph events when stream_subgraphs is on, and leaves them out otherwise", async () => {
    const thread = await client.threads.create();
    const nested = await collect(
      client.runs.stream(thread.thread_id, "nested", {
        input: {},
        streamMode: "updates",
        streamSubgraphs: true,
      }),
    );
    const names = nested.map((part) => part.event).filter((name) => name !== "metadata");
    expect(names.filter((name) => /^updates\|inner:[0-9a-f-]{36}$/.test(name))).toHaveLength(2);
    expect(names.filter((name) => name === "updates")).toHaveLength(2);
    const flat = await collect(
      client.runs.stream(thread.thread_id, "nested", { input: {}, streamMode: "updates" }),
    );
    expect(flat.map((part) => part.event)).toEqual(["metadata", "updates", "updates"]);
  });

  it("answers 409 where a wait would (thread busy, reject), before any event", async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "slow", { input: { delayMs: 1_000 } });
    await expect(
      collect(client.runs.stream(thread.thread_id, "slow", { input: { delayMs: 0 } })),
    ).rejects.toThrow(/409/);
    await client.runs.join(thread.thread_id, run.run_id);
  });

  it("joins a background run's stream, and resumes after Last-Event-ID without a gap", async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "slow", {
      input: { delayMs: 300 },
      streamMode: ["updates", "values"],
      streamResumable: true,
    });
    const joined: Array<Part & { id?: string }> = [];
    for await (const part of client.runs.joinStream(thread.thread_id, run.run_id)) {
      joined.push(part as Part & { id?: string });
    }
    expect(joined.map((part) => part.event)).toEqual([
      "metadata",
      "values",
      "updates",
      "values",
      "updates",
      "values",
      "updates",
      "values",
    ]);
    // A client that got the first three events reconnects: it gets exactly the rest.
    const resumed = await fetch(
      `${server.url}/threads/${thread.thread_id}/runs/${run.run_id}/stream`,
      {
        headers: {
          authorization: `Bearer ${await server.token(`tenant-stream-${backend}`)}`,
          "last-event-id": "2",
        },
      },
    );
    const text = await resumed.text();
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
    expect(ids).toEqual([3, 4, 5, 6, 7]);
  });

  it("cancels the run when its client goes away, with on_disconnect cancel", async () => {
    const thread = await client.threads.create();
    const controller = new AbortController();
    let runId = "";
    try {
      for await (const part of client.runs.stream(thread.thread_id, "slow", {
        input: { delayMs: 20_000 },
        streamMode: "updates",
        onDisconnect: "cancel",
        signal: controller.signal,
      })) {
        if (part.event === "metadata") runId = (part.data as { run_id: string }).run_id;
        if (part.event === "updates") controller.abort();
      }
    } catch {
      // The abort ends the iteration with an AbortError.
    }
    await waitFor(
      async () => (await client.runs.get(thread.thread_id, runId)).status !== "running",
      25_000,
    );
    expect((await client.runs.get(thread.thread_id, runId)).status).toBe("interrupted");
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs: number) {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("a stream joined from another container (DynamoDB Local)", () => {
  it("reads the run's stored events, after Last-Event-ID, once the leg that emitted them is gone", async () => {
    const { tableName, dynamodbClient } = (await backendOptions("dynamodb")) as {
      tableName: string;
      dynamodbClient: import("@aws-sdk/client-dynamodb").DynamoDBClient;
    };
    const options = { tableName, dynamodbClient, logger: quietLogger, metrics: false as const };
    const first = createHandler({ ...options, assistants: { chat: streamingChatGraph() } });
    const created = await first.open(
      apiEvent("POST", "/threads/joined/runs/stream", {
        body: JSON.stringify({
          assistant_id: "chat",
          input: { messages: [{ role: "human", content: "hi" }] },
          stream_mode: ["messages-tuple", "values"],
          stream_resumable: true,
          if_not_exists: "create",
        }),
      }),
    );
    let streamed = "";
    for await (const chunk of created.stream!) streamed += chunk;
    const runId = /"run_id":"([^"]+)"/.exec(streamed)![1]!;
    const total = [...streamed.matchAll(/^id: (\d+)$/gm)].length;
    expect(total).toBeGreaterThan(5);

    // Another container: its own handler and process state, the same table.
    const other = createHandler({ ...options, assistants: { chat: streamingChatGraph() } });
    const event = apiEvent("GET", `/threads/joined/runs/${runId}/stream`);
    event.headers = { ...event.headers, "last-event-id": "3" };
    const joined = await other.open(event);
    let rest = "";
    for await (const chunk of joined.stream!) rest += chunk;
    const ids = [...rest.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
    expect(ids).toEqual(Array.from({ length: total - 4 }, (_, index) => index + 4));
    // The same frames, byte for byte, as the stream that ran the graph sent after event 3.
    expect(rest).toBe(streamed.slice(streamed.indexOf("event:", streamed.indexOf("id: 3\n"))));
  });
});
