import { join } from "node:path";
import {
  Annotation,
  END,
  InMemoryStore,
  START,
  StateGraph,
  type LangGraphRunnableConfig,
} from "@langchain/langgraph";
import pino from "pino";
import { InMemorySaver } from "../../src/checkpoint/memory";
import { buildPreferencesGraph } from "../../src/examples/preferences";
import { readRuntimeConfig } from "../../src/runtime/config";
import { createHandler, type HandlerOptions } from "../../src/runtime/handler";
import { loadLangGraphConfig } from "../../src/runtime/graphs/langgraph-config";
import type { GraphFactory, GraphFactoryContext } from "../../src/runtime/types";
import { InvalidConfigurationError } from "../../src/shared/errors";
import { BoundedInMemoryStore } from "../../src/store/bounded-in-memory-store";
import { DynamoDBStore } from "../../src/store/dynamodb-store";
import { WordCountEmbeddings, WrongSizeEmbeddings } from "../store/store-fixtures";
import {
  apiEvent,
  bookingAssistants,
  createTable,
  quietLogger,
  startTestServer,
  type TestServer,
} from "./support";

const STORE_PROJECT = join(__dirname, "../unit/runtime/fixtures/store-project/langgraph.json");
const base = { logger: quietLogger, metrics: false as const };

const preferences: GraphFactory = ({ checkpointer, store }) =>
  buildPreferencesGraph({ checkpointer, store: store! });

/** Answers with its context's `model` and its configurable `model_name`, as LangGraph Server's test graphs do. */
const contextGraph: GraphFactory = ({ checkpointer }) =>
  new StateGraph(Annotation.Root({ model: Annotation<string>(), modelName: Annotation<string>() }))
    .addNode("read", (_state, config: LangGraphRunnableConfig) => ({
      model: ((config.context as { model?: string } | undefined)?.model ?? "none") as string,
      modelName: (config.configurable?.model_name as string | undefined) ?? "none",
    }))
    .addEdge(START, "read")
    .addEdge("read", END)
    .compile({ checkpointer });

function storeEvent(method: string, body: unknown, tenantId: string, path = "/store/items") {
  return apiEvent(method, path, { body: JSON.stringify(body), tenantId });
}

const put = (tenantId: string, key = "k", value: unknown = { v: 1 }) =>
  storeEvent("PUT", { namespace: ["n"], key, value }, tenantId);
const get = (tenantId: string, key = "k") => ({
  ...apiEvent("GET", "/store/items", { tenantId }),
  queryStringParameters: { namespace: "n", key },
});

