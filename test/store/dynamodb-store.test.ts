import { randomBytes, randomUUID } from "node:crypto";
import { brotliDecompressSync } from "node:zlib";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand } from "@aws-sdk/lib-dynamodb";
import { DynamoDBSaver } from "../../src/checkpoint/dynamodb/saver";
import { DynamoDBStore } from "../../src/store/dynamodb-store";
import { MAX_ITEM_PAYLOAD_BYTES } from "../../src/store/value-json";
import { TableClient } from "../../src/table/client";
import { TableContext } from "../../src/table/context";
import {
  MAX_SORT_KEY_BYTES,
  storeItemSortKey,
  storeOwnItemsPrefix,
  storePartitionKey,
} from "../../src/table/keys";
import { StoreItems } from "../../src/table/store-items";
import { createLocalClient, createTestTable, localEndpoint } from "../support/dynamodb";
import { LOCAL_CLIENT_CONFIG } from "../support/dynamodb-local";
import { putValues } from "../checkpoint/dynamodb/saver-fixtures";
import { TestClock } from "./store-fixtures";

/**
 * What only the DynamoDB store shows: where its items live in the table and what they hold, which requests it
 * sends (Queries by namespace prefix, never a Scan) and how many, and that its partition is apart from the
 * tenant's threads. The behaviour both stores share is in dynamodb-store-behaviour.test.ts.
 */
let client: DynamoDBClient;
let documents: DynamoDBDocumentClient;
let tableName = "";

beforeAll(async () => {
  client = createLocalClient();
  documents = DynamoDBDocumentClient.from(client);
  tableName = await createTestTable(client, "store");
});
afterAll(() => client.destroy());

