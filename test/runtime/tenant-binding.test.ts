import { DynamoDBSaver } from "../../src/checkpoint/dynamodb/saver";
import { InMemorySaver } from "../../src/checkpoint/memory";
import { createHandler, type HandlerOptions } from "../../src/runtime/handler";
import { InvalidConfigurationError } from "../../src/shared/errors";
import { apiEvent, bookingAssistants, createTable, quietLogger } from "./support";

const base = { assistants: bookingAssistants(), logger: quietLogger, metrics: false as const };

/** Tenant b pauses thread `t`; tenant a then creates thread `b#t` and reads its state. */
async function crossTenantRead(options: Partial<HandlerOptions>) {
  const handler = createHandler({ ...base, ...options });
  const paused = await handler(
    apiEvent("POST", "/invoke", {
      body: JSON.stringify({ thread_id: "t", input: { request: "B-PRIVATE" } }),
      tenantId: "tenant-b",
    }),
  );
  expect(paused.statusCode).toBe(202);
  await handler(
    apiEvent("POST", "/threads", {
      body: JSON.stringify({ thread_id: "tenant-b#t" }),
      tenantId: "tenant-a",
    }),
  );
  return handler(apiEvent("GET", "/threads/tenant-b%23t/state", { tenantId: "tenant-a" }));
}

describe("tenant binding is decided by configuration", () => {
  it("refuses a single saver bound to one tenant as the shared checkpointer", async () => {
    const { client, tableName } = await createTable();
    const saver = new DynamoDBSaver({ client, tableName, tenantId: "tenant-b" });
    expect(() => createHandler({ ...base, checkpointer: saver })).toThrow(
      InvalidConfigurationError,
    );
  });

  it("refuses a factory's saver bound to another tenant than the caller's", async () => {
    const { client, tableName } = await createTable();
    const saver = new DynamoDBSaver({ client, tableName, tenantId: "tenant-b" });
    const read = await crossTenantRead({ checkpointer: () => saver });
    // Tenant a's create already failed (500, configuration error), so its read finds no thread.
    expect([404, 500]).toContain(read.statusCode);
    expect(read.body).not.toMatch(/B-PRIVATE/);
  });

  it.each<[string, () => Promise<Partial<HandlerOptions>>]>([
    [
      "the default DynamoDB saver per request",
      async () => {
        const { client, tableName } = await createTable();
        return { tableName, dynamodbClient: client };
      },
    ],
    [
      "a per-tenant factory",
      async () => {
        const { client, tableName } = await createTable();
        return {
          checkpointer: (tenantId: string) => new DynamoDBSaver({ client, tableName, tenantId }),
        };
      },
    ],
    ["a shared in-memory saver", async () => ({ checkpointer: new InMemorySaver() })],
  ])("keeps tenant b's thread out of tenant a's reach with %s", async (_name, options) => {
    const read = await crossTenantRead(await options());
    expect(read.statusCode).toBe(200);
    expect(read.body).not.toMatch(/B-PRIVATE/);
    expect(JSON.parse(read.body!).values).toEqual({});
  });
});