describe("the store option", () => {
  it("with false: graphs get no store and the store routes answer 400, as stateful routes without a checkpointer", async () => {
    const contexts: GraphFactoryContext[] = [];
    const handler = createHandler({
      ...base,
      checkpointer: false,
      store: false,
      assistants: {
        booking: (context) => {
          contexts.push(context);
          return bookingAssistants().booking!(context);
        },
      },
    });
    const stateless = await handler(
      apiEvent("POST", "/runs/wait", {
        body: JSON.stringify({ assistant_id: "booking", input: { request: "x" } }),
      }),
    );
    expect(stateless.statusCode).toBe(400);
    expect(contexts).toHaveLength(1);
    expect(contexts[0]!.store).toBeUndefined();
    expect(contexts[0]!.checkpointer).toBeUndefined();
    for (const event of [
      put("tenant-a"),
      get("tenant-a"),
      storeEvent("DELETE", { namespace: ["n"], key: "k" }, "tenant-a"),
      storeEvent("POST", { namespace_prefix: [] }, "tenant-a", "/store/items/search"),
      storeEvent("POST", {}, "tenant-a", "/store/namespaces"),
    ]) {
      const response = await handler(event);
      expect(response.statusCode).toBe(400);
      expect(JSON.parse(response.body!).detail).toMatch(
        /needs a long-term store: this handler runs without one \(its store option is false\)$/,
      );
    }
  });

  it("by default gives a handler without a checkpointer the in-memory store, for its routes and stateless runs", async () => {
    const handler = createHandler({ ...base, checkpointer: false, assistants: { preferences } });
    const run = await handler(
      apiEvent("POST", "/runs/wait", {
        body: JSON.stringify({
          assistant_id: "preferences",
          input: { userId: "u-1", message: "I prefer black coffee." },
        }),
        tenantId: "tenant-a",
      }),
    );
    expect(run.statusCode).toBe(200);
    expect(JSON.parse(run.body!).reply).toBe("Noted: you prefer black coffee.");
    const read = await handler({
      ...apiEvent("GET", "/store/items", { tenantId: "tenant-a" }),
      queryStringParameters: { namespace: "users.u-1.preferences", key: "favorite" },
    });
    expect(JSON.parse(read.body!)).toMatchObject({ value: { preference: "black coffee" } });
  });

  it("refuses a store instance, or anything but a function or false, when the handler is built", () => {
    const options = (store: unknown) =>
      ({ ...base, assistants: bookingAssistants(), store }) as HandlerOptions;
    expect(() => createHandler(options(new BoundedInMemoryStore()))).toThrow(
      new InvalidConfigurationError(
        "store",
        "expected a function (tenantId) => store, or false, got a store instance (one instance would be every tenant's: give (tenantId) => store)",
      ),
    );
    expect(() => createHandler(options(true))).toThrow(/^Invalid store: expected a function/);
    expect(() => createHandler(options(null))).toThrow(/got a null$/);
  });

  it("refuses a factory's store bound to another tenant, or to none, and leaks nothing of it", async () => {
    const { client, tableName } = await createTable();
    const tenantB = new DynamoDBStore({ client, tableName, tenantId: "tenant-b" });
    await tenantB.put(["n"], "k", { secret: "B-PRIVATE" });
    const memory = new BoundedInMemoryStore();
    for (const store of [() => tenantB, () => memory]) {
      const handler = createHandler({ ...base, assistants: { preferences }, store });
      for (const event of [get("tenant-a"), put("tenant-a")]) {
        const response = await handler(event);
        expect(response.statusCode).toBe(500);
        expect(JSON.parse(response.body!)).toEqual({
          detail: "Internal error",
          error_id: expect.any(String),
        });
      }
      const run = await handler(
        apiEvent("POST", "/runs/wait", {
          body: JSON.stringify({
            assistant_id: "preferences",
            input: { userId: "u-1", message: "What do I like?" },
          }),
          tenantId: "tenant-a",
        }),
      );
      expect(run.body).not.toContain("B-PRIVATE");
      // The run fails naming the misconfiguration, never the other tenant.
      expect(run.body).not.toContain("tenant-b");
      expect(JSON.parse(run.body!).__error__.message).toMatch(
        /^Invalid store: expected the store for tenant tenant-a, got one bound to (another tenant|no named tenant)/,
      );
    }
    expect((await tenantB.get(["n"], "k"))?.value).toEqual({ secret: "B-PRIVATE" });
  });

  it("serves any LangGraph store a factory gives per tenant, and refuses one shared by two tenants", async () => {
    const perTenant = new Map<string, InMemoryStore>();
    const handler = createHandler({
      ...base,
      assistants: { preferences },
      store: (tenantId) => {
        if (!perTenant.has(tenantId)) perTenant.set(tenantId, new InMemoryStore());
        return perTenant.get(tenantId)!;
      },
    });
    expect((await handler(put("tenant-a", "k", { owner: "a" }))).statusCode).toBe(204);
    expect(JSON.parse((await handler(get("tenant-a"))).body!).value).toEqual({ owner: "a" });
    expect(JSON.parse((await handler(get("tenant-b"))).body!)).toBeNull();

    const shared = new InMemoryStore();
    const sharing = createHandler({ ...base, assistants: { preferences }, store: () => shared });
    expect((await sharing(put("tenant-a", "k", { owner: "a" }))).statusCode).toBe(204);
    const refused = await sharing(get("tenant-b"));
    expect(refused.statusCode).toBe(500);
    expect(refused.body).not.toContain("owner");
    // The tenant that got the instance first keeps it.
    expect(JSON.parse((await sharing(get("tenant-a"))).body!).value).toEqual({ owner: "a" });
  });

  it("answers 507 when the in-memory store is full, and keeps what it held", async () => {
    const memory = new BoundedInMemoryStore({ config: { maxItems: 1 } });
    const handler = createHandler({
      ...base,
      assistants: { preferences },
      store: (tenantId) => memory.forTenant(tenantId),
    });
    expect((await handler(put("tenant-a", "first"))).statusCode).toBe(204);
    const full = await handler(put("tenant-b", "second"));
    expect(full.statusCode).toBe(507);
    expect(JSON.parse(full.body!).detail).toBe(
      "Store capacity exceeded: maxItems is 1, the write needed 2",
    );
    expect(JSON.parse((await handler(get("tenant-a", "first"))).body!)).not.toBeNull();
    expect(JSON.parse((await handler(get("tenant-b", "second"))).body!)).toBeNull();
  });

  it("answers 500 with an error id when the embeddings model fails, writing nothing", async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino(
      { level: "info" },
      { write: (line: string) => void lines.push(JSON.parse(line)) },
    );
    const memory = new BoundedInMemoryStore({
      index: { dims: 16, embeddings: new WrongSizeEmbeddings() },
    });
    const handler = createHandler({
      ...base,
      logger,
      assistants: { preferences },
      store: (tenantId) => memory.forTenant(tenantId),
    });
    const response = await handler(put("tenant-a", "k", { text: "green tea" }));
    expect(response.statusCode).toBe(500);
    const body = JSON.parse(response.body!) as { error_id: string };
    expect(body).toEqual({ detail: "Internal error", error_id: expect.any(String) });
    expect(lines).toContainEqual(
      expect.objectContaining({ errorId: body.error_id, err: { name: "StoreEmbeddingError" } }),
    );
    expect(JSON.parse((await handler(get("tenant-a"))).body!)).toBeNull();
  });

  it("answers 422 for a semantic search over more items than the index compares", async () => {
    const memory = new BoundedInMemoryStore({
      index: { dims: 16, embeddings: new WordCountEmbeddings(), maxCandidates: 2 },
    });
    const handler = createHandler({
      ...base,
      assistants: { preferences },
      store: (tenantId) => memory.forTenant(tenantId),
    });
    for (const key of ["a", "b", "c"]) await handler(put("tenant-a", key, { text: "tea" }));
    const response = await handler(
      storeEvent(
        "POST",
        { namespace_prefix: ["n"], query: "tea" },
        "tenant-a",
        "/store/items/search",
      ),
    );
    expect(response.statusCode).toBe(422);
    expect(JSON.parse(response.body!).detail).toMatch(
      /^Semantic search too broad: more than 2 items/,
    );
  });
});

