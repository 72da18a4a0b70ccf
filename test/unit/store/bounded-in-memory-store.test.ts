import {
  InvalidConfigurationError,
  InvalidIdentifierError,
  StoreCapacityError,
} from "../../../src/shared/errors";
import { BoundedInMemoryStore } from "../../../src/store/bounded-in-memory-store";
import { DEFAULT_IN_MEMORY_STORE_CONFIG } from "../../../src/store/in-memory-store-config";
import { TestClock, WordCountEmbeddings } from "../../store/store-fixtures";

// The bounded in-memory store's own guardrails (the behaviour it shares with DynamoDBStore is in
// bounded-in-memory-store-behaviour.test.ts).

describe("BoundedInMemoryStore configuration", () => {
  it("uses the documented defaults", () => {
    expect(DEFAULT_IN_MEMORY_STORE_CONFIG).toEqual({
      idleTtlSeconds: 86_400,
      maxItems: 10_000,
      maxTotalBytes: 64 * 1024 * 1024,
      maxValueBytes: 256 * 1024,
    });
    expect(new BoundedInMemoryStore().stats()).toEqual({
      items: 0,
      totalBytes: 0,
      expirations: { idle: 0, ttl: 0 },
      rejections: { maxItems: 0, maxTotalBytes: 0 },
    });
  });

  it.each([
    [{ config: { maxItems: 0 } }, "Invalid config.maxItems: expected a positive integer, got 0"],
    [
      { config: { maxItems: 1.5 } },
      "Invalid config.maxItems: expected a positive integer, got 1.5",
    ],
    [
      { config: { maxValueBytes: 400_000 } },
      "Invalid config.maxValueBytes: expected a positive integer up to 327680, got 400000",
    ],
    [
      { config: { idleTTL: 5 } },
      "Invalid config.idleTTL: expected one of idleTtlSeconds, maxItems, maxTotalBytes, maxValueBytes, got an unknown option",
    ],
    [{ config: [] }, "Invalid config: expected an object, got an array"],
    [
      { store: true },
      "Invalid store: expected one of config, ttl, index, now, got an unknown option",
    ],
    [{ now: 5 }, "Invalid now: expected a function, got 5"],
    [{ ttl: { defaultTtl: -1 } }, "Invalid ttl.defaultTtl: expected a number of minutes above 0"],
    [
      { ttl: { refreshOnRead: "yes" } },
      "Invalid ttl.refreshOnRead: expected a boolean, got a string",
    ],
    [
      { ttl: { sweepIntervalMinutes: 5 } },
      "Invalid ttl.sweepIntervalMinutes: expected one of defaultTtl, refreshOnRead",
    ],
    [
      { index: { dims: 0, embeddings: new WordCountEmbeddings() } },
      "Invalid index.dims: expected an integer from 1 to 16384, got 0",
    ],
    [
      { index: { dims: 3, embeddings: {} } },
      "Invalid index.embeddings: expected an Embeddings instance",
    ],
    [
      { index: { dims: 3, embeddings: new WordCountEmbeddings(), fields: ["a[x]"] } },
      "Invalid index.fields[0]: expected a field path",
    ],
    [
      { index: { dims: 3, embeddings: new WordCountEmbeddings(), maxCandidates: 0 } },
      "Invalid index.maxCandidates: expected a positive integer, got 0",
    ],
  ])("refuses %j at construction", (options, message) => {
    const build = () => new BoundedInMemoryStore(options as never);
    expect(build).toThrow(InvalidConfigurationError);
    expect(build).toThrow(message);
  });
});

