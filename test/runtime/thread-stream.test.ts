import type { Client } from "@langchain/langgraph-sdk";
import { slowGraph } from "./graphs";
import { KEEP_ALIVE_MS } from "../../src/runtime/http/sse";
import { SDK_MAJORS } from "../support/sdk-majors";
import { backendOptions, startTestServer, type Backend, type TestServer } from "./support";

type Chunk = { id?: string; event: string; data: unknown };
type Lifecycle = { event: string; run_id: string };

/** Reads a stream until `enough` says so, then leaves it (the server sees its client go). */
async function gather(
  stream: AsyncIterable<Chunk>,
  enough: (chunks: Chunk[]) => boolean,
): Promise<Chunk[]> {
  const chunks: Chunk[] = [];
  for await (const chunk of stream) {
    chunks.push(chunk);
    if (enough(chunks)) break;
  }
  return chunks;
}

const ended = (chunks: Chunk[]) =>
  chunks.filter(
    (chunk) => chunk.event === "lifecycle" && (chunk.data as Lifecycle).event !== "started",
  ).length;

/**
 * The thread's stream through the official SDK's `threads.joinStream`: the thread's runs one after the other as
 * they run, with `Last-Event-ID` resumption and the `stream_mode` filter (run_modes, lifecycle), through each
 * major of the SDK (2.0.0 sends a list of modes as one JSON array, 1.15 repeats the parameter).
 */
describe.each(
  (["memory", "dynamodb"] as Backend[]).flatMap((backend) =>
    SDK_MAJORS.map((sdk) => ({ backend, sdk })),
  ),
)("thread stream ($backend, SDK $sdk.version)", ({ backend, sdk }) => {
  const tenant = `tenant-thread-stream-${backend}-${sdk.version}`;
  let server: TestServer;
  let client: Client;

  beforeAll(async () => {
    server = await startTestServer({
      assistants: { slow: slowGraph() },
      ...(await backendOptions(backend)),
    });
    client = await server.client(tenant, sdk);
  });

  afterAll(async () => {
    await server.close();
  });

  /** A thread with two runs, the second created once the first ended. */
  async function threadWithTwoRuns(): Promise<{ threadId: string; runIds: string[] }> {
    const thread = await client.threads.create();
    const runIds: string[] = [];
    for (const delayMs of [200, 0]) {
      const run = await client.runs.create(thread.thread_id, "slow", {
        input: { delayMs },
        streamMode: ["values"],
      });
      await client.runs.join(thread.thread_id, run.run_id);
      runIds.push(run.run_id);
    }
    return { threadId: thread.thread_id, runIds };
  }

  it("gives the thread's runs in order from the beginning, and resumes after any event id", async () => {
    const { threadId, runIds } = await threadWithTwoRuns();
    const all = await gather(
      client.threads.joinStream(threadId, {
        lastEventId: "-",
        streamMode: ["run_modes", "lifecycle"],
      }) as AsyncIterable<Chunk>,
      (chunks) => ended(chunks) === 2,
    );
    const lifecycle = all
      .filter((chunk) => chunk.event === "lifecycle")
      .map((chunk) => [(chunk.data as Lifecycle).event, (chunk.data as Lifecycle).run_id]);
    expect(lifecycle).toEqual([
      ["started", runIds[0]],
      ["completed", runIds[0]],
      ["started", runIds[1]],
      ["completed", runIds[1]],
    ]);
    // Each run's own stream between its lifecycle events: metadata first, then its values.
    const events = all.map((chunk) => chunk.event);
    expect(events.slice(0, 2)).toEqual(["lifecycle", "metadata"]);
    expect(all[1]?.data).toMatchObject({ run_id: runIds[0] });
    expect(events.filter((event) => event === "metadata")).toHaveLength(2);
    expect(all.at(-2)?.data).toMatchObject({ steps: ["prepare", "work_1", "prepare", "work_1"] });
    expect(all.every((chunk) => /^.+:(start|end|\d+)$/.test(chunk.id ?? ""))).toBe(true);

    // A client that lost its connection after the first run's metadata gets the rest, its own frames only.
    const runFrames = all.filter((chunk) => chunk.event !== "lifecycle");
    const rest = await gather(
      client.threads.joinStream(threadId, {
        lastEventId: runFrames[0]!.id,
      }) as AsyncIterable<Chunk>,
      (chunks) => chunks.length === runFrames.length - 1,
    );
    expect(rest.map((chunk) => [chunk.id, chunk.event])).toEqual(
      runFrames.slice(1).map((chunk) => [chunk.id, chunk.event]),
    );
  });

  it("follows a run created while it listens; lifecycle alone gives only the runs' starts and ends", async () => {
    const thread = await client.threads.create();
    const listening = gather(
      client.threads.joinStream(thread.thread_id, {
        streamMode: "lifecycle",
      }) as AsyncIterable<Chunk>,
      (chunks) => ended(chunks) === 1,
    );
    // The stream is open before the run exists (no Last-Event-ID: only what comes from now on).
    await new Promise((resolve) => setTimeout(resolve, 500));
    const run = await client.runs.create(thread.thread_id, "slow", {
      input: { delayMs: 100 },
      streamMode: ["values"],
    });
    const chunks = await listening;
    expect(chunks.map((chunk) => [chunk.event, chunk.id, chunk.data])).toEqual([
      ["lifecycle", `${run.run_id}:start`, { event: "started", run_id: run.run_id, namespace: [] }],
      ["lifecycle", `${run.run_id}:end`, { event: "completed", run_id: run.run_id, namespace: [] }],
    ]);
  });

  it("answers 404 for another tenant's thread and 422 for a mode, list or event id it does not know", async () => {
    const { threadId } = await threadWithTwoRuns();
    const other = await server.token(`${tenant}-other`);
    const own = await server.token(tenant);
    const get = async (token: string, query = "", headers: Record<string, string> = {}) => {
      const response = await fetch(`${server.url}/threads/${threadId}/stream${query}`, {
        headers: { authorization: `Bearer ${token}`, ...headers },
      });
      return { status: response.status, body: (await response.json()) as { detail: string } };
    };
    expect((await get(other)).status).toBe(404);
    const stateUpdate = await get(own, "?stream_mode=state_update");
    expect(stateUpdate.status).toBe(422);
    expect(stateUpdate.body.detail).toMatch(
      /^Invalid stream_mode: expected run_modes or lifecycle/,
    );
    const badList = await get(own, `?stream_mode=${encodeURIComponent('["lifecycle",1]')}`);
    expect(badList.status).toBe(422);
    expect(badList.body.detail).toMatch(/^Invalid stream_mode: /);
    const badId = await get(own, "", { "last-event-id": "12" });
    expect(badId.status).toBe(422);
    expect(badId.body.detail).toMatch(/^Invalid Last-Event-ID: /);
  });
});

