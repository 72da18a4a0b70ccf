import { startDynamoDBLocal } from "./dynamodb-local";

/** Starts one DynamoDB Local for the whole run; workers find it through the environment. */
export default async function globalSetup(): Promise<void> {
  const local = await startDynamoDBLocal();
  process.env.MEMORY_TABLE_TEST_DYNAMODB_ENDPOINT = local.endpoint;
  process.env.MEMORY_TABLE_TEST_DYNAMODB_PID = String(local.pid);
}
