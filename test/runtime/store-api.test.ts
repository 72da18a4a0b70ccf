import { randomUUID } from "node:crypto";
import type { Client } from "@langchain/langgraph-sdk";
import { buildPreferencesGraph, preferenceNamespace } from "../../src/examples/preferences";
import type { BaseStore } from "@langchain/langgraph-checkpoint";
import { BoundedInMemoryStore } from "../../src/store/bounded-in-memory-store";
import { DynamoDBStore } from "../../src/store/dynamodb-store";
import type { StoreIndexConfig } from "../../src/store/semantic-index";
import type { GraphFactory } from "../../src/runtime/types";
import { TableContext } from "../../src/table/context";
import { TestClock, WordCountEmbeddings } from "../store/store-fixtures";
import {
  backendOptions,
  createTable,
  startTestServer,
  type Backend,
  type TestServer,
} from "./support";
import { sdkMatrix } from "../support/sdk-majors";

/** The preferences example, on the handler's store: what a user prefers, remembered across threads. */
const preferences: Record<string, GraphFactory> = {
  preferences: ({ checkpointer, store }) => buildPreferencesGraph({ checkpointer, store: store! }),
};

interface Raw {
  status: number;
  body: unknown;
}

/** A request as any HTTP client sends it (shapes the SDK never sends included). */
async function raw(
  server: TestServer,
  tenantId: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Raw> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${await server.token(tenantId)}`,
      "content-type": "application/json",
    },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) };
}

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Both backends with the current SDK, and the in-memory one with SDK 2.0.0 too. */
const cases = sdkMatrix<Backend>(["memory", "dynamodb"], ["memory"]);

/**
 * The long-term memory store through the official SDK's `client.store`, unchanged, against the dev server:
 * LangGraph Server's routes and shapes, each tenant on its own items, on both stores the handler defaults to
 * (the bounded in-memory store without a table, DynamoDBStore on the handler's table).
 */
describe.each(cases)("the store routes ($backend, SDK $sdk.version)", ({ backend, sdk }) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({
      assistants: preferences,
      // Larger than the store's value limit (256 KiB), so that limit is the one a large value meets.
      maxBodyBytes: 1024 * 1024,
      ...(await backendOptions(backend)),
    });
  });

  afterAll(async () => {
    await server.close();
  });

  /** A tenant of its own for each test: its store starts empty. */
  function newTenant(): { id: string; client: Promise<Client> } {
    const id = `store-${backend}-${randomUUID().slice(0, 8)}`;
    return { id, client: server.client(id, sdk) };
  }

  it("puts, gets, searches, lists and deletes items as LangGraph Server does", async () => {
    const client = await newTenant().client;
    const namespace = ["allMethods", "data"];
    const key = randomUUID();

    expect((await client.store.searchItems(namespace)).items).toEqual([]);
    expect((await client.store.listNamespaces()).namespaces).toEqual([]);

    await client.store.putItem(namespace, key, { foo: "bar" });
    const got = await client.store.getItem(namespace, key);
    expect(got).toMatchObject({ namespace, key, value: { foo: "bar" } });
    expect(got!.createdAt).toMatch(ISO_TIME);
    expect(got!.updatedAt).toMatch(ISO_TIME);

    const afterPut = await client.store.searchItems(namespace);
    expect(afterPut.items).toHaveLength(1);
    expect(afterPut.items[0]).toMatchObject({ namespace, key, value: { foo: "bar" } });

    await new Promise((resolve) => setTimeout(resolve, 5));
    await client.store.putItem(namespace, key, { foo: "baz" });
    expect((await client.store.getItem(namespace, key))?.value).toEqual({ foo: "baz" });
    const afterUpdate = await client.store.searchItems(namespace);
    expect(afterUpdate.items.map((item) => item.value)).toEqual([{ foo: "baz" }]);
    expect(new Date(afterUpdate.items[0]!.updatedAt).getTime()).toBeGreaterThan(
      new Date(afterPut.items[0]!.updatedAt).getTime(),
    );
    expect(afterUpdate.items[0]!.createdAt).toBe(afterPut.items[0]!.createdAt);

    expect((await client.store.listNamespaces()).namespaces).toEqual([namespace]);

    await client.store.deleteItem(namespace, key);
    expect(await client.store.getItem(namespace, key)).toBeNull();
    expect((await client.store.searchItems(namespace)).items).toEqual([]);
  });

  it("answers with LangGraph Server's wire shapes: created_at/updated_at, 204 for writes, null for none", async () => {
    const { id } = newTenant();
    const put = await raw(server, id, "PUT", "/store/items", {
      namespace: ["wire", "shape"],
      key: "k",
      value: { n: 1 },
    });
    expect(put).toEqual({ status: 204, body: undefined });
    const got = await raw(server, id, "GET", "/store/items?namespace=wire.shape&key=k");
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      namespace: ["wire", "shape"],
      key: "k",
      value: { n: 1 },
      created_at: expect.stringMatching(ISO_TIME),
      updated_at: expect.stringMatching(ISO_TIME),
    });
    const searched = await raw(server, id, "POST", "/store/items/search", {
      namespace_prefix: ["wire"],
    });
    expect(searched).toEqual({ status: 200, body: { items: [got.body] } });
    expect(await raw(server, id, "GET", "/store/items?namespace=wire.shape&key=none")).toEqual({
      status: 200,
      body: null,
    });
    const removed = await raw(server, id, "DELETE", "/store/items", {
      namespace: ["wire", "shape"],
      key: "k",
    });
    expect(removed).toEqual({ status: 204, body: undefined });
    // Deleting what is not there is not an error, as on LangGraph Server.
    expect(
      (await raw(server, id, "DELETE", "/store/items", { namespace: ["wire"], key: "k" })).status,
    ).toBe(204);
  });

  it("searches by prefix with a filter, a limit and an offset, in key order", async () => {
    const client = await newTenant().client;
    for (let n = 1; n <= 6; n += 1) {
      await client.store.putItem(["docs", n % 2 === 0 ? "even" : "odd"], `doc-${n}`, {
        n,
        kind: n % 2 === 0 ? "even" : "odd",
        tags: n > 3 ? ["late"] : [],
      });
    }
    await client.store.putItem(["other"], "doc-0", { n: 0, kind: "even" });

    const all = await client.store.searchItems(["docs"], { limit: 100 });
    expect(all.items.map((item) => item.key)).toEqual([
      "doc-2",
      "doc-4",
      "doc-6",
      "doc-1",
      "doc-3",
      "doc-5",
    ]);
    const even = await client.store.searchItems(["docs"], { filter: { kind: "even" } });
    expect(even.items.map((item) => item.value.n)).toEqual([2, 4, 6]);
    const late = await client.store.searchItems(["docs"], {
      filter: { n: { $gt: 3 }, kind: "odd" },
    });
    expect(late.items.map((item) => item.value.n)).toEqual([5]);
    const page = await client.store.searchItems(["docs"], { limit: 2, offset: 1 });
    expect(page.items.map((item) => item.key)).toEqual(["doc-4", "doc-6"]);
    const everything = await client.store.searchItems([], { limit: 100 });
    expect(everything.items).toHaveLength(7);
    expect((await client.store.searchItems(["docs", "odd"])).items).toHaveLength(3);
  });

  it("refuses a query on a store without an index with the store's error (422)", async () => {
    const { id, client } = newTenant();
    await expect(
      (await client).store.searchItems(["docs"], { query: "green tea" }),
    ).rejects.toThrow(/HTTP 422/);
    const response = await raw(server, id, "POST", "/store/items/search", {
      namespace_prefix: ["docs"],
      query: "green tea",
    });
    expect(response).toEqual({
      status: 422,
      body: {
        detail:
          "Invalid query: expected a store configured with an index (semantic search), got a query",
      },
    });
  });

  it("lists namespaces by prefix, suffix (with wildcards) and depth, paged", async () => {
    const client = await newTenant().client;
    for (const namespace of [
      ["users", "u1", "prefs"],
      ["users", "u1", "notes"],
      ["users", "u2", "prefs"],
      ["teams", "t1", "prefs"],
    ]) {
      await client.store.putItem(namespace, "k", { v: 1 });
    }
    const list = async (options: Parameters<Client["store"]["listNamespaces"]>[0]) =>
      (await client.store.listNamespaces(options)).namespaces;
    expect(await list({})).toEqual([
      ["teams", "t1", "prefs"],
      ["users", "u1", "notes"],
      ["users", "u1", "prefs"],
      ["users", "u2", "prefs"],
    ]);
    expect(await list({ prefix: ["users"] })).toHaveLength(3);
    expect(await list({ suffix: ["prefs"] })).toHaveLength(3);
    expect(await list({ prefix: ["users", "*", "prefs"] })).toEqual([
      ["users", "u1", "prefs"],
      ["users", "u2", "prefs"],
    ]);
    expect(await list({ maxDepth: 2 })).toEqual([
      ["teams", "t1"],
      ["users", "u1"],
      ["users", "u2"],
    ]);
    expect(await list({ limit: 2, offset: 1 })).toEqual([
      ["users", "u1", "notes"],
      ["users", "u1", "prefs"],
    ]);
  });

  it("keeps each tenant's items to itself under identical namespaces and keys", async () => {
    const a = newTenant();
    const b = newTenant();
    const alice = await a.client;
    const bob = await b.client;
    const namespace = ["shared", "name"];
    await alice.store.putItem(namespace, "k", { owner: "A-PRIVATE" });

    expect(await bob.store.getItem(namespace, "k")).toBeNull();
    expect((await bob.store.searchItems(["shared"])).items).toEqual([]);
    expect((await bob.store.listNamespaces()).namespaces).toEqual([]);
    await bob.store.deleteItem(namespace, "k");
    expect((await alice.store.getItem(namespace, "k"))?.value).toEqual({ owner: "A-PRIVATE" });

    await bob.store.putItem(namespace, "k", { owner: "B" });
    expect((await bob.store.getItem(namespace, "k"))?.value).toEqual({ owner: "B" });
    expect((await alice.store.getItem(namespace, "k"))?.value).toEqual({ owner: "A-PRIVATE" });
    const raw = JSON.stringify(await bob.store.searchItems([], { limit: 100 }));
    expect(raw).not.toContain("A-PRIVATE");
  });

  it.each<[string, string, string, unknown, RegExp]>([
    [
      "a namespace that is a string",
      "PUT",
      "/store/items",
      { namespace: "a.b", key: "k", value: {} },
      /^Invalid namespace: expected an array of strings, got a string$/,
    ],
    [
      "an empty namespace",
      "PUT",
      "/store/items",
      { namespace: [], key: "k", value: {} },
      /^Invalid namespace: expected at least one label/,
    ],
    [
      "a label with a period",
      "PUT",
      "/store/items",
      { namespace: ["a.b"], key: "k", value: {} },
      /^Invalid namespace\[0\]: expected a non-empty string without "\."/,
    ],
    [
      "an empty label",
      "PUT",
      "/store/items",
      { namespace: ["a", ""], key: "k", value: {} },
      /^Invalid namespace\[1\]: /,
    ],
    [
      "LangGraph's reserved root label",
      "PUT",
      "/store/items",
      { namespace: ["langgraph", "x"], key: "k", value: {} },
      /reserved by LangGraph/,
    ],
    [
      "a label with a colon",
      "PUT",
      "/store/items",
      { namespace: ["a:b"], key: "k", value: {} },
      /^Invalid namespace\[0\]: expected no ":"/,
    ],
    [
      "a missing key",
      "PUT",
      "/store/items",
      { namespace: ["a"], value: {} },
      /^Invalid key: expected a non-empty string, got nothing$/,
    ],
    [
      "an empty key",
      "PUT",
      "/store/items",
      { namespace: ["a"], key: "", value: {} },
      /^Invalid key: /,
    ],
    [
      "a value that is an array",
      "PUT",
      "/store/items",
      { namespace: ["a"], key: "k", value: [1] },
      /^Invalid value: expected an object, got an array$/,
    ],
    [
      "a null value",
      "PUT",
      "/store/items",
      { namespace: ["a"], key: "k", value: null },
      /^Invalid value: expected an object, got null$/,
    ],
    [
      "a TTL that is a string",
      "PUT",
      "/store/items",
      { namespace: ["a"], key: "k", value: {}, ttl: "5" },
      /^Invalid ttl: /,
    ],
    [
      "a negative TTL",
      "PUT",
      "/store/items",
      { namespace: ["a"], key: "k", value: {}, ttl: -1 },
      /^Invalid ttl: expected a number of minutes above 0/,
    ],
    [
      "an index that is a string",
      "PUT",
      "/store/items",
      { namespace: ["a"], key: "k", value: {}, index: "$" },
      /^Invalid index: /,
    ],
    [
      "a search without a prefix",
      "POST",
      "/store/items/search",
      {},
      /^Invalid namespace_prefix: expected an array of strings, got nothing$/,
    ],
    [
      "a search limit over 1000",
      "POST",
      "/store/items/search",
      { namespace_prefix: [], limit: 5000 },
      /^Invalid limit: expected an integer from 0 to 1000, got 5000$/,
    ],
    [
      "a negative offset",
      "POST",
      "/store/items/search",
      { namespace_prefix: [], offset: -1 },
      /^Invalid offset: /,
    ],
    [
      "a filter that is an array",
      "POST",
      "/store/items/search",
      { namespace_prefix: [], filter: [] },
      /^Invalid filter: expected an object/,
    ],
    [
      "an unknown filter operator",
      "POST",
      "/store/items/search",
      { namespace_prefix: [], filter: { n: { $regex: "x" } } },
      /^Invalid filter/,
    ],
    [
      "a refresh_ttl that is a string",
      "POST",
      "/store/items/search",
      { namespace_prefix: [], refresh_ttl: "yes" },
      /^Invalid refresh_ttl: expected a boolean/,
    ],
    [
      "a max_depth of 0",
      "POST",
      "/store/namespaces",
      { max_depth: 0 },
      /^Invalid max_depth: expected a positive integer, got 0$/,
    ],
    [
      "a prefix that is not an array",
      "POST",
      "/store/namespaces",
      { prefix: "users" },
      /^Invalid prefix: expected an array of strings/,
    ],
    [
      "a get without a key",
      "GET",
      "/store/items?namespace=a",
      undefined,
      /^Invalid key: expected a non-empty string, got nothing$/,
    ],
    [
      "a get without a namespace",
      "GET",
      "/store/items?key=k",
      undefined,
      /^Invalid namespace: expected at least one label/,
    ],
    [
      "a get with refresh_ttl=maybe",
      "GET",
      "/store/items?namespace=a&key=k&refresh_ttl=maybe",
      undefined,
      /^Invalid refresh_ttl: expected true or false, got "maybe"$/,
    ],
    // A label with "." on every route LangGraph Server checks (its 422): the SDK's GET joins labels with ".",
    // so such an item could be written but never read back, nor moved to or from the reference's stores.
    [
      "a search prefix label with a period",
      "POST",
      "/store/items/search",
      { namespace_prefix: ["users", "a.b"] },
      /^Invalid namespace_prefix\[1\]: expected a non-empty string without "\."/,
    ],
    [
      "a namespace listing prefix label with a period",
      "POST",
      "/store/namespaces",
      { prefix: ["a.b"] },
      /^Invalid prefix\[0\]: expected a non-empty string without "\."/,
    ],
    [
      "a namespace listing suffix label with a period",
      "POST",
      "/store/namespaces",
      { suffix: ["x", "a.b"] },
      /^Invalid suffix\[1\]: expected a non-empty string without "\."/,
    ],
    [
      "a delete label with a period",
      "DELETE",
      "/store/items",
      { namespace: ["a.b"], key: "k" },
      /^Invalid namespace\[0\]: expected a non-empty string without "\."/,
    ],
    [
      "a delete without a namespace",
      "DELETE",
      "/store/items",
      { key: "k" },
      /^Invalid namespace: expected at least one label/,
    ],
  ])("refuses %s with 422 and writes nothing", async (_, method, path, body, detail) => {
    const { id, client } = newTenant();
    const response = await raw(server, id, method, path, body);
    expect(response.status).toBe(422);
    expect((response.body as { detail: string }).detail).toMatch(detail);
    const sdk = await client;
    expect((await sdk.store.listNamespaces()).namespaces).toEqual([]);
    expect((await sdk.store.searchItems([], { limit: 100 })).items).toEqual([]);
  });

  it("refuses a value over the store's limit with 413, writing nothing of it", async () => {
    const { id, client } = newTenant();
    const response = await raw(server, id, "PUT", "/store/items", {
      namespace: ["big"],
      key: "k",
      value: { text: "x".repeat(300 * 1024) },
    });
    expect(response.status).toBe(413);
    expect((response.body as { detail: string }).detail).toMatch(
      /^Store value too large: the value's JSON takes \d+ bytes, over the limit of 262144 bytes; nothing was written$/,
    );
    expect(await (await client).store.getItem(["big"], "k")).toBeNull();
  });

  it("runs a graph that remembers through config.store across threads of a tenant, never another's", async () => {
    const alice = await newTenant().client;
    const bob = await newTenant().client;
    const say = async (client: Client, message: string) => {
      const thread = await client.threads.create();
      const values = (await client.runs.wait(thread.thread_id, "preferences", {
        input: { userId: "u-1", message },
      })) as { reply: string };
      return values.reply;
    };
    expect(await say(alice, "I prefer green tea.")).toBe("Noted: you prefer green tea.");
    expect(await say(alice, "What do I like?")).toBe("You prefer green tea.");
    // The same user id and namespace, another tenant: nothing remembered.
    expect(await say(bob, "What do I like?")).toBe(
      "I don't know your preference yet: tell me what you prefer.",
    );
    // What the graph wrote is the tenant's item, served by the store routes too.
    expect((await alice.store.getItem(preferenceNamespace("u-1"), "favorite"))?.value).toEqual({
      preference: "green tea",
    });
    expect(await bob.store.getItem(preferenceNamespace("u-1"), "favorite")).toBeNull();
    await bob.store.putItem(preferenceNamespace("u-1"), "favorite", { preference: "coffee" });
    expect(await say(bob, "What do I like?")).toBe("You prefer coffee.");
    expect(await say(alice, "What do I like?")).toBe("You prefer green tea.");
  });
});

/** A store of `backend` on a clock the test moves, optionally with a semantic index. */
async function clockedStores(
  backend: Backend,
  clock: TestClock,
  index?: StoreIndexConfig,
): Promise<(tenantId: string) => BaseStore> {
  if (backend === "memory") {
    const memory = new BoundedInMemoryStore({ now: clock.now, ...(index ? { index } : {}) });
    return (tenantId) => memory.forTenant(tenantId);
  }
  const { client, tableName } = await createTable();
  const table = new TableContext({ tableName, client, now: clock.now });
  return (tenantId) => new DynamoDBStore({ table, tenantId, ...(index ? { index } : {}) });
}

describe.each<Backend>(["memory", "dynamodb"])(
  "the store routes with a store of the handler's options (%s backend)",
  (backend) => {
    it("expires items after their TTL in minutes; a refreshing read renews it, null never expires", async () => {
      const clock = new TestClock();
      const server = await startTestServer({
        assistants: preferences,
        ...(await backendOptions(backend)),
        store: await clockedStores(backend, clock),
      });
      try {
        const client = await server.client("tenant-ttl");
        await client.store.putItem(["ttl"], "one-minute", { v: 1 }, { ttl: 1 });
        await client.store.putItem(["ttl"], "forever", { v: 2 }, { ttl: null });
        await client.store.putItem(["ttl"], "refreshed", { v: 3 }, { ttl: 10 });
        await client.store.putItem(["ttl"], "not-refreshed", { v: 4 }, { ttl: 10 });
        const get = (key: string, refreshTtl: boolean) =>
          client.store.getItem(["ttl"], key, { refreshTtl });

        clock.advance(30_000);
        expect(await get("one-minute", false)).not.toBeNull();
        clock.advanceMinutes(1);
        expect(await get("one-minute", false)).toBeNull();

        clock.advanceMinutes(7);
        expect(await get("refreshed", true)).not.toBeNull();
        expect(await get("not-refreshed", false)).not.toBeNull();
        clock.advanceMinutes(8);
        expect(await get("refreshed", false)).not.toBeNull();
        expect(await get("not-refreshed", false)).toBeNull();
        const left = await client.store.searchItems(["ttl"], { refreshTtl: false });
        expect(left.items.map((item) => item.key)).toEqual(["forever", "refreshed"]);

        clock.advanceMinutes(12);
        expect((await client.store.searchItems(["ttl"])).items.map((item) => item.key)).toEqual([
          "forever",
        ]);
      } finally {
        await server.close();
      }
    });

    it("ranks a query search on a store with an index, with each item's score", async () => {
      const clock = new TestClock();
      const index: StoreIndexConfig = { dims: 16, embeddings: new WordCountEmbeddings() };
      const server = await startTestServer({
        assistants: preferences,
        ...(await backendOptions(backend)),
        store: await clockedStores(backend, clock, index),
      });
      try {
        const client = await server.client("tenant-semantic");
        await client.store.putItem(["memories"], "a", { text: "green tea with milk" });
        await client.store.putItem(["memories"], "b", { text: "a window seat on the train" });
        await client.store.putItem(["memories"], "c", { text: "no embedding" }, { index: false });
        const found = await client.store.searchItems(["memories"], { query: "train seat" });
        expect(found.items.map((item) => item.key)).toEqual(["b", "a", "c"]);
        expect(found.items[0]!.score).toBeGreaterThan(found.items[1]!.score!);
        expect(found.items[2]!.score).toBeUndefined();
      } finally {
        await server.close();
      }
    });
  },
);
