import { DynamoDBSaver } from "../../../src/checkpoint/dynamodb/saver";
import { threadPartitionKey } from "../../../src/table/keys";
import { InvalidIdentifierError } from "../../../src/shared/errors";
import { buildBookingGraph } from "../../../src/examples/booking";
import { instrumentedClient, putValues, useSaverTable } from "./saver-fixtures";

// Tenant isolation and identifier checks of DynamoDBSaver, on DynamoDB Local.
const table = useSaverTable("saver-tenancy");
const { newSaver } = table;

describe("DynamoDBSaver tenancy (integration)", () => {
  it("keeps tenants apart: B cannot read, list, resume or delete A's thread with the same thread id", async () => {
    const threadId = "shared-thread";
    const tenantA = newSaver();
    const tenantB = newSaver();
    await putValues(tenantA, threadId, { secret: "of A" });

    expect(await tenantB.getTuple({ configurable: { thread_id: threadId } })).toBeUndefined();
    const listed = [];
    for await (const tuple of tenantB.list({ configurable: { thread_id: threadId } }))
      listed.push(tuple);
    for await (const tuple of tenantB.list({})) listed.push(tuple);
    expect(listed).toHaveLength(0);

    const graphB = buildBookingGraph({ checkpointer: tenantB });
    const resumed = await graphB.getState({ configurable: { thread_id: threadId } });
    expect(resumed.values).toEqual({});

    await tenantB.deleteThread(threadId);
    const stillThere = await tenantA.getTuple({ configurable: { thread_id: threadId } });
    expect(stillThere?.checkpoint.channel_values).toEqual({ secret: "of A" });
  });

  it.each([
    ["a tenant id with #", () => newSaver("acme#evil")],
    ["an empty tenant id", () => newSaver("")],
  ])("rejects %s at construction", (_name, build) => {
    expect(build).toThrow(InvalidIdentifierError);
  });

  it("escapes # in thread ids so no two (tenant, thread) pairs share a partition key", () => {
    expect(threadPartitionKey("a", "b#c")).not.toBe(threadPartitionKey("a", "b%23c"));
    expect(threadPartitionKey("a", "b#c")).not.toBe(threadPartitionKey("a", "b") + "#c");
  });

  it.each([
    ["an empty thread id", ""],
    ["a thread id with a control character", "bad\u0000id"],
    ["a thread id over 256 characters", "x".repeat(257)],
  ])("rejects %s before any request", async (_name, threadId) => {
    const { client: counted, requests } = instrumentedClient();
    const saver = new DynamoDBSaver({
      tableName: table.tableName,
      client: counted,
      tenantId: "t1",
    });
    await expect(saver.getTuple({ configurable: { thread_id: threadId } })).rejects.toThrow(
      InvalidIdentifierError,
    );
    await expect(putValues(saver, threadId, { a: 1 })).rejects.toThrow(InvalidIdentifierError);
    expect(requests).toEqual([]);
    counted.destroy();
  });
});
