/**
 * DynamoDB cost of the long-term memory store (DynamoDBStore) on DynamoDB Local: requests (by operation) counted
 * by a client middleware and capacity units from `ReturnConsumedCapacity: TOTAL`, for each store operation on a
 * tenant holding realistic memories. Reads are strongly consistent (1 RCU per 4 KB read, per request rounded
 * up); writes cost 1 WCU per KB of the larger of the old and new item.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { Embeddings } from "@langchain/core/embeddings";
import { DynamoDBStore } from "../src/store/dynamodb-store";
import type { DynamoDBStoreOptions } from "../src/store/dynamodb-store-options";
import { WALK_FIRST_PAGE } from "../src/store/dynamodb-store-backend";
import { createTestTable } from "../test/support/dynamodb";
import { LOCAL_CLIENT_CONFIG } from "../test/support/dynamodb-local";
import { writeResults, type BenchContext } from "./context";
import { createMeteredClient, printTable } from "./dynamodb";

/** Items per search namespace: a user with many memories. */
const MEMORIES = 1000;
/** Namespaces of the listing workload, and items in each. */
const USERS = 100;
const ITEMS_PER_USER = 10;
/** Dimensions of the semantic workload (OpenAI's text-embedding-3-small). */
const DIMS = 1536;
const SEMANTIC_ITEMS = 200;

interface Measurement {
  operation: string;
  requests: number;
  capacityUnits: number;
  byOperation: string;
  results: number;
}

type Meter = ReturnType<typeof createMeteredClient>["meter"];

/** Runs `work` and returns what it sent, by difference of the meter. */
async function measure(
  meter: Meter,
  operation: string,
  work: () => Promise<number>,
): Promise<Measurement> {
  const before = structuredClone(meter);
  const results = await work();
  const requestsBy = Object.entries(meter.requestsByOperation)
    .map(([name, count]) => [name, count - (before.requestsByOperation[name] ?? 0)] as const)
    .filter(([, count]) => count > 0);
  return {
    operation,
    requests: meter.requests - before.requests,
    capacityUnits: round(meter.capacityUnits - before.capacityUnits),
    byOperation: requestsBy
      .map(([name, count]) => {
        const units =
          (meter.capacityByOperation[name] ?? 0) - (before.capacityByOperation[name] ?? 0);
        return `${name} ${count} (${round(units)} CU)`;
      })
      .join(", "),
    results,
  };
}

/** A memory as an agent writes one: a sentence or two, a kind, a time. */
function memory(i: number) {
  return {
    text: `Memory ${i}: the user mentioned ${["tea", "trains", "window seats", "cats"][i % 4]} while planning trip ${i}.`,
    kind: i % 2 === 0 ? "fact" : "preference",
    importance: i % 100,
    at: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
  };
}

/** Deterministic 1,536-dimension embeddings (a hash per text): realistic vector size, no model. */
class HashEmbeddings extends Embeddings {
  constructor() {
    super({});
  }

  async embedDocuments(documents: string[]): Promise<number[][]> {
    return documents.map((text) => this.vector(text));
  }

  async embedQuery(text: string): Promise<number[]> {
    return this.vector(text);
  }

  private vector(text: string): number[] {
    const vector: number[] = [];
    for (let block = 0; vector.length < DIMS; block += 1) {
      const digest = createHash("sha256").update(`${block}:${text}`).digest();
      for (const byte of digest) vector.push(byte / 255 - 0.5);
    }
    return vector.slice(0, DIMS);
  }
}