describe("BoundedInMemoryStore guardrails", () => {
  it("refuses a write beyond maxItems whole, and counts the refusal", async () => {
    const store = new BoundedInMemoryStore({ config: { maxItems: 3 } });
    await store.put(["a"], "1", { n: 1 });
    await store.put(["a"], "2", { n: 2 });
    const batch = store.batch([
      { namespace: ["a"], key: "3", value: { n: 3 } },
      { namespace: ["a"], key: "4", value: { n: 4 } },
    ]);
    await expect(batch).rejects.toThrow(StoreCapacityError);
    await expect(batch).rejects.toThrow(
      "Store capacity exceeded: maxItems is 3, the write needed 4",
    );
    expect((await store.search(["a"])).map((item) => item.key)).toEqual(["1", "2"]);
    expect(store.stats()).toMatchObject({
      items: 2,
      rejections: { maxItems: 1, maxTotalBytes: 0 },
    });
    // Overwriting is not an additional item; a delete in the same step makes room.
    await store.put(["a"], "1", { n: 10 });
    await store.batch([
      { namespace: ["a"], key: "2", value: null },
      { namespace: ["a"], key: "3", value: { n: 3 } },
      { namespace: ["a"], key: "4", value: { n: 4 } },
    ]);
    expect((await store.search(["a"])).map((item) => item.key)).toEqual(["1", "3", "4"]);
  });

  it("refuses a write beyond maxTotalBytes, counting JSON, vectors and keys", async () => {
    const store = new BoundedInMemoryStore({ config: { maxTotalBytes: 1000 } });
    await store.put(["b"], "k1", { text: "x".repeat(400) });
    const first = store.stats().totalBytes;
    expect(first).toBe(JSON.stringify({ text: "x".repeat(400) }).length + "i#b##k1".length);
    await expect(store.put(["b"], "k2", { text: "x".repeat(600) })).rejects.toThrow(
      /Store capacity exceeded: maxTotalBytes is 1000, the write needed \d+/,
    );
    expect(store.stats()).toMatchObject({ items: 1, totalBytes: first });
    // Replacing a value counts only the difference.
    await store.put(["b"], "k1", { text: "x".repeat(900) });
    expect(await store.get(["b"], "k1")).not.toBeNull();
  });

  it("makes room from expired items before refusing", async () => {
    const clock = new TestClock();
    const store = new BoundedInMemoryStore({ config: { maxItems: 2 }, now: clock.now });
    await store.put(["c"], "short", { a: 1 }, undefined, { ttl: 1 });
    await store.put(["c"], "kept", { a: 1 });
    clock.advanceMinutes(2);
    await store.put(["c"], "new", { a: 1 });
    expect((await store.search(["c"])).map((item) => item.key)).toEqual(["kept", "new"]);
    expect(store.stats().expirations).toEqual({ idle: 0, ttl: 1 });
  });

  it("removes items neither read nor written for idleTtlSeconds, keeping what is used", async () => {
    const clock = new TestClock();
    const store = new BoundedInMemoryStore({ config: { idleTtlSeconds: 60 }, now: clock.now });
    await store.put(["d"], "read", { a: 1 });
    await store.put(["d"], "idle", { a: 1 });
    clock.advance(45_000);
    await store.get(["d"], "read");
    clock.advance(30_000);
    expect(await store.get(["d"], "idle")).toBeNull();
    expect(await store.get(["d"], "read")).not.toBeNull();
    expect(store.stats()).toMatchObject({ items: 1, expirations: { idle: 1, ttl: 0 } });
  });

  it("purges idle and expired items on demand and says how much went", async () => {
    const clock = new TestClock();
    const store = new BoundedInMemoryStore({ config: { idleTtlSeconds: 600 }, now: clock.now });
    await store.put(["e"], "ttl", { a: 1 }, undefined, { ttl: 1 });
    await store.put(["e"], "fresh", { a: 1 });
    clock.advanceMinutes(2);
    expect(store.purgeExpired()).toEqual({ items: 1, bytes: '{"a":1}'.length + "i#e##ttl".length });
    clock.advanceMinutes(10);
    expect(store.purgeExpired()).toEqual({
      items: 1,
      bytes: '{"a":1}'.length + "i#e##fresh".length,
    });
    expect(store.stats()).toMatchObject({
      items: 0,
      totalBytes: 0,
      expirations: { idle: 1, ttl: 1 },
    });
  });
});

describe("BoundedInMemoryStore tenants", () => {
  it("gives each tenant its own items on shared storage and guardrails", async () => {
    const root = new BoundedInMemoryStore({ config: { maxItems: 3 } });
    const acme = root.forTenant("acme");
    const globex = root.forTenant("globex");
    expect([root.tenantId, acme.tenantId, globex.tenantId]).toEqual(["", "acme", "globex"]);
    await root.put(["n"], "k", { owner: "root" });
    await acme.put(["n"], "k", { owner: "acme" });
    await globex.put(["n"], "k", { owner: "globex" });
    expect((await root.forTenant("acme").get(["n"], "k"))?.value).toEqual({ owner: "acme" });
    expect((await root.get(["n"], "k"))?.value).toEqual({ owner: "root" });
    expect(await acme.search([])).toHaveLength(1);
    await expect(globex.put(["n"], "k2", { owner: "globex" })).rejects.toThrow(StoreCapacityError);
    expect(acme.stats()).toEqual(root.stats());
  });

  it("refuses a tenant id that cannot be one", () => {
    const root = new BoundedInMemoryStore();
    expect(() => root.forTenant("a#b")).toThrow(InvalidIdentifierError);
    expect(() => root.forTenant("")).toThrow("Invalid tenant id: expected a non-empty string");
  });
});
