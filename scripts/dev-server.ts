/**
 * `npm start`: the Lambda handler on http://127.0.0.1:$PORT (default 3000) with the booking assistant.
 * Checkpoints live in the bounded in-memory saver, or in DynamoDB with TABLE_NAME (and DYNAMODB_ENDPOINT for
 * DynamoDB Local, where the table is created when missing).
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
} from "@aws-sdk/client-dynamodb";
import { InMemorySaver } from "../src/checkpoint/memory";
import { loadDevKeys, signDevToken } from "../src/dev/auth";
import { DEV_ASSISTANTS } from "../src/dev/assistants";
import { startDevServer } from "../src/dev/server";
import { readRuntimeConfig } from "../src/runtime/config";
import { createHandler, type HandlerOptions } from "../src/runtime/handler";
import { createTableInput } from "../src/table/definition";

async function main(): Promise<void> {
  const port = process.env.PORT === undefined ? 3000 : Number(process.env.PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`Invalid PORT: expected an integer from 0 to 65535, got ${process.env.PORT}`);
  }
  const environment = readRuntimeConfig(process.env);
  const tableName = environment.tableName;
  const options: HandlerOptions = { assistants: DEV_ASSISTANTS, metrics: false, environment };
  let storage = "bounded in-memory saver (lost on restart)";
  if (tableName) {
    const endpoint = environment.dynamodbEndpoint;
    const client = endpoint
      ? new DynamoDBClient({
          endpoint,
          region: process.env.AWS_REGION ?? "us-east-1",
          credentials: { accessKeyId: "local", secretAccessKey: "local" },
        })
      : new DynamoDBClient({});
    if (endpoint) await ensureLocalTable(client, tableName);
    options.tableName = tableName;
    options.dynamodbClient = client;
    storage = `DynamoDB table ${tableName}${endpoint ? ` at ${endpoint}` : ""}`;
  } else {
    options.checkpointer = new InMemorySaver();
  }
  const keys = await loadDevKeys();
  const running = await startDevServer({ handler: createHandler(options), keys, port });
  const token = await signDevToken(keys, { tenantId: "demo" });
  const auth = `-H "Authorization: Bearer ${token}" -H 'content-type: application/json'`;
  console.log(`Memory Table dev server on ${running.url} (assistant: booking; checkpoints: ${storage})
Dev token for tenant "demo" (12 h; another tenant: npm run -s token -- --tenant <id>):
${token}

Start a booking (pauses for approval):
  curl -s ${running.url}/invoke ${auth} -d '{"thread_id":"t1","input":{"request":"move my appointment"}}'
Approve it:
  curl -s ${running.url}/invoke ${auth} -d '{"thread_id":"t1","resume":{"approve":true}}'
The approvals inbox:
  curl -s ${running.url}/threads/search ${auth} -d '{"status":"interrupted"}'
`);
  const stop = () => {
    void running.close().then(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

/** DynamoDB Local only: create the table from the shared definition when it is missing. */
async function ensureLocalTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
    await client.send(new CreateTableCommand(createTableInput(tableName)));
  }
}

main().catch((error: unknown) => {
  console.error((error as Error).message);
  process.exit(1);
});