/** A client that records the command of every request it sends, and the capacity DynamoDB reports. */
function countingClient(): {
  client: DynamoDBClient;
  commands: string[];
  capacity(): number;
  reset(): void;
} {
  const commands: string[] = [];
  let units = 0;
  const counting = new DynamoDBClient({ ...LOCAL_CLIENT_CONFIG, endpoint: localEndpoint() });
  counting.middlewareStack.add(
    (next, context) => async (args) => {
      commands.push(String(context.commandName));
      const result = await next(args);
      const consumed = (result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity;
      for (const entry of [consumed].flat()) {
        units += (entry as { CapacityUnits?: number } | undefined)?.CapacityUnits ?? 0;
      }
      return result;
    },
    { step: "initialize", name: "commandRecorder" },
  );
  return {
    client: counting,
    commands,
    capacity: () => units,
    reset: () => {
      commands.splice(0);
      units = 0;
    },
  };
}

function rawItem(pk: string, sk: string) {
  return documents.send(new GetCommand({ TableName: tableName, Key: { pk, sk } }));
}

describe("DynamoDBStore items in the table", () => {
  it("keys each item by tenant, namespace and key in the tenant's store partition", async () => {
    const clock = new TestClock();
    const tenantId = `acme-${randomUUID()}`;
    const store = new DynamoDBStore({ tableName, client, tenantId, now: clock.now });
    await store.put(["users", "u#1"], "prefs", { theme: "dark" });
    const { Item } = await rawItem(`${tenantId}##store`, "i#users#u$c1##prefs");
    expect(Item).toEqual({
      pk: `${tenantId}##store`,
      sk: "i#users#u$c1##prefs",
      v: '{"theme":"dark"}',
      ca: clock.now(),
      ua: clock.now(),
    });
  });

  it("carries the DynamoDB TTL attribute (epoch seconds) and the TTL in minutes on expiring items", async () => {
    const clock = new TestClock();
    const tenantId = `acme-${randomUUID()}`;
    const store = new DynamoDBStore({ tableName, client, tenantId, now: clock.now });
    await store.put(["t"], "k", { a: 1 }, undefined, { ttl: 90 });
    const { Item } = await rawItem(`${tenantId}##store`, "i#t##k");
    expect(Item).toMatchObject({ ttl: clock.now() / 1000 + 90 * 60, tm: 90 });
    await store.put(["t"], "k", { a: 2 });
    const { Item: kept } = await rawItem(`${tenantId}##store`, "i#t##k");
    expect(kept).not.toHaveProperty("ttl");
    expect(kept).not.toHaveProperty("tm");
  });

  it("stores large values compressed when that is smaller, small ones as JSON text", async () => {
    const tenantId = `acme-${randomUUID()}`;
    const store = new DynamoDBStore({ tableName, client, tenantId });
    const value = { notes: "the user prefers window seats on morning trains. ".repeat(400) };
    await store.put(["docs"], "long", value);
    const { Item } = await rawItem(`${tenantId}##store`, "i#docs##long");
    expect(Item?.v).toBeInstanceOf(Uint8Array);
    const stored = Item?.v as Uint8Array;
    expect(stored.byteLength).toBeLessThan(JSON.stringify(value).length / 10);
    expect(JSON.parse(brotliDecompressSync(stored).toString("utf8"))).toEqual(value);
    expect((await store.get(["docs"], "long"))?.value).toEqual(value);
  });

  it("fits the largest item it can write in one DynamoDB item, even uncompressed", async () => {
    // The longest tenant id, a sort key at DynamoDB's limit, and a payload at the store's limit stored as
    // it is (what happens when compression does not make it smaller).
    const tenantId = "t".repeat(256);
    const namespace = Array.from({ length: 10 }, (_, i) => `${i}`.padEnd(99, "n"));
    const key = "k".repeat(MAX_SORT_KEY_BYTES - Buffer.byteLength(storeOwnItemsPrefix(namespace)));
    const sk = storeItemSortKey(namespace, key);
    expect(Buffer.byteLength(sk)).toBe(MAX_SORT_KEY_BYTES);
    const vectorBytes = 64 * 1024;
    const items = new StoreItems(new TableClient(client, tableName));
    await items.put(storePartitionKey(tenantId), sk, {
      value: "v".repeat(MAX_ITEM_PAYLOAD_BYTES - vectorBytes),
      nowMs: Date.now(),
      expiry: { expiresAt: Math.ceil(Date.now() / 1000) + 3600, ttlMinutes: 60 },
      vectors: new Uint8Array(vectorBytes),
    });
    const stored = await items.get(storePartitionKey(tenantId), sk);
    expect(String(stored?.v).length).toBe(MAX_ITEM_PAYLOAD_BYTES - vectorBytes);
    expect(stored?.e?.byteLength).toBe(vectorBytes);
  });

  it("keeps the store partition apart from the tenant's threads, even a thread named like it", async () => {
    const tenantId = `acme-${randomUUID()}`;
    const table = new TableContext({ tableName, client });
    const store = new DynamoDBStore({ table, tenantId });
    const saver = new DynamoDBSaver({ table, tenantId });
    await store.put(["memories"], "m1", { fact: "likes tea" });
    await putValues(saver, "#store", { messages: ["hello"] });
    await saver.deleteThread("#store");
    await putValues(saver, "store", { messages: ["hello"] });
    await saver.deleteThread("store");
    expect((await store.get(["memories"], "m1"))?.value).toEqual({ fact: "likes tea" });
    expect(await store.listNamespaces()).toEqual([["memories"]]);
  });
});

describe("DynamoDBStore requests", () => {
  it("reads with GetItem, BatchGetItem and Query only: never a Scan", async () => {
    const counting = countingClient();
    const store = new DynamoDBStore({
      tableName,
      client: counting.client,
      tenantId: `acme-${randomUUID()}`,
    });
    await store.batch([
      { namespace: ["a"], key: "1", value: { n: 1 } },
      { namespace: ["a", "b"], key: "2", value: { n: 2 } },
    ]);
    counting.reset();
    await store.get(["a"], "1");
    await store.batch([
      { namespace: ["a"], key: "1" },
      { namespace: ["a", "b"], key: "2" },
    ]);
    await store.search(["a"], { filter: { n: { $gt: 0 } } });
    await store.search([]);
    await store.listNamespaces({ suffix: ["b"] });
    expect([...new Set(counting.commands)].sort()).toEqual([
      "BatchGetItemCommand",
      "GetItemCommand",
      "QueryCommand",
    ]);
    counting.client.destroy();
  });

  it("reads one Query page for a page of results, filtered or not", async () => {
    const counting = countingClient();
    const store = new DynamoDBStore({
      tableName,
      client: counting.client,
      tenantId: `acme-${randomUUID()}`,
    });
    await store.batch(
      Array.from({ length: 200 }, (_, i) => ({
        namespace: ["memories", "u1"],
        key: `m${String(i).padStart(3, "0")}`,
        value: { i, kind: i % 2 === 0 ? "fact" : "preference" },
      })),
    );
    counting.reset();
    expect(await store.search(["memories"], { limit: 10 })).toHaveLength(10);
    expect(counting.commands).toEqual(["QueryCommand"]);
    counting.reset();
    expect(
      await store.search(["memories"], { filter: { kind: "preference" }, limit: 10 }),
    ).toHaveLength(10);
    expect(counting.commands).toEqual(["QueryCommand"]);
    counting.reset();
    // A sparse filter reads on, doubling the page each time, until the page is full or the range ends.
    expect(await store.search(["memories"], { filter: { i: { $gte: 190 } } })).toHaveLength(10);
    expect(counting.commands.length).toBeLessThanOrEqual(3);
    counting.client.destroy();
  });

  it("lists large namespaces with one small Query each, not by reading their items", async () => {
    const counting = countingClient();
    const store = new DynamoDBStore({
      tableName,
      client: counting.client,
      tenantId: `acme-${randomUUID()}`,
    });
    // 5 users with 80 memories of 2.5 KB each: some 190 RCU to read whole.
    await store.batch(
      Array.from({ length: 400 }, (_, i) => ({
        namespace: ["memories", `u${i % 5}`],
        key: `m${String(i).padStart(4, "0")}`,
        // Random text: it hardly compresses, so each item stays about 2 KB in the table.
        value: { text: randomBytes(1900).toString("base64"), i },
      })),
    );
    counting.reset();
    expect(await store.search(["memories"], { limit: 1000 })).toHaveLength(400);
    const wholeRead = counting.capacity();
    expect(wholeRead).toBeGreaterThan(150);
    counting.reset();
    expect(await store.listNamespaces()).toEqual(
      [0, 1, 2, 3, 4].map((user) => ["memories", `u${user}`]),
    );
    // A first page of 16 items, then one Query of about 4 KB per further user, and a last empty one.
    expect(counting.commands.length).toBeLessThanOrEqual(6);
    expect(counting.capacity()).toBeLessThan(wholeRead / 10);
    counting.reset();
    expect(await store.listNamespaces({ maxDepth: 1 })).toEqual([["memories"]]);
    expect(counting.commands.length).toBeLessThanOrEqual(2);
    counting.client.destroy();
  });

  it("lists many small namespaces in a few growing pages", async () => {
    const counting = countingClient();
    const store = new DynamoDBStore({
      tableName,
      client: counting.client,
      tenantId: `acme-${randomUUID()}`,
    });
    await store.batch(
      Array.from({ length: 200 }, (_, i) => ({
        namespace: ["profiles", `u${String(i).padStart(3, "0")}`],
        key: "profile",
        value: { i },
      })),
    );
    counting.reset();
    const listed = await store.listNamespaces({ limit: 1000 });
    expect(listed).toHaveLength(200);
    expect(listed[199]).toEqual(["profiles", "u199"]);
    // Pages of 16, 32, 64, 128 items: a few requests for the whole range, as a plain read.
    expect(counting.commands.length).toBeLessThanOrEqual(4);
    counting.client.destroy();
  });

  it("renews a hot item's TTL once per headroom, not on every read", async () => {
    const counting = countingClient();
    const clock = new TestClock();
    const store = new DynamoDBStore({
      tableName,
      client: counting.client,
      tenantId: `acme-${randomUUID()}`,
      now: clock.now,
    });
    await store.put(["h"], "k", { a: 1 }, undefined, { ttl: 100 });
    counting.reset();
    for (let read = 0; read < 60; read += 1) {
      clock.advanceMinutes(1);
      expect(await store.get(["h"], "k")).not.toBeNull();
    }
    const renewals = counting.commands.filter((command) => command === "UpdateItemCommand").length;
    // 60 minutes of reads with 10 minutes of headroom: a renewal every 11 minutes or so.
    expect(renewals).toBeGreaterThanOrEqual(5);
    expect(renewals).toBeLessThanOrEqual(6);
    counting.client.destroy();
  });

  it("writes an item with one UpdateItem, and a second only over an expired leftover", async () => {
    const counting = countingClient();
    const clock = new TestClock();
    const store = new DynamoDBStore({
      tableName,
      client: counting.client,
      tenantId: `acme-${randomUUID()}`,
      now: clock.now,
      ttl: { refreshOnRead: false },
    });
    await store.put(["w"], "k", { v: 1 }, undefined, { ttl: 1 });
    await store.put(["w"], "k", { v: 2 }, undefined, { ttl: 1 });
    expect(counting.commands).toEqual(["UpdateItemCommand", "UpdateItemCommand"]);
    counting.reset();
    clock.advanceMinutes(2);
    await store.put(["w"], "k", { v: 3 });
    expect(counting.commands).toEqual(["UpdateItemCommand", "UpdateItemCommand"]);
    counting.reset();
    await store.delete(["w"], "k");
    expect(counting.commands).toEqual(["BatchWriteItemCommand"]);
    counting.client.destroy();
  });
});
