import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { createLocalClient } from "../support/dynamodb";
import {
  apiEvent,
  bookingHandlerOn,
  createTable,
  recordingClient,
  type TableHandle,
} from "./support";

const TENANT = "tenant-first-read";
const lambdaContext = { getRemainingTimeInMillis: () => 30_000 };

/**
 * A run whose claim creates its thread reads no checkpoint before it starts (there is none, and no one else may
 * write one while it holds the thread): one Query fewer for `/invoke` starts and stateless runs, on DynamoDB Local.
 */
describe("a run that creates its thread starts without reading it (integration)", () => {
  let table: TableHandle;
  beforeAll(async () => {
    table = await createTable();
  });

  const handlerOn = (client: DynamoDBClient) => bookingHandlerOn(table, client);

  it("an /invoke start sends no Query; its resume reads the thread once; the state is the run's", async () => {
    const { client, sent } = recordingClient();
    const handler = handlerOn(client);
    const invoke = (body: unknown) =>
      handler(
        apiEvent("POST", "/invoke", { body: JSON.stringify(body), tenantId: TENANT }),
        lambdaContext,
      );
    const started = await invoke({ thread_id: "first-read-1", input: { request: "a room" } });
    expect(started.statusCode).toBe(202);
    expect(sent.filter((operation) => operation === "Query")).toEqual([]);
    sent.length = 0;
    const resumed = await invoke({ thread_id: "first-read-1", resume: { approve: true } });
    expect(resumed.statusCode).toBe(200);
    expect(sent.filter((operation) => operation === "Query")).toEqual(["Query"]);
    expect(JSON.parse(resumed.body!)).toMatchObject({ result: { booked: true } });

    // Read by another container: the checkpoints the start wrote are the thread's whole history.
    const reader = handlerOn(createLocalClient());
    const history = JSON.parse(
      (
        await reader(
          apiEvent("POST", "/threads/first-read-1/history", {
            body: JSON.stringify({ limit: 20 }),
            tenantId: TENANT,
          }),
          lambdaContext,
        )
      ).body!,
    ) as Array<{ metadata: { step: number } }>;
    expect(history.map((entry) => entry.metadata.step).sort((a, b) => a - b)).toEqual([
      -1, 0, 1, 2, 3,
    ]);
  });

  it("a start on a thread that exists (created empty first) still reads it", async () => {
    const { client, sent } = recordingClient();
    const handler = handlerOn(client);
    const created = await handler(
      apiEvent("POST", "/threads", {
        body: JSON.stringify({ thread_id: "first-read-2" }),
        tenantId: TENANT,
      }),
      lambdaContext,
    );
    expect(created.statusCode).toBe(200);
    sent.length = 0;
    const started = await handler(
      apiEvent("POST", "/invoke", {
        body: JSON.stringify({ thread_id: "first-read-2", input: { request: "a room" } }),
        tenantId: TENANT,
      }),
      lambdaContext,
    );
    expect(started.statusCode).toBe(202);
    expect(sent.filter((operation) => operation === "Query")).toEqual(["Query"]);
  });
});