/**
 * A stream quiet for longer than the keep-alive interval: the keep-alive comment must not read as an event. SDK
 * 2.0.0 hands its caller an empty event (`{event: "", data: null}`) for every blank line once the stream has given
 * an event id, so the comment ends its own line only, never an event.
 */
describe.each(SDK_MAJORS)("a quiet thread stream (SDK $version)", (sdk) => {
  it("gives the runs' events and nothing for the keep-alive comments between them", async () => {
    const server = await startTestServer({
      assistants: { slow: slowGraph() },
      ...(await backendOptions("memory")),
    });
    try {
      const client = await server.client("tenant-quiet-stream", sdk);
      const thread = await client.threads.create();
      const first = await client.runs.create(thread.thread_id, "slow", { input: { delayMs: 0 } });
      await client.runs.join(thread.thread_id, first.run_id);
      // The first run replays (its event ids become the stream's last one), then nothing comes for a while.
      const listening = gather(
        client.threads.joinStream(thread.thread_id, {
          lastEventId: "-",
          streamMode: "lifecycle",
        }) as AsyncIterable<Chunk>,
        (chunks) => chunks.length === 4,
      );
      await new Promise((resolve) => setTimeout(resolve, KEEP_ALIVE_MS + 1_000));
      const second = await client.runs.create(thread.thread_id, "slow", { input: { delayMs: 0 } });
      const chunks = await listening;
      expect(chunks.map((chunk) => [chunk.event, chunk.id])).toEqual([
        ["lifecycle", `${first.run_id}:start`],
        ["lifecycle", `${first.run_id}:end`],
        ["lifecycle", `${second.run_id}:start`],
        ["lifecycle", `${second.run_id}:end`],
      ]);
    } finally {
      await server.close();
    }
  }, 60_000);
});
