import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  apiEvent,
  bookingHandlerOn,
  createTable,
  partitionItemCount,
  recordingClient,
  type TableHandle,
} from "./support";

const TENANT = "tenant-delete-requests";
const lambdaContext = { getRemainingTimeInMillis: () => 30_000 };

/**
 * A thread's deletion removes its record first, through the saver: the deletion's last step (delete the record
 * if this deletion still holds it) reads nothing back when this container removed the record after its lock.
 * On DynamoDB Local: the thread and every item of it are gone, and no GetItem is sent.
 */
describe("a thread's deletion reads no record back (integration)", () => {
  let table: TableHandle;
  beforeAll(async () => {
    table = await createTable();
  });

  const handlerOn = (client: DynamoDBClient) => bookingHandlerOn(table, client);

  const partitionItems = (threadId: string) => partitionItemCount(table, TENANT, threadId);

  it("DELETE /threads/{id}: lock, the saver's removal, and nothing read back; the thread is gone", async () => {
    const { client, sent } = recordingClient();
    const handler = handlerOn(client);
    const call = (method: string, path: string, body?: unknown) =>
      handler(
        apiEvent(method, path, {
          tenantId: TENANT,
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }),
        lambdaContext,
      );
    const threadId = "delete-requests-1";
    expect(
      (await call("POST", "/invoke", { thread_id: threadId, input: { request: "a room" } }))
        .statusCode,
    ).toBe(202);
    expect(await partitionItems(threadId)).toBeGreaterThan(1);
    sent.length = 0;
    expect((await call("DELETE", `/threads/${threadId}`)).statusCode).toBe(204);
    expect(sent[0]).toBe("UpdateItem");
    expect(sent).not.toContain("GetItem");
    expect(await partitionItems(threadId)).toBe(0);
    expect((await call("GET", `/threads/${threadId}`)).statusCode).toBe(404);
  });

  it("a stateless run deletes its thread without reading its record back", async () => {
    const { client, sent } = recordingClient();
    const handler = handlerOn(client);
    const count = async () =>
      JSON.parse(
        (
          await handler(
            apiEvent("POST", "/threads/count", { tenantId: TENANT, body: "{}" }),
            lambdaContext,
          )
        ).body!,
      ) as number;
    const before = await count();
    sent.length = 0;
    const answered = await handler(
      apiEvent("POST", "/runs/wait", {
        tenantId: TENANT,
        body: JSON.stringify({ assistant_id: "booking", input: { request: "a room" } }),
      }),
      lambdaContext,
    );
    expect(answered.statusCode).toBe(200);
    expect(JSON.parse(answered.body!)).toMatchObject({ request: "a room" });
    expect(sent).not.toContain("GetItem");
    // Its temporary thread is gone.
    expect(await count()).toBe(before);
  });
});