describe("LangGraph Server's shared state tests, on a langgraph.json project served by the handler", () => {
  let server: TestServer;

  beforeAll(async () => {
    const assistants = await loadLangGraphConfig(STORE_PROJECT, { env: {}, logger: quietLogger });
    server = await startTestServer({ assistants, checkpointer: new InMemorySaver() });
  });

  afterAll(async () => {
    await server.close();
  });

  it("sets and returns data from the store in config, and the store client fetches it", async () => {
    const client = await server.client("tenant-shared");
    const assistant = await client.assistants.create({ graphId: "compiled" });
    const thread = await client.threads.create();
    const config = { configurable: { user_id: "start_user_id" } };
    const result = (await client.runs.wait(thread.thread_id, assistant.assistant_id, {
      input: {},
      config,
    })) as { sharedStateFromStoreConfig: { id: string } };
    expect(result.sharedStateFromStoreConfig).toEqual({ id: "start_user_id" });
    const item = await client.store.getItem(["sharedState", "data"], "user_id");
    expect(item?.value).toEqual({ id: "start_user_id" });

    const other = await server.client("tenant-shared-other");
    expect(await other.store.getItem(["sharedState", "data"], "user_id")).toBeNull();
    const otherResult = (await other.runs.wait(null, "factory", {
      input: {},
      config: { configurable: { user_id: "someone" } },
    })) as { itemsBefore: number };
    expect(otherResult.itemsBefore).toBe(0);
  });
});

describe("LANGGRAPH_CONFIG: the system assistants' defaults, through the SDK", () => {
  let server: TestServer;
  const lines: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    server = await startTestServer({
      assistants: { agent: contextGraph, simple_runtime: contextGraph },
      checkpointer: new InMemorySaver(),
      logger: pino(
        { level: "warn" },
        { write: (line: string) => void lines.push(JSON.parse(line)) },
      ),
      environment: readRuntimeConfig({
        LANGGRAPH_CONFIG: JSON.stringify({
          agent: { configurable: { model_name: "openai" } },
          simple_runtime: { context: { model: "unknown" } },
          not_registered: { configurable: { x: 1 } },
        }),
      }),
    });
  });

  afterAll(async () => {
    await server.close();
  });

  it("config from env: the system assistant carries the configured config", async () => {
    const client = await server.client("tenant-env");
    const search = await client.assistants.search({
      graphId: "agent",
      metadata: { created_by: "system" },
    });
    expect(search).toHaveLength(1);
    expect(search[0]!.config).toMatchObject({ configurable: { model_name: "openai" } });
    expect(await client.runs.wait(null, "agent", { input: {} })).toEqual({
      model: "none",
      modelName: "openai",
    });
  });

  it("default from env: a run of the system assistant gets the configured context, a run's own wins", async () => {
    const client = await server.client("tenant-env");
    expect(await client.runs.wait(null, "simple_runtime", { input: {} })).toEqual({
      model: "unknown",
      modelName: "none",
    });
    expect(
      await client.runs.wait(null, "simple_runtime", { input: {}, context: { model: "mine" } }),
    ).toEqual({ model: "mine", modelName: "none" });
  });

  it("notes an entry for a graph that is not registered", () => {
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 40,
        graph: "not_registered",
        msg: "LANGGRAPH_CONFIG names a graph that is not registered: its entry is ignored",
      }),
    );
  });
});
