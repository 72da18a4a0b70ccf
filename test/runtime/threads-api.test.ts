import type { Client } from "@langchain/langgraph-sdk";
import { chatGraph, loopGraph } from "./graphs";
import {
  backendOptions,
  bookingAssistants,
  startTestServer,
  type Backend,
  type TestServer,
} from "./support";
import { sdkMatrix } from "../support/sdk-majors";

type Message = { type: string; content: string; id?: string };
type ChatValues = { messages: Message[] };

/** Both backends with the current SDK, and the in-memory one with SDK 2.0.0 too. */
const cases = sdkMatrix<Backend>(["memory", "dynamodb"], ["memory"]);

/**
 * Threads and thread state through the official @langchain/langgraph-sdk Client, unchanged, against the dev
 * server: the wire format of values, search, count, update, copy, state at a checkpoint, updateState and
 * history, as LangGraph Server answers them.
 */
describe.each(cases)("threads and state ($backend, SDK $sdk.version)", ({ backend, sdk }) => {
  let server: TestServer;
  let client: Client;
  let other: Client;

  beforeAll(async () => {
    server = await startTestServer({
      assistants: { ...bookingAssistants(), chat: chatGraph, loop: loopGraph },
      ...(await backendOptions(backend)),
    });
    client = await server.client(`tenant-threads-${backend}`, sdk);
    other = await server.client(`tenant-other-${backend}`, sdk);
  });

  afterAll(async () => {
    await server.close();
  });

  async function chat(threadId: string, content: string, extra: Record<string, unknown> = {}) {
    return (await client.runs.wait(threadId, "chat", {
      input: { messages: [{ role: "human", content }] },
      ...extra,
    })) as ChatValues;
  }

  it("returns messages as plain dicts everywhere values appear", async () => {
    const thread = await client.threads.create();
    const result = await chat(thread.thread_id, "hello");
    expect(result.messages).toEqual([
      expect.objectContaining({ type: "human", content: "hello", id: expect.any(String) }),
      expect.objectContaining({ type: "ai", content: "echo: hello", id: expect.any(String) }),
    ]);
    const places: unknown[] = [
      result,
      (await client.threads.getState(thread.thread_id)).values,
      (await client.threads.get(thread.thread_id)).values,
      (await client.threads.getHistory(thread.thread_id))[0]!.values,
      (await client.threads.search({ ids: [thread.thread_id] }))[0]!.values,
    ];
    for (const values of places) {
      expect(JSON.stringify(values)).not.toContain('"lc":1');
      expect((values as ChatValues).messages.map((message) => message.type)).toEqual([
        "human",
        "ai",
      ]);
    }
  });

  it("honours a run's config, and records its metadata on the run and its checkpoints", async () => {
    const thread = await client.threads.create();
    await chat(thread.thread_id, "first");
    const second = await chat(thread.thread_id, "second", {
      config: { configurable: { suffix: "!" } },
      metadata: { ticket: "T-7" },
    });
    expect(second.messages.at(-1)!.content).toBe("echo: second!");
    const [run] = await client.runs.list(thread.thread_id, { limit: 1 });
    expect(run!.metadata).toMatchObject({ ticket: "T-7" });
    const filtered = await client.threads.getHistory(thread.thread_id, {
      metadata: { ticket: "T-7" },
    });
    const full = await client.threads.getHistory(thread.thread_id);
    expect(filtered.length).toBeGreaterThan(0);
    expect(filtered.length).toBeLessThan(full.length);
    expect(filtered.every((state) => state.metadata?.ticket === "T-7")).toBe(true);
  });

  it("enforces config.recursion_limit: the run fails with LangGraph's recursion error", async () => {
    const thread = await client.threads.create();
    await expect(
      client.runs.wait(thread.thread_id, "loop", { input: {}, config: { recursion_limit: 5 } }),
    ).rejects.toThrow(/GraphRecursionError|Recursion limit of 5 reached/);
    const [run] = await client.runs.list(thread.thread_id);
    expect(run!.status).toBe("error");
    expect((await client.threads.get(thread.thread_id)).status).toBe("error");
  });

  it("searches, sorts, pages, selects and counts as the reference does", async () => {
    const mine = await client.threads.create({ metadata: { team: "search", n: 1 } });
    const second = await client.threads.create({ metadata: { team: "search", n: 2 } });
    const third = await client.threads.create({
      metadata: { team: "search", n: 3, tags: ["a", "b"] },
    });
    await chat(second.thread_id, "values filter");
    const search = (options: Parameters<Client["threads"]["search"]>[0]) =>
      client.threads.search({ metadata: { team: "search" }, ...options });

    expect((await search({})).map((thread) => thread.thread_id)).toEqual([
      third.thread_id,
      second.thread_id,
      mine.thread_id,
    ]);
    expect(
      (await search({ sortBy: "created_at", sortOrder: "asc" })).map((thread) => thread.thread_id),
    ).toEqual([mine.thread_id, second.thread_id, third.thread_id]);
    expect((await search({ sortBy: "updated_at", sortOrder: "desc" }))[0]!.thread_id).toBe(
      second.thread_id,
    );
    expect((await search({ offset: 1, limit: 1 })).map((thread) => thread.thread_id)).toEqual([
      second.thread_id,
    ]);
    expect(
      (await client.threads.search({ metadata: { tags: ["b"] } })).map((t) => t.thread_id),
    ).toEqual([third.thread_id]);
    expect(
      (await search({ values: { messages: [{ content: "values filter" }] } })).map(
        (t) => t.thread_id,
      ),
    ).toEqual([second.thread_id]);
    expect(
      (await search({ ids: [mine.thread_id, third.thread_id] })).map((t) => t.thread_id).sort(),
    ).toEqual([mine.thread_id, third.thread_id].sort());
    const selected = await search({ select: ["thread_id", "status"], limit: 1 });
    expect(selected).toEqual([{ thread_id: third.thread_id, status: "idle" }]);
    expect(await client.threads.count({ metadata: { team: "search" } })).toBe(3);
    expect(await client.threads.count({ metadata: { team: "search" }, status: "busy" })).toBe(0);
    // Another tenant sees none of them.
    expect(await other.threads.count({ metadata: { team: "search" } })).toBe(0);
  });

  it.each([
    [{ sort_by: "colour" }, /Invalid sort_by/],
    [{ sort_order: "up" }, /Invalid sort_order/],
    [{ limit: 1001 }, /Invalid limit: expected an integer from 1 to 1000, got 1001/],
    [{ select: ["thread_id", "secrets"] }, /Invalid select/],
    [{ ids: "t-1" }, /Invalid ids/],
    [{ values: [1] }, /Invalid values/],
  ])("refuses the search %j with 422", async (body, detail) => {
    const response = await fetch(`${server.url}/threads/search`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${await server.token(`tenant-threads-${backend}`)}`,
        "content-type": "application/json",
      },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(422);
    expect(((await response.json()) as { detail: string }).detail).toMatch(detail);
  });

  it("updates a thread's metadata by merging it, and 404s another tenant's", async () => {
    const thread = await client.threads.create({ metadata: { name: "a", keep: 1 } });
    const updated = await client.threads.update(thread.thread_id, {
      metadata: { name: "b", added: true },
    });
    expect(updated.metadata).toEqual({ name: "b", keep: 1, added: true });
    expect((await client.threads.get(thread.thread_id)).metadata).toEqual(updated.metadata);
    await expect(other.threads.update(thread.thread_id, { metadata: { x: 1 } })).rejects.toThrow(
      /404/,
    );
  });

  it("copies a thread: same checkpoints and state under the copy's id; each goes on alone", async () => {
    const thread = await client.threads.create({ metadata: { origin: "copy" } });
    await chat(thread.thread_id, "foo");
    const original = await client.threads.getState(thread.thread_id);
    const copy = await client.threads.copy(thread.thread_id);
    expect(copy.thread_id).not.toBe(thread.thread_id);
    expect(copy.metadata).toMatchObject({ origin: "copy", thread_id: copy.thread_id });
    const copied = await client.threads.getState(copy.thread_id);
    expect(copied.values).toEqual(original.values);
    expect(copied.checkpoint).toEqual({ ...original.checkpoint, thread_id: copy.thread_id });
    expect(copied.parent_checkpoint?.checkpoint_id).toBe(original.parent_checkpoint?.checkpoint_id);
    const history = await client.threads.getHistory(copy.thread_id);
    expect(history.map((state) => state.checkpoint.checkpoint_id)).toEqual(
      (await client.threads.getHistory(thread.thread_id)).map(
        (state) => state.checkpoint.checkpoint_id,
      ),
    );

    await chat(copy.thread_id, "bar");
    const grown = (await client.threads.getState(copy.thread_id)).values as ChatValues;
    expect(grown.messages.map((message) => message.content)).toEqual([
      "foo",
      "echo: foo",
      "bar",
      "echo: bar",
    ]);
    expect(await client.threads.getState(thread.thread_id)).toEqual(original);
    await expect(other.threads.copy(thread.thread_id)).rejects.toThrow(/404/);
  });

  it("reads the state at a checkpoint, by GET and by POST", async () => {
    const thread = await client.threads.create();
    await chat(thread.thread_id, "one");
    await chat(thread.thread_id, "two");
    const history = await client.threads.getHistory(thread.thread_id);
    const earlier = history.find(
      (state) => (state.values as ChatValues).messages?.length === 2 && state.next.length === 0,
    )!;
    const byId = await client.threads.getState(thread.thread_id, earlier.checkpoint.checkpoint_id!);
    expect(byId.values).toEqual(earlier.values);
    const byConfig = await client.threads.getState(thread.thread_id, earlier.checkpoint);
    expect(byConfig.checkpoint).toEqual(earlier.checkpoint);
  });

  it("updateState as a node writes as that node did, returns the checkpoint and sets the status", async () => {
    const thread = await client.threads.create();
    await chat(thread.thread_id, "hi");
    // LangGraph Server answers `{checkpoint}` (the SDK's type says `configurable`).
    const { checkpoint } = (await client.threads.updateState(thread.thread_id, {
      values: { messages: [{ type: "ai", content: "One must imagine Sisyphus happy." }] },
      asNode: "agent",
    })) as unknown as { checkpoint: { checkpoint_id: string } };
    expect(checkpoint).toMatchObject({ thread_id: thread.thread_id, checkpoint_ns: "" });
    const state = await client.threads.getState(thread.thread_id);
    expect(state.checkpoint.checkpoint_id).toBe(checkpoint.checkpoint_id);
    expect(JSON.stringify(state.values)).toContain("Sisyphus");
    expect((state.metadata as { source: string }).source).toBe("update");
    await expect(
      client.threads.updateState(thread.thread_id, { values: {}, asNode: "nope" }),
    ).rejects.toThrow(/422/);
  });

  it("marks a paused thread resolved with updateState as __end__ (it leaves the inbox)", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "booking", { input: { request: "cancel" } });
    expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");
    await client.threads.updateState(thread.thread_id, { values: null, asNode: "__end__" });
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
    const inbox = await client.threads.search({ status: "interrupted" });
    expect(inbox.map((t) => t.thread_id)).not.toContain(thread.thread_id);
  });

  it("creates a thread with supersteps on a graph, and refuses bad ones before creating anything", async () => {
    const thread = await client.threads.create({
      graphId: "chat",
      supersteps: [
        {
          updates: [
            { values: { messages: [{ type: "human", content: "x" }] }, asNode: "__input__" },
          ],
        },
        {
          updates: [
            { values: { messages: [{ type: "human", content: "x" }] }, asNode: "__start__" },
          ],
        },
        { updates: [{ values: { messages: [{ type: "ai", content: "y" }] }, asNode: "agent" }] },
      ],
    });
    expect(thread.metadata).toMatchObject({ graph_id: "chat" });
    const state = await client.threads.getState(thread.thread_id);
    expect((state.values as ChatValues).messages.map((m) => m.content)).toEqual(["x", "y"]);
    const before = await client.threads.count();
    await expect(
      client.threads.create({
        graphId: "chat",
        supersteps: [{ updates: [{ values: {}, asNode: "missing" }] }],
      }),
    ).rejects.toThrow(/422/);
    expect(await client.threads.count()).toBe(before);
  });

  it("reads history by GET with limit and before", async () => {
    const thread = await client.threads.create();
    await chat(thread.thread_id, "one");
    const response = await fetch(`${server.url}/threads/${thread.thread_id}/history?limit=2`, {
      headers: { authorization: `Bearer ${await server.token(`tenant-threads-${backend}`)}` },
    });
    expect(response.status).toBe(200);
    const page = (await response.json()) as Array<{ checkpoint: { checkpoint_id: string } }>;
    expect(page).toHaveLength(2);
    const next = await fetch(
      `${server.url}/threads/${thread.thread_id}/history?limit=10&before=${page[1]!.checkpoint.checkpoint_id}`,
      { headers: { authorization: `Bearer ${await server.token(`tenant-threads-${backend}`)}` } },
    );
    const rest = (await next.json()) as Array<{ checkpoint: { checkpoint_id: string } }>;
    expect(
      rest.every((state) => state.checkpoint.checkpoint_id < page[1]!.checkpoint.checkpoint_id),
    ).toBe(true);
  });

  it("answers /ok and /info", async () => {
    const headers = { authorization: `Bearer ${await server.token("tenant-meta")}` };
    expect(await (await fetch(`${server.url}/ok`, { headers })).json()).toEqual({ ok: true });
    const info = (await (await fetch(`${server.url}/info`, { headers })).json()) as Record<
      string,
      unknown
    >;
    expect(info).toMatchObject({ context: "js", flags: { assistants: true, crons: true } });
    expect(info.langgraph_js_version).toMatch(/^\d+\.\d+\.\d+/);
  });
});
