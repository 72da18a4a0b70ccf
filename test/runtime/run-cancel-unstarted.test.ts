import type { Client } from "@langchain/langgraph-sdk";
import { chatGraph } from "./graphs";
import { createTable, startTestServer, type TestServer } from "./support";

/**
 * A cancel of a run that waits out `after_seconds` in a leg of this process answers once the run has ended, as
 * LangGraph Server marks a pending run interrupted before it answers (its API test lists the thread's interrupted
 * runs right after the cancel). DynamoDB Local with its writes slowed by SDK middleware (a stand-in for a loaded
 * table: DynamoDB Local cannot be slowed on demand) makes the leg's ending slower than the next read.
 */
const WRITE_DELAY_MS = 300;
const WRITES = new Set([
  "PutItemCommand",
  "UpdateItemCommand",
  "DeleteItemCommand",
  "TransactWriteItemsCommand",
  "BatchWriteItemCommand",
]);

describe("cancel of a run waiting out after_seconds (DynamoDB Local, writes slowed by SDK middleware)", () => {
  let server: TestServer;
  let client: Client;
  let slowWrites = false;

  beforeAll(async () => {
    const { client: dynamodb, tableName } = await createTable();
    dynamodb.middlewareStack.add(
      (next, context) => async (args) => {
        if (slowWrites && WRITES.has(context.commandName ?? "")) {
          await new Promise((resolve) => setTimeout(resolve, WRITE_DELAY_MS));
        }
        return next(args);
      },
      { step: "initialize", name: "slowWrites" },
    );
    server = await startTestServer({
      assistants: { chat: chatGraph },
      tableName,
      dynamodbClient: dynamodb,
    });
    client = await server.client("tenant-cancel-unstarted");
  });

  afterAll(async () => {
    await server?.close();
  });

  it("answers once the run has ended: a list right after sees it interrupted and the thread idle", async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "chat", {
      input: { messages: [{ role: "human", content: "much later" }] },
      afterSeconds: 30,
    });
    // The run's leg has taken the thread and waits out after_seconds.
    for (let tries = 0; (await client.threads.get(thread.thread_id)).status !== "busy"; tries++) {
      if (tries > 200) throw new Error("the run never took the thread");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    slowWrites = true;
    try {
      await client.runs.cancel(thread.thread_id, run.run_id);
      const interrupted = await client.runs.list(thread.thread_id, { status: "interrupted" });
      expect(interrupted.map((listed) => listed.run_id)).toEqual([run.run_id]);
      expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
    } finally {
      slowWrites = false;
    }
  });
});
