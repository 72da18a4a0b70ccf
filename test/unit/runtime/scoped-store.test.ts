import { createRequire } from "node:module";
import { join } from "node:path";
import { MemorySaver, type BaseStore } from "@langchain/langgraph-checkpoint";
import { Annotation, END, START, StateGraph, getStore } from "@langchain/langgraph";
import pino from "pino";
import { loadLangGraphConfig } from "../../../src/runtime/graphs/langgraph-config";
import { RequestScope } from "../../../src/runtime/graphs/scoped-checkpointer";
import type { GraphFactory } from "../../../src/runtime/types";
import { BoundedInMemoryStore } from "../../../src/store/bounded-in-memory-store";

const logger = pino({ level: "silent" });
const PROJECT = join(__dirname, "fixtures/store-project/langgraph.json");
/** Jest's require: the fixture modules as the loader got them (the same module registry). */
const requireFixture = createRequire(__filename);

interface SharedState {
  sharedStateFromStoreConfig: { id: string } | null;
  itemsBefore: number;
}
interface Invocable {
  invoke(input: unknown, config: unknown): Promise<SharedState>;
  store?: unknown;
}

/** A clock the tests move by hand (whole seconds, as the stores' expiries). */
function testClock() {
  let now = Math.ceil(Date.now() / 1000) * 1000;
  return { now: () => now, advanceMinutes: (minutes: number) => (now += minutes * 60_000) };
}

async function build(
  factory: GraphFactory | undefined,
  scope: RequestScope,
  tenantId: string,
): Promise<Invocable> {
  const graph = await factory!({
    checkpointer: scope.checkpointer,
    store: scope.store,
    tenantId,
    assistantId: "any",
    logger,
  });
  return graph as unknown as Invocable;
}