export default async function storeBench({ endpoint }: BenchContext): Promise<void> {
  const setupClient = new DynamoDBClient({ ...LOCAL_CLIENT_CONFIG, endpoint });
  const tableName = await createTestTable(setupClient, "bench-store");
  setupClient.destroy();
  const { client, meter } = createMeteredClient(endpoint);
  const newStore = (tenantId: string, options: Partial<DynamoDBStoreOptions> = {}) =>
    new DynamoDBStore({ tableName, client, tenantId, ...options });

  const rows: Measurement[] = [];
  const tenant = `bench-${randomUUID()}`;
  const store = newStore(tenant);

  // Writes.
  rows.push(
    await measure(meter, "put (new item, 200 B)", async () => {
      await store.put(["memories", "u0"], "first", memory(0));
      return 1;
    }),
  );
  rows.push(
    await measure(meter, "put (overwrite, 200 B)", async () => {
      await store.put(["memories", "u0"], "first", memory(1));
      return 1;
    }),
  );
  const document = { text: Array.from({ length: 200 }, (_, i) => memory(i).text).join(" ") };
  rows.push(
    await measure(
      meter,
      `put (${Math.round(JSON.stringify(document).length / 1024)} KB document, stored compressed)`,
      async () => {
        await store.put(["docs"], "trip-notes", document);
        return 1;
      },
    ),
  );
  rows.push(
    await measure(meter, "put with TTL", async () => {
      await store.put(["session"], "draft", memory(2), undefined, { ttl: 60 });
      return 1;
    }),
  );
  rows.push(
    await measure(meter, "delete", async () => {
      await store.delete(["session"], "draft");
      return 1;
    }),
  );

  // A user with many memories, written in one batch.
  await store.batch(
    Array.from({ length: MEMORIES }, (_, i) => ({
      namespace: ["memories", "u1"],
      key: `m${String(i).padStart(4, "0")}`,
      value: memory(i),
    })),
  );

  // Reads.
  rows.push(
    await measure(meter, "get", async () =>
      (await store.get(["memories", "u1"], "m0001")) ? 1 : 0,
    ),
  );
  rows.push(
    await measure(meter, "get (missing)", async () =>
      (await store.get(["memories", "u1"], "none")) ? 1 : 0,
    ),
  );
  rows.push(
    await measure(meter, "batch of 10 gets", async () => {
      const results = await store.batch(
        Array.from({ length: 10 }, (_, i) => ({
          namespace: ["memories", "u1"],
          key: `m${String(i * 7).padStart(4, "0")}`,
        })),
      );
      return results.filter(Boolean).length;
    }),
  );
  // A TTL item read on a clock the bench moves: a read renews the TTL once, then not again within the headroom.
  let clockMs = Date.now();
  const ttlStore = newStore(tenant, { now: () => clockMs });
  await ttlStore.put(["session"], "hot", memory(3), undefined, { ttl: 60 });
  clockMs += 2 * 60_000;
  rows.push(
    await measure(meter, "get of a TTL item, 2 min after its put (renews it)", async () =>
      (await ttlStore.get(["session"], "hot")) ? 1 : 0,
    ),
  );
  clockMs += 2 * 60_000;
  rows.push(
    await measure(meter, "get of the TTL item 2 min later (within the headroom)", async () =>
      (await ttlStore.get(["session"], "hot")) ? 1 : 0,
    ),
  );

  const searchRow = async (label: string, options: Parameters<DynamoDBStore["search"]>[1]) =>
    rows.push(
      await measure(
        meter,
        label,
        async () => (await store.search(["memories", "u1"], options)).length,
      ),
    );
  await searchRow(`search ${MEMORIES} items, limit 10`, { limit: 10 });
  await searchRow(`search ${MEMORIES} items, limit 100`, { limit: 100 });
  await searchRow(`search ${MEMORIES} items, limit 10 offset 500`, { limit: 10, offset: 500 });
  await searchRow(`search ${MEMORIES} items, filter kind = preference (50%), limit 10`, {
    filter: { kind: "preference" },
    limit: 10,
  });
  await searchRow(`search ${MEMORIES} items, filter importance >= 99 (1%), limit 10`, {
    filter: { importance: { $gte: 99 } },
    limit: 10,
  });
  await searchRow(`search ${MEMORIES} items, filter matching none`, {
    filter: { kind: "none" },
    limit: 10,
  });

  // Listing: many users' namespaces.
  const listTenant = `bench-${randomUUID()}`;
  const listStore = newStore(listTenant);
  await listStore.batch(
    Array.from({ length: USERS * ITEMS_PER_USER }, (_, i) => ({
      namespace: ["memories", `user-${String(Math.floor(i / ITEMS_PER_USER)).padStart(3, "0")}`],
      key: `m${i % ITEMS_PER_USER}`,
      value: memory(i),
    })),
  );
  const listRow = async (label: string, options: Parameters<DynamoDBStore["listNamespaces"]>[0]) =>
    rows.push(
      await measure(meter, label, async () => (await listStore.listNamespaces(options)).length),
    );
  await listRow(`listNamespaces, ${USERS} namespaces x ${ITEMS_PER_USER} items`, {});
  await listRow("listNamespaces, limit 10", { limit: 10 });
  await listRow("listNamespaces, maxDepth 1", { maxDepth: 1 });
  await listRow("listNamespaces, suffix [user-042]", { suffix: ["user-042"] });
  rows.push(
    await measure(
      meter,
      `reference: reading all ${USERS * ITEMS_PER_USER} items of those namespaces`,
      async () => (await listStore.search(["memories"], { limit: 1000 })).length,
    ),
  );
  // Large namespaces: the walk jumps past each with a small Query instead of reading it.
  rows.push(
    await measure(
      meter,
      `listNamespaces of the first tenant (4 namespaces, one of ${MEMORIES} items)`,
      async () => (await store.listNamespaces()).length,
    ),
  );
  rows.push(
    await measure(
      meter,
      `reference: reading all ${MEMORIES} items of the large namespace`,
      async () => (await store.search(["memories", "u1"], { limit: 1000 })).length,
    ),
  );
  // Documents: 10 namespaces of 100 items of about 2 KB (random text, which does not compress).
  const documentStore = newStore(`bench-${randomUUID()}`);
  await documentStore.batch(
    Array.from({ length: 1000 }, (_, i) => ({
      namespace: ["documents", `project-${i % 10}`],
      key: `doc-${String(i).padStart(4, "0")}`,
      value: { body: randomBytes(1500).toString("base64") },
    })),
  );
  rows.push(
    await measure(
      meter,
      "listNamespaces, 10 namespaces x 100 documents of 2 KB",
      async () => (await documentStore.listNamespaces()).length,
    ),
  );
  rows.push(
    await measure(
      meter,
      "reference: reading all 1000 documents",
      async () => (await documentStore.search(["documents"], { limit: 1000 })).length,
    ),
  );
  rows.push(
    await measure(
      meter,
      "search 100 documents of 2 KB, limit 10",
      async () => (await documentStore.search(["documents", "project-3"], { limit: 10 })).length,
    ),
  );

  // Semantic search: vectors are read with the items and compared in the function.
  const semanticStore = newStore(`bench-${randomUUID()}`, {
    index: { dims: DIMS, embeddings: new HashEmbeddings(), fields: ["text"] },
  });
  rows.push(
    await measure(meter, `put with a ${DIMS}-dim embedding`, async () => {
      await semanticStore.put(["memories", "u1"], "m-first", memory(0));
      return 1;
    }),
  );
  await semanticStore.batch(
    Array.from({ length: SEMANTIC_ITEMS }, (_, i) => ({
      namespace: ["memories", "u1"],
      key: `m${i}`,
      value: memory(i),
    })),
  );
  rows.push(
    await measure(
      meter,
      `semantic search over ${SEMANTIC_ITEMS + 1} items (${DIMS} dims), limit 10`,
      async () =>
        (
          await semanticStore.search(["memories", "u1"], {
            query: "window seats on trains",
            limit: 10,
          })
        ).length,
    ),
  );
  rows.push(
    await measure(
      meter,
      `plain search over the same items, limit 10`,
      async () => (await semanticStore.search(["memories", "u1"], { limit: 10 })).length,
    ),
  );
  client.destroy();

  printTable([
    ["operation", "results", "requests", "capacity units", "by operation"],
    ...rows.map((row) => [
      row.operation,
      String(row.results),
      String(row.requests),
      row.capacityUnits.toFixed(1),
      row.byOperation,
    ]),
  ]);
  console.log(
    `\nkeys: one partition per tenant (<tenant>##store), sort key i#<labels>##<key>; a namespace listing reads ${WALK_FIRST_PAGE} items, doubles its pages over small namespaces and jumps past large ones with Queries of about 4 KB`,
  );
  const file = writeResults("store", {
    setup: {
      memories: MEMORIES,
      users: USERS,
      itemsPerUser: ITEMS_PER_USER,
      dims: DIMS,
      semanticItems: SEMANTIC_ITEMS,
      walkFirstPage: WALK_FIRST_PAGE,
    },
    rows,
  });
  console.log(`written ${file}`);
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
