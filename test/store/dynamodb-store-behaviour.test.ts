import { randomUUID } from "node:crypto";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBStore } from "../../src/store/dynamodb-store";
import { createLocalClient, createTestTable } from "../support/dynamodb";
import { describeStoreBehaviour } from "./store-behaviour";

// The shared store behaviour suite on DynamoDBStore, against DynamoDB Local: one table, a new tenant per store.
let client: DynamoDBClient;
let tableName = "";

beforeAll(async () => {
  client = createLocalClient();
  tableName = await createTestTable(client, "store-behaviour");
});
afterAll(() => client.destroy());

describeStoreBehaviour("DynamoDBStore", {
  create: (clock, options = {}) =>
    new DynamoDBStore({
      tableName,
      client,
      tenantId: `tenant-${randomUUID()}`,
      now: clock.now,
      ...options,
    }),
  otherTenant: (_store, clock) =>
    new DynamoDBStore({ tableName, client, tenantId: `tenant-${randomUUID()}`, now: clock.now }),
});
