import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { TableClient } from "../../src/table/client";
import { ExpiryPolicy } from "../../src/table/expiry";
import { ThreadRecords } from "../../src/table/thread-records";
import { createLocalClient, createTestTable, deleteTestTable } from "../support/dynamodb";
import { CONTRACT_EPOCH_MS, describeThreadStoreContract } from "../support/thread-store-contract";

let client: DynamoDBClient;
let tableName: string;

beforeAll(async () => {
  client = createLocalClient();
  tableName = await createTestTable(client, "thread-store-contract");
});
afterAll(async () => {
  await deleteTestTable(client, tableName);
  client.destroy();
});

// One table for the file, a fresh thread per test and per schedule. The store's own clock (expiry) reads the
// contract's epoch, the time every input starts from. The model-based test runs 60 schedules of at most 25 steps
// each here (each step is a request or two and a consistent read: about 10 s on a store that follows the model),
// 300 in memory.
describeThreadStoreContract(
  "ThreadRecords on DynamoDB Local",
  () =>
    new ThreadRecords(
      new TableClient(client, tableName),
      new ExpiryPolicy(),
      () => CONTRACT_EPOCH_MS,
    ),
  "tenant-table",
  { numRuns: 60, maxSteps: 25, timeoutMs: 240_000 },
);
