import { randomUUID } from "node:crypto";
import { threadPartitionKey } from "../../../src/table/keys";
import { TableClient } from "../../../src/table/client";
import { removeThreadLeftovers } from "../../../src/table/thread-removal";
import { pastExpiry, putValues, useSaverTable } from "./saver-fixtures";

// Whole-thread expiry and the cleaner, on DynamoDB Local.
const table = useSaverTable("saver-expiry");
const { newSaver } = table;

describe("DynamoDBSaver expiry (integration)", () => {
  it("reads an expired thread as absent at once and never revives its items", async () => {
    let now = Date.UTC(2026, 0, 1);
    const tenantId = `t-${randomUUID()}`;
    const saver = newSaver(tenantId, { ttlSeconds: 3600, now: () => now });
    const threadId = randomUUID();
    await putValues(saver, threadId, { old: "state" });
    now = pastExpiry(3600, now);
    const later = newSaver(tenantId, { ttlSeconds: 3600, now: () => now });
    expect(await later.getTuple({ configurable: { thread_id: threadId } })).toBeUndefined();
    const listed = [];
    for await (const tuple of later.list({ configurable: { thread_id: threadId } }))
      listed.push(tuple);
    expect(listed).toEqual([]);

    await putValues(later, threadId, { fresh: "start" });
    const history = [];
    for await (const tuple of later.list({ configurable: { thread_id: threadId } }))
      history.push(tuple);
    expect(history.map((tuple) => tuple.checkpoint.channel_values)).toEqual([{ fresh: "start" }]);
  });

  it("removes an expired thread's items with the cleaner and keeps a live one", async () => {
    let now = Date.UTC(2026, 0, 1);
    const tenantId = `t-${randomUUID()}`;
    const saver = newSaver(tenantId, { ttlSeconds: 60, now: () => now });
    const expired = randomUUID();
    const live = randomUUID();
    await putValues(saver, expired, { a: 1 });
    now = pastExpiry(60, now);
    await putValues(newSaver(tenantId, { ttlSeconds: 60, now: () => now }), live, { b: 2 });
    expect(
      await removeThreadLeftovers(
        new TableClient(table.client, table.tableName),
        threadPartitionKey(tenantId, expired),
        () => now,
      ),
    ).toBe(1); // its checkpoint; the record is DynamoDB TTL's to remove
    expect(
      await removeThreadLeftovers(
        new TableClient(table.client, table.tableName),
        threadPartitionKey(tenantId, live),
        () => now,
      ),
    ).toBe(0);
    const reader = newSaver(tenantId, { ttlSeconds: 60, now: () => now });
    expect(
      (await reader.getTuple({ configurable: { thread_id: live } }))!.checkpoint.channel_values,
    ).toEqual({ b: 2 });
  });
});
