import { AsyncBatchedStore, InMemoryStore, type Item } from "@langchain/langgraph-checkpoint";
import {
  InvalidStoreOperationError,
  StoreEmbeddingError,
  StoreSearchTooBroadError,
  StoreValueTooLargeError,
} from "../../src/shared/errors";
import type { TenantStore } from "../../src/store/tenant-store";
import {
  TestClock,
  VOCABULARY,
  WordCountEmbeddings,
  WrongSizeEmbeddings,
  type StoreHarness,
  type StoreOptionsUnderTest,
} from "./store-fixtures";

/**
 * The behaviour every Memory Table store shows, run against each store (BoundedInMemoryStore in the unit tier,
 * DynamoDBStore on DynamoDB Local): LangGraph's store semantics as its InMemoryStore and the official checkpoint
 * libraries' store tests define them (get, put, delete, batch, namespace-prefix search, filters, paging,
 * listNamespaces), plus what Memory Table adds: checked input with typed errors, per-item TTL, tenant isolation,
 * size limits and semantic search with deterministic embeddings.
 */
export function describeStoreBehaviour(name: string, harness: StoreHarness): void {
  const setup = (options?: StoreOptionsUnderTest) => {
    const clock = new TestClock();
    return { clock, store: harness.create(clock, options) };
  };

  describe(`${name}: items`, () => {
    it("puts and gets an item with its namespace, key and timestamps", async () => {
      const { clock, store } = setup();
      await store.put(["users", "u1"], "prefs", { theme: "dark", size: 12 });
      const item = await store.get(["users", "u1"], "prefs");
      expect(item).toEqual({
        namespace: ["users", "u1"],
        key: "prefs",
        value: { theme: "dark", size: 12 },
        createdAt: new Date(clock.now()),
        updatedAt: new Date(clock.now()),
      });
    });

    it("returns null for an item that was never put", async () => {
      const { store } = setup();
      expect(await store.get(["users", "u1"], "missing")).toBeNull();
    });

    it("overwrites an item: new value and update time, creation time kept", async () => {
      const { clock, store } = setup();
      await store.put(["docs"], "d1", { version: 1, extra: true });
      const created = clock.now();
      clock.advance(5_000);
      await store.put(["docs"], "d1", { version: 2 });
      const item = await store.get(["docs"], "d1");
      expect(item?.value).toEqual({ version: 2 });
      expect(item?.createdAt).toEqual(new Date(created));
      expect(item?.updatedAt).toEqual(new Date(created + 5_000));
    });

    it("deletes an item, and deleting a missing item is no error", async () => {
      const { store } = setup();
      await store.put(["docs"], "d1", { a: 1 });
      await store.delete(["docs"], "d1");
      expect(await store.get(["docs"], "d1")).toBeNull();
      await expect(store.delete(["docs"], "never")).resolves.toBeUndefined();
      // A put with a null value is a delete too (LangGraph's PutOperation).
      await store.put(["docs"], "d2", { a: 2 });
      await store.batch([{ namespace: ["docs"], key: "d2", value: null }]);
      expect(await store.get(["docs"], "d2")).toBeNull();
    });

    it("round-trips nested JSON: objects, arrays, null, booleans, numbers and any Unicode", async () => {
      const { store } = setup();
      const value = {
        string: "naïve café ☕ 𝄞",
        number: -12.5e3,
        zero: 0,
        boolean: false,
        null: null,
        empty: "",
        array: [1, "two", { three: [3] }, null],
        nested: { deep: { deeper: { deepest: "yes" } }, list: [] },
      };
      await store.put(["json"], "k", value);
      expect((await store.get(["json"], "k"))?.value).toEqual(value);
    });

    it("stores values as JSON: a Date becomes its ISO string, undefined properties disappear", async () => {
      const { store } = setup();
      const when = new Date("2026-01-02T03:04:05.000Z");
      await store.put(["json"], "k", { when, gone: undefined, kept: 1 });
      const value = (await store.get(["json"], "k"))?.value;
      expect(value).toEqual({ when: "2026-01-02T03:04:05.000Z", kept: 1 });
      expect(Object.keys(value ?? {})).toEqual(["when", "kept"]);
    });

    it("hands out copies: changing a value put or returned changes nothing stored", async () => {
      const { store } = setup();
      const value = { list: [1, 2], inner: { a: 1 } };
      await store.put(["copies"], "k", value);
      value.list.push(3);
      value.inner.a = 99;
      const first = await store.get(["copies"], "k");
      (first!.value.list as number[]).push(4);
      const [found] = await store.search(["copies"]);
      (found!.value.inner as Record<string, number>).a = 7;
      expect((await store.get(["copies"], "k"))?.value).toEqual({ list: [1, 2], inner: { a: 1 } });
    });

    it("keeps `#`, `$` and other key characters apart: no label or key can forge a separator", async () => {
      const { store } = setup();
      await store.put(["a#b"], "k", { at: "a#b" });
      await store.put(["a", "b"], "k", { at: "a/b" });
      await store.put(["a"], "b##k", { at: "a key with ##" });
      await store.put(["a$b"], "k$", { at: "dollars" });
      await store.put(["a", "b"], "k#", { at: "hash key" });
      expect((await store.get(["a#b"], "k"))?.value).toEqual({ at: "a#b" });
      expect((await store.get(["a", "b"], "k"))?.value).toEqual({ at: "a/b" });
      expect((await store.get(["a"], "b##k"))?.value).toEqual({ at: "a key with ##" });
      expect((await store.get(["a$b"], "k$"))?.value).toEqual({ at: "dollars" });
      expect((await store.search(["a"])).map((i) => [i.namespace, i.key])).toEqual([
        [["a"], "b##k"],
        [["a", "b"], "k"],
        [["a", "b"], "k#"],
      ]);
      expect(await store.listNamespaces()).toEqual([["a"], ["a", "b"], ["a#b"], ["a$b"]]);
    });

    it("accepts the reserved root label through batch and reads, but not through put", async () => {
      const { store } = setup();
      await expect(store.put(["langgraph", "x"], "k", { a: 1 })).rejects.toThrow(
        InvalidStoreOperationError,
      );
      await store.put(["x", "langgraph"], "k", { a: 1 });
      await store.batch([{ namespace: ["langgraph", "x"], key: "k", value: { a: 2 } }]);
      expect((await store.get(["langgraph", "x"], "k"))?.value).toEqual({ a: 2 });
      expect((await store.search(["langgraph"]))[0]?.value).toEqual({ a: 2 });
      await store.delete(["langgraph", "x"], "k");
      expect(await store.get(["langgraph", "x"], "k")).toBeNull();
    });
  });

  describe(`${name}: batch`, () => {
    it("answers each operation of a batch in its place", async () => {
      const { store } = setup();
      await store.put(["b"], "existing", { n: 0 });
      const results: unknown[] = await store.batch([
        { namespace: ["b"], key: "k1", value: { n: 1 } },
        { namespace: ["b"], key: "existing" },
        { namespacePrefix: ["b"], limit: 10, offset: 0 },
        { matchConditions: undefined, limit: 100, offset: 0 },
        { namespace: ["b"], key: "missing" },
      ]);
      expect(results[0]).toBeUndefined();
      expect((results[1] as Item).value).toEqual({ n: 0 });
      expect((results[2] as Item[]).map((item) => item.key)).toEqual(["existing", "k1"]);
      expect(results[3]).toEqual([["b"]]);
      expect(results[4]).toBeNull();
    });

    it("runs a batch as if one operation ran after another: reads see earlier writes only", async () => {
      const { store } = setup();
      await store.put(["s"], "a", { v: "old" });
      const results: unknown[] = await store.batch([
        { namespace: ["s"], key: "a" },
        { namespace: ["s"], key: "a", value: { v: "new" } },
        { namespace: ["s"], key: "a" },
        { namespace: ["s"], key: "b", value: { v: "b" } },
        { namespacePrefix: ["s"], limit: 10, offset: 0 },
        { namespace: ["s"], key: "a", value: null },
        { namespace: ["s"], key: "a" },
        { namespace: ["t"], key: "c", value: { v: "c" } },
        { matchConditions: undefined, limit: 100, offset: 0 },
      ]);
      expect((results[0] as Item).value).toEqual({ v: "old" });
      expect((results[2] as Item).value).toEqual({ v: "new" });
      expect((results[4] as Item[]).map((item) => [item.key, item.value.v])).toEqual([
        ["a", "new"],
        ["b", "b"],
      ]);
      expect(results[6]).toBeNull();
      expect(results[8]).toEqual([["s"], ["t"]]);
      expect(await store.get(["s"], "a")).toBeNull();
    });

    it("applies the last of several writes to one item in a batch", async () => {
      const { store } = setup();
      await store.batch([
        { namespace: ["w"], key: "k", value: { n: 1 } },
        { namespace: ["w"], key: "k", value: null },
        { namespace: ["w"], key: "k", value: { n: 3 } },
      ]);
      expect((await store.get(["w"], "k"))?.value).toEqual({ n: 3 });
    });

    it("checks a whole batch before running it: one bad operation, nothing written", async () => {
      const { store } = setup();
      await expect(
        store.batch([
          { namespace: ["ok"], key: "k1", value: { n: 1 } },
          { namespace: ["bad.label"], key: "k2", value: { n: 2 } },
        ]),
      ).rejects.toThrow(InvalidStoreOperationError);
      expect(await store.get(["ok"], "k1")).toBeNull();
      await expect(
        store.batch([
          { namespace: ["ok"], key: "k1", value: { n: 1 } },
          { namespace: ["ok"], key: "k2", value: { n: Number.NaN } },
        ]),
      ).rejects.toThrow("Invalid value: expected finite numbers, got NaN");
      expect(await store.search(["ok"])).toEqual([]);
    });

    it("serves LangGraph's AsyncBatchedStore, which graphs use, with concurrent calls", async () => {
      const { store } = setup();
      const batched = new AsyncBatchedStore(store);
      batched.start();
      try {
        await Promise.all(
          Array.from({ length: 12 }, (_, i) => batched.put(["batched"], `k${i}`, { i })),
        );
        const items = await Promise.all(
          Array.from({ length: 12 }, (_, i) => batched.get(["batched"], `k${i}`)),
        );
        expect(items.map((item) => item?.value)).toEqual(
          Array.from({ length: 12 }, (_, i) => ({ i })),
        );
        expect(await batched.search(["batched"], { limit: 3, offset: 1 })).toHaveLength(3);
      } finally {
        await batched.stop();
      }
    });
  });

  describe(`${name}: search`, () => {
    const populate = async (store: TenantStore) => {
      await store.put(["docs"], "d1", { kind: "report", score: 4.5, tags: ["a"], author: "ann" });
      await store.put(["docs", "2024"], "d2", { kind: "memo", score: 3, author: "bob" });
      await store.put(["docs", "2024", "q1"], "d3", { kind: "report", score: 5, author: "cy" });
      await store.put(["docsets"], "d4", { kind: "report", score: 1 });
      await store.put(["other"], "d5", { kind: "memo", score: 2.5, missing: null });
    };
    const keys = (items: Item[]) => items.map((item) => item.key);

    it("finds the items of a namespace and of every namespace under it, in key order", async () => {
      const { store } = setup();
      await populate(store);
      expect(keys(await store.search(["docs"]))).toEqual(["d1", "d2", "d3"]);
      expect(keys(await store.search(["docs", "2024"]))).toEqual(["d2", "d3"]);
      expect(keys(await store.search(["docs", "2024", "q1"]))).toEqual(["d3"]);
      expect(keys(await store.search(["doc"]))).toEqual([]);
      expect(keys(await store.search([]))).toEqual(["d1", "d2", "d3", "d4", "d5"]);
    });

    it("returns whole items with their namespaces", async () => {
      const { clock, store } = setup();
      await populate(store);
      const [item] = await store.search(["docs", "2024", "q1"]);
      expect(item).toEqual({
        namespace: ["docs", "2024", "q1"],
        key: "d3",
        value: { kind: "report", score: 5, author: "cy" },
        createdAt: new Date(clock.now()),
        updatedAt: new Date(clock.now()),
      });
    });

    it("filters by equality, on every field given", async () => {
      const { store } = setup();
      await populate(store);
      expect(keys(await store.search([], { filter: { kind: "report" } }))).toEqual([
        "d1",
        "d3",
        "d4",
      ]);
      expect(keys(await store.search([], { filter: { kind: "report", author: "cy" } }))).toEqual([
        "d3",
      ]);
      expect(keys(await store.search(["docs"], { filter: { kind: "nothing" } }))).toEqual([]);
      expect(keys(await store.search([], { filter: { missing: null } }))).toEqual(["d5"]);
      expect(keys(await store.search([], { filter: { tags: ["a"] } }))).toEqual(["d1"]);
      expect(keys(await store.search([], { filter: { tags: "a" } }))).toEqual([]);
    });

    it("filters with $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin and $exists", async () => {
      const { store } = setup();
      await populate(store);
      const search = async (filter: Record<string, unknown>) =>
        keys(await store.search([], { filter }));
      expect(await search({ score: { $gt: 3 } })).toEqual(["d1", "d3"]);
      expect(await search({ score: { $gte: 3 } })).toEqual(["d1", "d2", "d3"]);
      expect(await search({ score: { $lt: 3 } })).toEqual(["d4", "d5"]);
      expect(await search({ score: { $lte: 2.5 } })).toEqual(["d4", "d5"]);
      expect(await search({ score: { $gt: 2, $lt: 4.5 } })).toEqual(["d2", "d5"]);
      expect(await search({ kind: { $eq: "memo" } })).toEqual(["d2", "d5"]);
      expect(await search({ kind: { $ne: "memo" } })).toEqual(["d1", "d3", "d4"]);
      expect(await search({ author: { $ne: "ann" } })).toEqual(["d2", "d3", "d4", "d5"]);
      expect(await search({ author: { $in: ["ann", "cy"] } })).toEqual(["d1", "d3"]);
      expect(await search({ author: { $nin: ["ann", "cy"] } })).toEqual(["d2", "d4", "d5"]);
      expect(await search({ author: { $exists: false } })).toEqual(["d4", "d5"]);
      expect(await search({ missing: { $exists: true } })).toEqual(["d5"]);
      expect(await search({ author: { $gte: "bob" } })).toEqual(["d2", "d3"]);
      // Comparisons never convert types: a string field is not greater than a number.
      expect(await search({ author: { $gt: 0 } })).toEqual([]);
    });

    it("pages with limit and offset (default limit 10), after the filter", async () => {
      const { store } = setup();
      for (let i = 0; i < 25; i += 1) {
        await store.put(["paged"], `k${String(i).padStart(2, "0")}`, { i, even: i % 2 === 0 });
      }
      expect(await store.search(["paged"])).toHaveLength(10);
      expect(keys(await store.search(["paged"], { limit: 3, offset: 4 }))).toEqual([
        "k04",
        "k05",
        "k06",
      ]);
      expect(keys(await store.search(["paged"], { limit: 5, offset: 23 }))).toEqual(["k23", "k24"]);
      expect(await store.search(["paged"], { limit: 0 })).toEqual([]);
      expect(await store.search(["paged"], { offset: 30 })).toEqual([]);
      expect(
        keys(await store.search(["paged"], { filter: { even: true }, limit: 3, offset: 2 })),
      ).toEqual(["k04", "k06", "k08"]);
      expect(
        keys(await store.search(["paged"], { filter: { i: { $gte: 20 } }, limit: 100 })),
      ).toEqual(["k20", "k21", "k22", "k23", "k24"]);
    });

    it("pages through many items with a sparse filter", async () => {
      const { store } = setup();
      await store.batch(
        Array.from({ length: 120 }, (_, i) => ({
          namespace: ["many", `n${i % 3}`],
          key: `k${String(i).padStart(3, "0")}`,
          value: { i, hit: i % 17 === 0 },
        })),
      );
      const hits = await store.search(["many"], { filter: { hit: true }, limit: 4, offset: 1 });
      // Key order: namespace n0 (i % 3 = 0), then n1, then n2.
      const expected = Array.from({ length: 120 }, (_, i) => i)
        .filter((i) => i % 17 === 0)
        .sort((a, b) => (a % 3) - (b % 3) || a - b)
        .slice(1, 5);
      expect(hits.map((item) => item.value.i)).toEqual(expected);
    });
  });

  describe(`${name}: listNamespaces`, () => {
    const populate = async (store: TenantStore) => {
      for (const namespace of [
        ["a"],
        ["a", "b"],
        ["a", "b", "c"],
        ["a", "b", "d"],
        ["a", "c", "e"],
        ["x", "y", "z"],
      ]) {
        // Several items per namespace: listings read one per result, not every item.
        for (const key of ["k1", "k2", "k3"]) await store.put(namespace, key, { key });
      }
    };

    it("lists every namespace once, in order", async () => {
      const { store } = setup();
      await populate(store);
      expect(await store.listNamespaces()).toEqual([
        ["a"],
        ["a", "b"],
        ["a", "b", "c"],
        ["a", "b", "d"],
        ["a", "c", "e"],
        ["x", "y", "z"],
      ]);
    });

    it("filters by prefix and suffix, with * matching any one label", async () => {
      const { store } = setup();
      await populate(store);
      expect(await store.listNamespaces({ prefix: ["a", "b"] })).toEqual([
        ["a", "b"],
        ["a", "b", "c"],
        ["a", "b", "d"],
      ]);
      expect(await store.listNamespaces({ suffix: ["d"] })).toEqual([["a", "b", "d"]]);
      expect(await store.listNamespaces({ suffix: ["b"] })).toEqual([["a", "b"]]);
      expect(await store.listNamespaces({ prefix: ["a", "*", "c"] })).toEqual([["a", "b", "c"]]);
      expect(await store.listNamespaces({ prefix: ["*", "c"] })).toEqual([["a", "c", "e"]]);
      expect(await store.listNamespaces({ suffix: ["*", "z"] })).toEqual([["x", "y", "z"]]);
      expect(await store.listNamespaces({ prefix: ["a"], suffix: ["c"] })).toEqual([
        ["a", "b", "c"],
      ]);
      expect(await store.listNamespaces({ prefix: ["non", "existent"] })).toEqual([]);
      expect(await store.listNamespaces({ prefix: [] })).toHaveLength(6);
    });

    it("truncates to maxDepth and lists each truncated namespace once", async () => {
      const { store } = setup();
      await populate(store);
      expect(await store.listNamespaces({ maxDepth: 2 })).toEqual([
        ["a"],
        ["a", "b"],
        ["a", "c"],
        ["x", "y"],
      ]);
      expect(await store.listNamespaces({ maxDepth: 1 })).toEqual([["a"], ["x"]]);
      expect(await store.listNamespaces({ prefix: ["a"], suffix: ["c"], maxDepth: 2 })).toEqual([
        ["a", "b"],
      ]);
    });

    it("pages with limit and offset (default limit 100)", async () => {
      const { store } = setup();
      await populate(store);
      expect(await store.listNamespaces({ limit: 2, offset: 1 })).toEqual([
        ["a", "b"],
        ["a", "b", "c"],
      ]);
      expect(await store.listNamespaces({ maxDepth: 2, limit: 2, offset: 2 })).toEqual([
        ["a", "c"],
        ["x", "y"],
      ]);
      expect(await store.listNamespaces({ limit: 0 })).toEqual([]);
      expect(await store.listNamespaces({ offset: 6 })).toEqual([]);
      for (let i = 0; i < 120; i += 1)
        await store.batch([{ namespace: ["n", `${1000 + i}`], key: "k", value: {} }]);
      expect(await store.listNamespaces({ prefix: ["n"] })).toHaveLength(100);
    });

    it("forgets a namespace once its last item is deleted", async () => {
      const { store } = setup();
      await store.put(["gone"], "k", { a: 1 });
      await store.put(["kept"], "k", { a: 1 });
      await store.delete(["gone"], "k");
      expect(await store.listNamespaces()).toEqual([["kept"]]);
    });
  });

  describe(`${name}: per-item TTL`, () => {
    it("expires an item its TTL (minutes) after the put: get, search and listings drop it at once", async () => {
      const { clock, store } = setup({ ttl: { refreshOnRead: false } });
      await store.put(["ttl"], "short", { a: 1 }, undefined, { ttl: 1 });
      await store.put(["ttl"], "forever", { a: 2 });
      clock.advance(59_999);
      expect(await store.get(["ttl"], "short")).not.toBeNull();
      clock.advance(1);
      expect(await store.get(["ttl"], "short")).toBeNull();
      expect((await store.search(["ttl"])).map((i) => i.key)).toEqual(["forever"]);
      await store.put(["only-expiring"], "k", { a: 1 }, undefined, { ttl: 0.5 });
      clock.advance(30_000);
      expect(await store.listNamespaces()).toEqual([["ttl"]]);
    });

    it("applies the store's default TTL, which a put can override or turn off with null", async () => {
      const { clock, store } = setup({ ttl: { defaultTtl: 10, refreshOnRead: false } });
      await store.put(["d"], "default", { a: 1 });
      await store.put(["d"], "longer", { a: 1 }, undefined, { ttl: 20 });
      await store.put(["d"], "never", { a: 1 }, undefined, { ttl: null });
      clock.advanceMinutes(10);
      expect((await store.search(["d"])).map((i) => i.key)).toEqual(["longer", "never"]);
      clock.advanceMinutes(10);
      expect((await store.search(["d"])).map((i) => i.key)).toEqual(["never"]);
      clock.advanceMinutes(60 * 24 * 365);
      expect(await store.get(["d"], "never")).not.toBeNull();
    });

    it("renews the TTL of what a get returns (refresh on read, the default)", async () => {
      const { clock, store } = setup();
      await store.put(["r"], "k", { a: 1 }, undefined, { ttl: 10 });
      clock.advanceMinutes(8);
      expect(await store.get(["r"], "k")).not.toBeNull(); // renews: lives 10 more minutes from here
      clock.advanceMinutes(9);
      expect(await store.get(["r"], "k", { refreshTtl: false })).not.toBeNull();
      clock.advanceMinutes(2);
      expect(await store.get(["r"], "k")).toBeNull();
    });

    it("renews only when asked when the store does not refresh on read", async () => {
      const { clock, store } = setup({ ttl: { refreshOnRead: false } });
      await store.put(["r"], "plain", { a: 1 }, undefined, { ttl: 10 });
      await store.put(["r"], "asked", { a: 1 }, undefined, { ttl: 10 });
      clock.advanceMinutes(8);
      await store.get(["r"], "plain");
      await store.get(["r"], "asked", { refreshTtl: true });
      clock.advanceMinutes(3);
      expect(await store.get(["r"], "plain")).toBeNull();
      expect(await store.get(["r"], "asked")).not.toBeNull();
    });

    it("renews the items a search returns, and only those", async () => {
      const { clock, store } = setup();
      for (const key of ["a", "b", "c"]) {
        await store.put(["s"], key, { key }, undefined, { ttl: 10 });
      }
      clock.advanceMinutes(8);
      expect((await store.search(["s"], { limit: 1, offset: 1 })).map((i) => i.key)).toEqual(["b"]);
      expect(await store.search(["s"], { filter: { key: "c" }, refreshTtl: false })).toHaveLength(
        1,
      );
      clock.advanceMinutes(3);
      expect((await store.search(["s"], { refreshTtl: false })).map((i) => i.key)).toEqual(["b"]);
    });

    it("keeps a hot item alive at least its TTL after its last read, at most the headroom longer", async () => {
      const { clock, store } = setup();
      await store.put(["h"], "k", { a: 1 }, undefined, { ttl: 100 });
      for (let minute = 0; minute < 300; minute += 5) {
        clock.advanceMinutes(5);
        expect(await store.get(["h"], "k")).not.toBeNull();
      }
      // At least the TTL after the last read...
      clock.advance(100 * 60_000 - 1);
      expect(await store.get(["h"], "k", { refreshTtl: false })).not.toBeNull();
      // ...and no longer than the headroom (a tenth of the TTL) after that.
      clock.advance(10 * 60_000 + 1);
      expect(await store.get(["h"], "k", { refreshTtl: false })).toBeNull();
    });

    it("treats a put over an expired item as a new item, and a put without TTL as never expiring", async () => {
      const { clock, store } = setup({ ttl: { refreshOnRead: false } });
      await store.put(["e"], "k", { v: 1 }, undefined, { ttl: 1 });
      clock.advanceMinutes(2);
      await store.put(["e"], "k", { v: 2 });
      const item = await store.get(["e"], "k");
      expect(item?.value).toEqual({ v: 2 });
      expect(item?.createdAt).toEqual(new Date(clock.now()));
      clock.advanceMinutes(60 * 24 * 30);
      expect(await store.get(["e"], "k")).not.toBeNull();
    });
  });

  describe(`${name}: checked input`, () => {
    const refusal = async (promise: Promise<unknown>, message: string | RegExp) => {
      await expect(promise).rejects.toThrow(InvalidStoreOperationError);
      await expect(promise).rejects.toThrow(message);
    };

    it("refuses malformed namespaces before any request", async () => {
      const { store } = setup();
      const put = (namespace: unknown) => store.put(namespace as string[], "k", { a: 1 });
      await refusal(put([]), "Invalid namespace: expected at least one label, got an empty array");
      await refusal(put(["the", "thing.about"]), 'Invalid namespace[1]: expected no "."');
      await refusal(put(["a:b"]), 'Invalid namespace[0]: expected no ":"');
      await refusal(put(["some", "fun", ""]), "Invalid namespace[2]: expected a non-empty string");
      await refusal(put(["ok", 123]), "Invalid namespace[1]: expected a string, got a number");
      await refusal(put("users"), "Invalid namespace: expected an array of strings, got a string");
      await refusal(put(["tab\there"]), "Invalid namespace[0]: expected no control characters");
      await refusal(put(["\ud800"]), "Invalid namespace[0]: expected well-formed Unicode");
      await refusal(
        put(["x".repeat(257)]),
        "Invalid namespace[0]: expected at most 256 characters",
      );
      await refusal(put(["langgraph"]), 'expected a root label other than "langgraph"');
      await refusal(store.get([], "k"), "Invalid namespace: expected at least one label");
      await refusal(store.search(["a.b"]), 'Invalid namespacePrefix[0]: expected no "."');
      await refusal(
        store.listNamespaces({ prefix: ["a", ""] }),
        "Invalid matchConditions[0].path[1]",
      );
      expect(await store.listNamespaces()).toEqual([]);
    });

    it("refuses malformed keys, and keys that would not fit the table's key", async () => {
      const { store } = setup();
      await refusal(store.put(["n"], "", { a: 1 }), "Invalid key: expected a non-empty string");
      await refusal(
        store.put(["n"], 7 as unknown as string, { a: 1 }),
        "Invalid key: expected a string",
      );
      await refusal(store.get(["n"], "a\nb"), "Invalid key: expected no control characters");
      // Eleven labels of 100 characters: each fits, together they pass the 1,024-byte sort key.
      const deep = Array.from({ length: 11 }, (_, i) => `${i}`.padEnd(100, "x"));
      await refusal(
        store.put(deep, "k", { a: 1 }),
        /Invalid namespace and key: expected an item key of at most 1024 bytes, got \d+/,
      );
      await refusal(
        store.search(deep),
        "Invalid namespacePrefix: expected a prefix of at most 1024 bytes",
      );
      // Characters the key encoding doubles count double.
      await refusal(store.put(["n"], "!".repeat(600), { a: 1 }), "Invalid namespace and key");
      expect(await store.search([])).toEqual([]);
    });

    it("refuses values that are not JSON objects, or that JSON would change", async () => {
      const { store } = setup();
      const put = (value: unknown) => store.put(["v"], "k", value as Record<string, unknown>);
      await refusal(
        put([1, 2]),
        "Invalid value: expected an object (or null to delete), got an array",
      );
      await refusal(
        put("text"),
        "Invalid value: expected an object (or null to delete), got a string",
      );
      await refusal(put({ n: Number.POSITIVE_INFINITY }), "expected finite numbers, got Infinity");
      await refusal(put({ big: BigInt(1) }), "Invalid value: expected JSON data, got a bigint");
      await refusal(put({ f: () => 1 }), "Invalid value: expected JSON data, got a function");
      await refusal(put({ m: new Map([["a", 1]]) }), "got a Map (JSON would drop its contents)");
      await refusal(put({ bytes: new Uint8Array(2) }), "got a Uint8Array");
      const cyclic: Record<string, unknown> = { a: 1 };
      cyclic.self = cyclic;
      await refusal(put(cyclic), "Invalid value: expected JSON data, got a cycle");
      let deep: Record<string, unknown> = { leaf: true };
      for (let i = 0; i < 70; i += 1) deep = { deep };
      await refusal(put(deep), "expected at most 64 levels of nesting");
      expect(await store.get(["v"], "k")).toBeNull();
    });

    it("refuses a value over the size limit with its size, and writes nothing", async () => {
      const { store } = setup({ maxValueBytes: 4096 });
      await store.put(["big"], "fits", { text: "x".repeat(4000) });
      const attempt = store.put(["big"], "k", { text: "x".repeat(5000) });
      await expect(attempt).rejects.toThrow(StoreValueTooLargeError);
      await expect(attempt).rejects.toThrow(
        "Store value too large: the value's JSON takes 5011 bytes, over the limit of 4096 bytes; nothing was written",
      );
      expect(await store.get(["big"], "k")).toBeNull();
    });

    it("stores values up to the default limit of 256 KiB, compressible or not", async () => {
      const { store } = setup();
      const random = Array.from({ length: 180_000 }, (_, i) =>
        String.fromCharCode(0x21 + ((i * 7919 + (i >> 3) * 104729) % 90)),
      ).join("");
      const large = { text: random, repeated: "memory ".repeat(10_000) };
      await store.put(["large"], "k", large);
      expect((await store.get(["large"], "k"))?.value).toEqual(large);
      await expect(store.put(["large"], "k2", { text: "y".repeat(262_200) })).rejects.toThrow(
        StoreValueTooLargeError,
      );
    });

    it("refuses malformed filters, pages, TTLs, switches and queries", async () => {
      const { store } = setup();
      await refusal(
        store.search([], { filter: { a: { $regex: "x" } } }),
        "Invalid filter.a: expected operators among",
      );
      await refusal(
        store.search([], { filter: { a: { $gt: 1, b: 2 } } }),
        "Invalid filter.a: expected either operators ($eq, $gt, ...) or a value to compare, got both",
      );
      await refusal(
        store.search([], { filter: { a: { $gt: [1] } } }),
        "Invalid filter.a.$gt: expected a number or a string",
      );
      await refusal(
        store.search([], { filter: { a: { $in: "x" } } }),
        "Invalid filter.a.$in: expected an array",
      );
      await refusal(
        store.search([], { filter: { a: { $exists: 1 } } }),
        "Invalid filter.a.$exists: expected a boolean",
      );
      await refusal(
        store.search([], { filter: [] as unknown as Record<string, unknown> }),
        "Invalid filter",
      );
      await refusal(
        store.search([], { limit: -1 }),
        "Invalid limit: expected an integer from 0 to 1000, got -1",
      );
      await refusal(store.search([], { limit: 1.5 }), "Invalid limit");
      await refusal(store.search([], { limit: 1001 }), "Invalid limit");
      await refusal(
        store.search([], { offset: 10_001 }),
        "Invalid offset: expected an integer from 0 to 10000",
      );
      await refusal(
        store.listNamespaces({ maxDepth: 0 }),
        "Invalid maxDepth: expected a positive integer, got 0",
      );
      await refusal(store.listNamespaces({ limit: 5000 }), "Invalid limit");
      await refusal(
        store.put(["t"], "k", { a: 1 }, undefined, { ttl: 0 }),
        "Invalid ttl: expected a number of minutes above 0",
      );
      await refusal(store.put(["t"], "k", { a: 1 }, undefined, { ttl: Number.NaN }), "Invalid ttl");
      await refusal(
        store.get(["t"], "k", { refreshTtl: "yes" as unknown as boolean }),
        "Invalid refreshTtl: expected a boolean",
      );
      await refusal(
        store.search([], { query: "tea" }),
        "Invalid query: expected a store configured with an index",
      );
      await refusal(store.batch([{ nonsense: true } as never]), "Invalid operations[0]");
      expect(await store.get(["t"], "k")).toBeNull();
    });
  });

  describe(`${name}: tenant isolation`, () => {
    it("never lets another tenant see, list, search, overwrite or delete an item, with identical namespaces", async () => {
      const clock = new TestClock();
      const storeA = harness.create(clock);
      const storeB = harness.otherTenant(storeA, clock);
      expect(storeB.tenantId).not.toBe(storeA.tenantId);
      await storeA.put(["users", "u1"], "prefs", { owner: "A" });
      await storeA.put(["shared", "name"], "k", { owner: "A" });

      expect(await storeB.get(["users", "u1"], "prefs")).toBeNull();
      expect(await storeB.search([])).toEqual([]);
      expect(await storeB.search(["users"])).toEqual([]);
      expect(await storeB.listNamespaces()).toEqual([]);

      await storeB.delete(["users", "u1"], "prefs");
      await storeB.put(["shared", "name"], "k", { owner: "B" });
      expect((await storeA.get(["users", "u1"], "prefs"))?.value).toEqual({ owner: "A" });
      expect((await storeA.get(["shared", "name"], "k"))?.value).toEqual({ owner: "A" });
      expect((await storeB.get(["shared", "name"], "k"))?.value).toEqual({ owner: "B" });
      expect((await storeA.search([])).map((i) => i.value.owner)).toEqual(["A", "A"]);
      expect(await storeB.listNamespaces()).toEqual([["shared", "name"]]);
    });
  });

  describe(`${name}: semantic search`, () => {
    const withIndex = (options: Partial<StoreOptionsUnderTest["index"]> = {}) => {
      const embeddings = new WordCountEmbeddings();
      return {
        embeddings,
        ...setup({ index: { dims: VOCABULARY.length, embeddings, fields: ["text"], ...options } }),
      };
    };

    it("ranks the items under the prefix by similarity to the query, best first, with scores", async () => {
      const { store } = withIndex();
      await store.put(["m", "u1"], "drink", { text: "green tea with milk" });
      await store.put(["m", "u1"], "pet", { text: "a black cat and a dog" });
      await store.put(["m", "u1"], "trip", { text: "train travel window seat" });
      await store.put(["m", "u2"], "other", { text: "green tea" });
      const results = await store.search(["m", "u1"], { query: "tea" });
      expect(results.map((item) => item.key)).toEqual(["drink", "pet", "trip"]);
      expect(results[0]!.score).toBeCloseTo(1 / Math.sqrt(3), 5);
      expect(results[1]!.score).toBe(0);
      const travel = await store.search(["m"], { query: "window seat on a train", limit: 2 });
      expect(travel.map((item) => item.key)).toEqual(["trip", "drink"]);
      expect(travel[0]!.score).toBeGreaterThan(travel[1]!.score!);
    });

    it("embeds the index's fields, a put's own paths, or nothing with index: false", async () => {
      const { store, embeddings } = withIndex({ fields: ["text", "tags[*]"] });
      await store.put(["f"], "both", { text: "coffee", tags: ["tea", "milk"], other: "dog" });
      expect(embeddings.documentCalls.at(-1)).toEqual(["coffee", "tea", "milk"]);
      await store.put(["f"], "own", { text: "coffee", note: { title: "dog food" } }, [
        "note.title",
      ]);
      expect(embeddings.documentCalls.at(-1)).toEqual(["dog food"]);
      const calls = embeddings.documentCalls.length;
      await store.put(["f"], "none", { text: "dog" }, false);
      expect(embeddings.documentCalls).toHaveLength(calls);
      const ranked = await store.search(["f"], { query: "dog" });
      expect(ranked.map((item) => [item.key, item.score === undefined])).toEqual([
        ["own", false],
        ["both", false],
        ["none", true], // no vectors: after the ranked items, without a score
      ]);
    });

    it("filters before ranking and pages the ranked list", async () => {
      const { store } = withIndex();
      await store.put(["p"], "a", { text: "tea", kind: "drink" });
      await store.put(["p"], "b", { text: "tea tea coffee", kind: "drink" });
      await store.put(["p"], "c", { text: "tea", kind: "food" });
      await store.put(["p"], "d", { text: "coffee", kind: "drink" });
      const all = await store.search(["p"], { query: "tea", filter: { kind: "drink" } });
      expect(all.map((item) => item.key)).toEqual(["a", "b", "d"]);
      const page = await store.search(["p"], {
        query: "tea",
        filter: { kind: "drink" },
        offset: 1,
        limit: 1,
      });
      expect(page.map((item) => item.key)).toEqual(["b"]);
    });

    it("re-embeds an item when it is overwritten", async () => {
      const { store } = withIndex();
      await store.put(["u"], "k", { text: "coffee" });
      await store.put(["u"], "other", { text: "tea and coffee" });
      await store.put(["u"], "k", { text: "tea" });
      expect((await store.search(["u"], { query: "tea", limit: 1 }))[0]?.key).toBe("k");
      await store.put(["u"], "k", { text: "tea" }, false);
      expect((await store.search(["u"], { query: "tea" })).map((i) => i.key)).toEqual([
        "other",
        "k",
      ]);
    });

    it("refuses to rank more items than maxCandidates instead of ranking some of them", async () => {
      const { store } = withIndex({ maxCandidates: 5 });
      for (let i = 0; i < 6; i += 1) await store.put(["c"], `k${i}`, { text: "tea" });
      await expect(store.search(["c"], { query: "tea" })).rejects.toThrow(StoreSearchTooBroadError);
      await expect(store.search(["c"], { query: "tea" })).rejects.toThrow("more than 5 items");
      await store.delete(["c"], "k0");
      expect(await store.search(["c"], { query: "tea" })).toHaveLength(5);
      expect(await store.search(["c"], { limit: 100 })).toHaveLength(5);
    });

    it("refuses vectors of the wrong size from the model, writing nothing", async () => {
      const { store } = setup({
        index: { dims: 4, embeddings: new WrongSizeEmbeddings(), fields: ["text"] },
      });
      const attempt = store.put(["w"], "k", { text: "tea" });
      await expect(attempt).rejects.toThrow(StoreEmbeddingError);
      await expect(attempt).rejects.toThrow(
        "expected vectors of 4 numbers (index.dims), got 3 numbers",
      );
      expect(await store.get(["w"], "k")).toBeNull();
    });

    it("counts the vectors in an item's size", async () => {
      const { store } = setup({
        index: { dims: 4096, embeddings: new WordCountEmbeddings(4096), fields: ["parts[*]"] },
      });
      const parts = Array.from({ length: 30 }, (_, i) => `part ${i}`);
      await expect(store.put(["v"], "k", { parts })).rejects.toThrow(
        "the value's JSON with its embedding vectors takes",
      );
      await store.put(["v"], "k", { parts: parts.slice(0, 10) });
      expect(await store.get(["v"], "k")).not.toBeNull();
    });
  });

  describe(`${name}: agrees with LangGraph's InMemoryStore`, () => {
    it("gives the same gets, searches and listings for the same operations", async () => {
      const { clock, store } = setup();
      const reference = new InMemoryStore();
      const random = seededRandom(20260521);
      const pick = <T>(choices: readonly T[]): T => choices[Math.floor(random() * choices.length)]!;
      const namespaces = [
        ["users", "u1"],
        ["users", "u1", "notes"],
        ["users", "u2"],
        ["users2"],
        ["docs", "2024", "q1"],
        ["docs", "2024", "q2"],
        ["docs", "2025"],
      ];
      const keys = ["k1", "k2", "k3", "k4"];
      const colors = ["red", "green", "blue"];
      const both = async (operation: (s: InMemoryStore | TenantStore) => Promise<unknown>) => {
        clock.advance(1_000);
        await operation(reference);
        await operation(store);
      };
      // Every namespace keeps an item no step deletes: InMemoryStore lists namespaces emptied by deletes.
      for (const namespace of namespaces) {
        await both((s) => s.put(namespace, "anchor", { color: "none", size: 0, anchor: true }));
      }
      for (let step = 0; step < 80; step += 1) {
        const namespace = pick(namespaces);
        const key = pick(keys);
        if (random() < 0.2) await both((s) => s.delete(namespace, key));
        else {
          const value = {
            color: pick(colors),
            size: Math.floor(random() * 10),
            step,
            tags: [step % 3],
          };
          await both((s) => s.put(namespace, key, value));
        }
      }

      const sortedItems = (items: Item[]) =>
        items
          .map((item) => ({ namespace: item.namespace, key: item.key, value: item.value }))
          .sort((a, b) =>
            JSON.stringify([a.namespace, a.key]).localeCompare(
              JSON.stringify([b.namespace, b.key]),
            ),
          );
      for (const namespace of namespaces) {
        for (const key of [...keys, "anchor"]) {
          const [expected, actual] = await Promise.all([
            reference.get(namespace, key),
            store.get(namespace, key),
          ]);
          expect(actual?.value ?? null).toEqual(expected?.value ?? null);
        }
      }
      const filters: Array<Record<string, unknown> | undefined> = [
        undefined,
        { color: "red" },
        { color: { $ne: "blue" }, anchor: { $ne: true } },
        { size: { $gt: 4 } },
        { size: { $gte: 2, $lte: 6 }, color: { $in: ["red", "blue"] } },
        { color: { $nin: ["red"] }, size: { $lt: 5 } },
        { anchor: true },
      ];
      for (const prefix of [[], ["users"], ["users", "u1"], ["docs", "2024"], ["nothing"]]) {
        for (const filter of filters) {
          const [expected, actual] = await Promise.all([
            reference.search(prefix, { filter, limit: 1000 }),
            store.search(prefix, { filter, limit: 1000 }),
          ]);
          expect(sortedItems(actual)).toEqual(sortedItems(expected));
        }
      }
      const listings = [
        {},
        { prefix: ["users"] },
        { prefix: ["docs", "*", "q1"] },
        { suffix: ["q2"] },
        { suffix: ["*"] },
        { maxDepth: 1 },
        { maxDepth: 2, prefix: ["docs"] },
        { prefix: ["*", "2024"], maxDepth: 2 },
        { limit: 3, offset: 2 },
      ];
      for (const listing of listings) {
        const [expected, actual] = await Promise.all([
          reference.listNamespaces(listing),
          store.listNamespaces(listing),
        ]);
        // Lower-case labels: InMemoryStore's localeCompare order of "a:b" strings is our code-point order here.
        expect(actual).toEqual(expected);
      }
    });
  });
}

/** A small deterministic generator (mulberry32), so the compared operations are the same on every run. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
