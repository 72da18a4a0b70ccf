import { UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { threadPartitionKey, THREAD_RECORD_SK } from "../../src/table/keys";
import { createHandler } from "../../src/runtime/handler";
import { apiEvent, bookingAssistants, createTable, quietLogger } from "./support";

/** DynamoDB TTL deletes lazily: a thread past its expiry must act as gone, and its id must start afresh. */
describe("an expired thread not yet removed by DynamoDB TTL", () => {
  it("is 404 on reads and strict runs, and a new thread under its id does not see its old state", async () => {
    const table = await createTable();
    const handler = createHandler({
      assistants: bookingAssistants(),
      tableName: table.tableName,
      dynamodbClient: table.client,
      logger: quietLogger,
      metrics: false,
    });
    const tenantId = "tenant-expiry";
    const call = (method: string, path: string, body?: unknown) =>
      handler(
        apiEvent(method, path, {
          body: body === undefined ? undefined : JSON.stringify(body),
          tenantId,
        }),
      );
    const expire = (threadId: string) =>
      table.client.send(
        new UpdateItemCommand({
          TableName: table.tableName,
          Key: { pk: { S: threadPartitionKey(tenantId, threadId) }, sk: { S: THREAD_RECORD_SK } },
          UpdateExpression: "SET #ttl = :past",
          ExpressionAttributeNames: { "#ttl": "ttl" },
          ExpressionAttributeValues: { ":past": { N: String(Math.floor(Date.now() / 1000) - 60) } },
        }),
      );

    expect(
      (await call("POST", "/invoke", { thread_id: "old", input: { request: "first" } })).statusCode,
    ).toBe(202);
    await expire("old");

    expect((await call("GET", "/threads/old")).statusCode).toBe(404);
    expect((await call("GET", "/threads/old/status")).statusCode).toBe(404);
    expect(
      (await call("POST", "/invoke", { thread_id: "old", resume: { approve: true } })).statusCode,
    ).toBe(404);
    expect(
      (
        await call("POST", "/threads/old/runs/wait", {
          assistant_id: "booking",
          input: { request: "x" },
        })
      ).statusCode,
    ).toBe(404);
    const inbox = JSON.parse(
      (await call("POST", "/threads/search", { status: "interrupted" })).body!,
    );
    expect(inbox).toEqual([]);

    // Starting again under the id is a fresh thread: one run, no history of the expired one.
    const fresh = await call("POST", "/invoke", { thread_id: "old", input: { request: "second" } });
    expect(fresh.statusCode).toBe(202);
    const history = JSON.parse((await call("POST", "/threads/old/history", { limit: 100 })).body!);
    expect(
      history.map((state: { values: { request?: string } }) => state.values.request ?? null),
    ).not.toContain("first");

    // The same for POST /threads on an expired id.
    await expire("old");
    const created = await call("POST", "/threads", { thread_id: "old" });
    expect(created.statusCode).toBe(200);
    const state = JSON.parse((await call("GET", "/threads/old/state")).body!);
    expect(state.values).toEqual({});
  });
});
