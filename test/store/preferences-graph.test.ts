import { randomUUID } from "node:crypto";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBSaver } from "../../src/checkpoint/dynamodb/saver";
import {
  buildPreferencesGraph,
  PREFERENCE_KEY,
  preferenceNamespace,
} from "../../src/examples/preferences";
import { DynamoDBStore } from "../../src/store/dynamodb-store";
import { createLocalClient, createTestTable } from "../support/dynamodb";

// The preferences example on DynamoDB Local: a preference stated in one thread is known in another, through
// DynamoDBStore, with a new saver and store per invocation as on Lambda.
let client: DynamoDBClient;
let tableName = "";

beforeAll(async () => {
  client = createLocalClient();
  tableName = await createTestTable(client, "preferences");
});
afterAll(() => client.destroy());

/** One invocation as a Lambda container runs it: a saver and a store bound to the caller's tenant. */
async function invoke(tenantId: string, threadId: string, userId: string, message: string) {
  const graph = buildPreferencesGraph({
    checkpointer: new DynamoDBSaver({ tableName, client, tenantId }),
    store: new DynamoDBStore({ tableName, client, tenantId }),
  });
  return graph.invoke({ userId, message }, { configurable: { thread_id: threadId } });
}

describe("the preferences graph on DynamoDB", () => {
  it("remembers a user's preference across two threads through the store", async () => {
    const tenantId = `acme-${randomUUID()}`;
    const first = await invoke(tenantId, "thread-1", "ada", "I prefer green tea.");
    expect(first.reply).toBe("Noted: you prefer green tea.");

    const second = await invoke(tenantId, "thread-2", "ada", "What should I drink?");
    expect(second.reply).toBe("You prefer green tea.");
    expect(second.stated).toBeNull();

    // The memory is the store's, not the thread's: no checkpoint of thread 2 holds the statement.
    const saver = new DynamoDBSaver({ tableName, client, tenantId });
    const history = [];
    for await (const tuple of saver.list({ configurable: { thread_id: "thread-2" } })) {
      history.push(JSON.stringify(tuple.checkpoint.channel_values));
    }
    expect(history.length).toBeGreaterThan(0);
    expect(history.filter((values) => values.includes("I prefer"))).toEqual([]);
    const store = new DynamoDBStore({ tableName, client, tenantId });
    expect((await store.get(preferenceNamespace("ada"), PREFERENCE_KEY))?.value).toEqual({
      preference: "green tea",
    });
  });

  it("keeps each user's and each tenant's memories apart", async () => {
    const tenantId = `acme-${randomUUID()}`;
    await invoke(tenantId, "thread-1", "ada", "I like window seats");
    expect((await invoke(tenantId, "thread-2", "bob", "Any idea?")).reply).toBe(
      "I don't know your preference yet: tell me what you prefer.",
    );
    expect((await invoke(`globex-${randomUUID()}`, "thread-2", "ada", "Any idea?")).reply).toBe(
      "I don't know your preference yet: tell me what you prefer.",
    );
    await invoke(tenantId, "thread-3", "ada", "I love black coffee!");
    expect((await invoke(tenantId, "thread-4", "ada", "And now?")).reply).toBe(
      "You prefer black coffee.",
    );
  });
});
