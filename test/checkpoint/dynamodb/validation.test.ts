import { randomUUID } from "node:crypto";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation";
import { DynamoDBSaver } from "../../../src/checkpoint/dynamodb/saver";
import { createLocalClient, createTestTable } from "../../support/dynamodb";

// The official LangGraph checkpointer conformance suite, against DynamoDB Local (integration).
// Every createCheckpointer() gets its own tenant: the suite reuses thread ids and lists without a thread id.
let client: DynamoDBClient;
let tableName: string;

const initializer = {
  checkpointerName: "DynamoDBSaver",
  beforeAllTimeout: 60_000,
  async beforeAll() {
    client = createLocalClient();
    tableName = await createTestTable(client, "validation");
  },
  async afterAll() {
    client.destroy();
  },
  createCheckpointer() {
    return new DynamoDBSaver({ tableName, client, tenantId: `tenant-${randomUUID()}` });
  },
};

validate(initializer);
deltaChannelHistoryTests(initializer);