describe("RequestScope's store: the request's tenant store behind one container-wide store", () => {
  const config = (threadId: string, userId = "u-1") => ({
    configurable: { thread_id: threadId, user_id: userId },
  });

  it.each(["compiled", "uncompiled", "factory"])(
    "serves the %s graph of a langgraph.json project with the tenant's store in config.store",
    async (graphId) => {
      const factories = await loadLangGraphConfig(PROJECT, { env: {}, logger });
      const scope = new RequestScope();
      const memory = new BoundedInMemoryStore();
      const storeA = memory.forTenant("tenant-a");
      const storeB = memory.forTenant("tenant-b");
      const forA = await build(factories[graphId], scope, "tenant-a");
      const forB = await build(factories[graphId], scope, "tenant-b");
      const saver = new MemorySaver();

      const first = await scope.run(saver, () => forA.invoke({}, config("a-1", "alice")), {
        store: () => storeA,
      });
      const second = await scope.run(saver, () => forA.invoke({}, config("a-2", "alice")), {
        store: () => storeA,
      });
      const other = await scope.run(saver, () => forB.invoke({}, config("b-1", "bob")), {
        store: () => storeB,
      });

      expect(first).toEqual({ sharedStateFromStoreConfig: { id: "alice" }, itemsBefore: 0 });
      // A second thread of the same tenant sees what the first wrote; the other tenant sees none of it.
      expect(second).toEqual({ sharedStateFromStoreConfig: { id: "alice" }, itemsBefore: 1 });
      expect(other).toEqual({ sharedStateFromStoreConfig: { id: "bob" }, itemsBefore: 0 });
      expect((await storeA.get(["sharedState", "data"], "user_id"))?.value).toEqual({
        id: "alice",
      });
      expect((await storeB.get(["sharedState", "data"], "user_id"))?.value).toEqual({ id: "bob" });
    },
  );

  it("replaces a store the module compiled in, and never changes the exported graph", async () => {
    const factories = await loadLangGraphConfig(PROJECT, { env: {}, logger });
    const exported = (
      requireFixture(join(PROJECT, "../graphs/shared-state.js")) as {
        compiledWithOwnStore: Invocable;
      }
    ).compiledWithOwnStore;
    const ownStore = exported.store;
    const scope = new RequestScope();
    const served = await build(factories.own_store, scope, "tenant-a");
    expect(served.store).toBe(scope.store);
    expect(exported.store).toBe(ownStore);
    const withoutStore = (await factories.own_store!({
      checkpointer: undefined,
      store: undefined,
      tenantId: "tenant-a",
      assistantId: "own_store",
      logger,
    })) as unknown as Invocable;
    expect(withoutStore.store).toBeUndefined();
  });

  it("fails clearly when a graph uses the store outside a request", async () => {
    const factories = await loadLangGraphConfig(PROJECT, { env: {}, logger });
    const scope = new RequestScope();
    // Without a checkpointer: the store is the first thing the run touches.
    const graph = (await factories.compiled!({
      checkpointer: undefined,
      store: scope.store,
      tenantId: "tenant-a",
      assistantId: "compiled",
      logger,
    })) as unknown as Invocable;
    const error =
      "The handler's store was used outside a request: use it only while the graph runs";
    await expect(graph.invoke({}, { configurable: { user_id: "x" } })).rejects.toThrow(error);
    // A scope with a saver but no store is outside a request for the store too.
    await expect(
      scope.run(new MemorySaver(), () =>
        graph.invoke({}, { configurable: { thread_id: "t", user_id: "x" } }),
      ),
    ).rejects.toThrow(error);
    await expect(scope.store.get(["a"], "k")).rejects.toThrow(error);
  });

  it("builds the tenant's store on first use only, once per piece of work", async () => {
    const scope = new RequestScope();
    const memory = new BoundedInMemoryStore();
    let built = 0;
    const source = () => {
      built += 1;
      return memory.forTenant("tenant-a");
    };
    await scope.run(undefined, async () => "no store used", { store: source });
    expect(built).toBe(0);
    await scope.run(
      undefined,
      async () => {
        await scope.store.put(["notes"], "a", { text: "one" });
        await scope.store.put(["notes"], "b", { text: "two" });
        return scope.store.search(["notes"]);
      },
      { store: source },
    );
    expect(built).toBe(1);
  });

  it("keeps concurrent requests of two tenants apart", async () => {
    const scope = new RequestScope();
    const memory = new BoundedInMemoryStore();
    const tick = () => new Promise((resolve) => setImmediate(resolve));
    const work = (tenantId: string) =>
      scope.run(
        undefined,
        async () => {
          for (let i = 0; i < 5; i += 1) {
            await scope.store.put(["log"], `${i}`, { tenantId });
            await tick();
          }
          return (await scope.store.search(["log"], { limit: 100 })).map(
            (item) => item.value.tenantId as string,
          );
        },
        { store: () => memory.forTenant(tenantId) },
      );
    const [a, b] = await Promise.all([work("tenant-a"), work("tenant-b")]);
    expect(a).toEqual(Array(5).fill("tenant-a"));
    expect(b).toEqual(Array(5).fill("tenant-b"));
  });

  it("passes a tenant store's own options through: a put's ttl and a read's refreshTtl", async () => {
    const clock = testClock();
    const memory = new BoundedInMemoryStore({ now: clock.now });
    const tenant = memory.forTenant("tenant-a");
    const scope = new RequestScope();
    const store: BaseStore = scope.store;
    const inScope = <T>(work: () => Promise<T>) =>
      scope.run(undefined, work, { store: () => tenant });
    await inScope(() =>
      (store.put as (...args: unknown[]) => Promise<void>)(["ttl"], "short", { v: 1 }, undefined, {
        ttl: 1,
      }),
    );
    clock.advanceMinutes(0.5);
    const read = (refreshTtl: boolean) =>
      inScope(() =>
        (store.get as (...args: unknown[]) => ReturnType<BaseStore["get"]>)(["ttl"], "short", {
          refreshTtl,
        }),
      );
    expect(await read(false)).not.toBeNull();
    clock.advanceMinutes(1);
    expect(await read(false)).toBeNull();
  });

  it("gives graphs compiled with it getStore() in their nodes", async () => {
    const scope = new RequestScope();
    const memory = new BoundedInMemoryStore();
    const graph = new StateGraph(Annotation.Root({ seen: Annotation<number>() }))
      .addNode("count", async () => {
        const store = getStore()!;
        await store.put(["visits"], String(Date.now() + Math.random()), { at: 1 });
        return { seen: (await store.search(["visits"])).length };
      })
      .addEdge(START, "count")
      .addEdge("count", END)
      .compile({ store: scope.store });
    const run = (tenantId: string) =>
      scope.run(undefined, () => graph.invoke({}), { store: () => memory.forTenant(tenantId) });
    expect(await run("tenant-a")).toEqual({ seen: 1 });
    expect(await run("tenant-a")).toEqual({ seen: 2 });
    expect(await run("tenant-b")).toEqual({ seen: 1 });
  });
});
