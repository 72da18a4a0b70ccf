import { randomUUID } from "node:crypto";
import {
  CreateTableCommand,
  DeleteTableCommand,
  DynamoDBClient,
  UpdateTimeToLiveCommand,
} from "@aws-sdk/client-dynamodb";
import { createTableInput, TTL_ATTRIBUTE } from "../../src/table/definition";
import { LOCAL_CLIENT_CONFIG } from "./dynamodb-local";

/** The DynamoDB Local endpoint started by Jest's global setup. */
export function localEndpoint(): string {
  const endpoint = process.env.MEMORY_TABLE_TEST_DYNAMODB_ENDPOINT;
  if (!endpoint) throw new Error("DynamoDB Local is not running: run the tests through `npm test`");
  return endpoint;
}

export function createLocalClient(endpoint = localEndpoint()): DynamoDBClient {
  return new DynamoDBClient({ ...LOCAL_CLIENT_CONFIG, endpoint });
}

/** Creates a fresh table from the shared table definition; returns its name. */
export async function createTestTable(
  client: DynamoDBClient,
  prefix = "memory-table-test",
): Promise<string> {
  const tableName = `${prefix}-${randomUUID()}`;
  await client.send(new CreateTableCommand(createTableInput(tableName)));
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { Enabled: true, AttributeName: TTL_ATTRIBUTE },
    }),
  );
  return tableName;
}

export async function deleteTestTable(client: DynamoDBClient, tableName: string): Promise<void> {
  await client.send(new DeleteTableCommand({ TableName: tableName }));
}
