import {
  CreateTableCommand,
  ScanCommand,
  type AttributeValue,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
  type TableDescription,
} from "@aws-sdk/client-dynamodb";
import { LOCAL_CREDENTIALS } from "../src/dev/dynamodb-local";
import { InvalidConfigurationError } from "../src/shared/errors";
import { createTableInput, TABLE_KEYS, THREAD_ATTRIBUTES } from "../src/table/definition";
import { THREAD_RECORD_SK } from "../src/table/keys";
import type { ThreadRef } from "../src/runtime/runs/run-manager";
import type { DevCheckpoints } from "./dev-checkpoints";

/*
 * The dev server's checkpoints on DynamoDB (DynamoDB Local or a table in AWS). This lives beside the dev server's
 * entry, not in src/: creating and describing tables is for development only, and nothing in src/ sends a
 * DynamoDB command the Terraform module does not grant.
 */

const LOCAL_HINT =
  "for DynamoDB Local run `npm run dev:dynamodb` (it starts one), or set DYNAMODB_ENDPOINT to one you run";

export interface DynamoDBCheckpointsOptions {
  tableName: string;
  /** DynamoDB Local (or another endpoint): the table is created when missing. Undefined: AWS. */
  endpoint?: string;
  region?: string;
}

/**
 * DynamoDB, checked before the server listens, so that a missing region, missing credentials, an endpoint
 * that does not answer or a missing table stop the start with a message that says what to do, rather than
 * every request answering 500.
 */
export async function dynamodbCheckpoints(
  options: DynamoDBCheckpointsOptions,
): Promise<DevCheckpoints> {
  const { tableName, endpoint } = options;
  const client = endpoint
    ? new DynamoDBClient({
        endpoint,
        region: options.region ?? "us-east-1",
        credentials: LOCAL_CREDENTIALS,
      })
    : new DynamoDBClient(options.region ? { region: options.region } : {});
  try {
    const region = endpoint ? undefined : await resolveRegion(client, tableName);
    if (!endpoint) await resolveCredentials(client, tableName);
    const table = await describeTable(client, tableName, endpoint, region);
    if (table) {
      checkKeySchema(table, tableName, endpoint);
    } else if (endpoint) {
      await client.send(new CreateTableCommand(createTableInput(tableName)));
    } else {
      throw new InvalidConfigurationError(
        "TABLE_NAME",
        `expected a table that exists in ${region}, got ${JSON.stringify(tableName)}, which does not ` +
          `(the dev server creates tables only on DynamoDB Local; in AWS the Terraform module does); ${LOCAL_HINT}`,
      );
    }
  } catch (error) {
    client.destroy();
    throw error;
  }
  return {
    options: { tableName, dynamodbClient: client },
    description: `DynamoDB table ${tableName}${endpoint ? ` at ${endpoint}` : ""}`,
    close: () => client.destroy(),
    unsettledThreads: () => unsettledThreads(client, tableName),
  };
}

/**
 * The thread records whose runs are not at rest, by a Scan of the whole table: fine for a dev server's table,
 * and the reason this is not in src/ (the module grants no Scan; a deployment recovers runs as they are read).
 */
async function* unsettledThreads(
  client: DynamoDBClient,
  tableName: string,
): AsyncGenerator<ThreadRef> {
  let startKey: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: tableName,
        ConsistentRead: true,
        FilterExpression:
          "#sk = :record AND (#status = :running OR attribute_exists(#continuing) OR size(#queue) > :zero)",
        ProjectionExpression: "#tenant, #thread",
        ExpressionAttributeNames: {
          "#sk": TABLE_KEYS.sortKey,
          "#status": THREAD_ATTRIBUTES.status,
          "#continuing": THREAD_ATTRIBUTES.continuing,
          "#queue": THREAD_ATTRIBUTES.runQueue,
          "#tenant": THREAD_ATTRIBUTES.tenant,
          "#thread": THREAD_ATTRIBUTES.threadId,
        },
        ExpressionAttributeValues: {
          ":record": { S: THREAD_RECORD_SK },
          ":running": { S: "RUNNING" },
          ":zero": { N: "0" },
        },
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) {
      const tenantId = item[THREAD_ATTRIBUTES.tenant]?.S;
      const threadId = item[THREAD_ATTRIBUTES.threadId]?.S;
      if (tenantId !== undefined && threadId !== undefined) yield { tenantId, threadId };
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
}

async function resolveRegion(client: DynamoDBClient, tableName: string): Promise<string> {
  try {
    return await client.config.region();
  } catch (error) {
    throw new InvalidConfigurationError(
      "AWS_REGION",
      `expected the AWS region of TABLE_NAME=${tableName} (AWS_REGION, or a region in your AWS profile), ` +
        `got none; ${LOCAL_HINT}`,
      { cause: error },
    );
  }
}

async function resolveCredentials(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.config.credentials();
  } catch (error) {
    throw new InvalidConfigurationError(
      "AWS credentials",
      `expected credentials for TABLE_NAME=${tableName} in AWS (AWS_PROFILE, AWS_ACCESS_KEY_ID and ` +
        `AWS_SECRET_ACCESS_KEY, or aws sso login), got none (${(error as Error).message}); ${LOCAL_HINT}`,
      { cause: error },
    );
  }
}

async function describeTable(
  client: DynamoDBClient,
  tableName: string,
  endpoint: string | undefined,
  region: string | undefined,
): Promise<TableDescription | undefined> {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return undefined;
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).name;
    if (endpoint) {
      throw new InvalidConfigurationError(
        "DYNAMODB_ENDPOINT",
        `expected DynamoDB (Local) answering at ${endpoint}, got ${reason}: is it running? ${LOCAL_HINT}`,
        { cause: error },
      );
    }
    throw new InvalidConfigurationError(
      "TABLE_NAME",
      `expected to read table ${tableName} in ${region} (dynamodb:DescribeTable), got ${reason}: ` +
        "check the AWS account and permissions of your credentials",
      { cause: error },
    );
  }
}

/** A table of another layout (created by an older version, or for something else) would fail on first use. */
function checkKeySchema(
  table: TableDescription,
  tableName: string,
  endpoint: string | undefined,
): void {
  const expected = createTableInput(tableName);
  const keys = (schema: { AttributeName?: string; KeyType?: string }[] | undefined) =>
    (schema ?? []).map((key) => `${key.AttributeName}:${key.KeyType}`).join(",");
  const indexes = (list: { IndexName?: string; KeySchema?: { AttributeName?: string }[] }[] = []) =>
    list
      .map((index) => `${index.IndexName}(${keys(index.KeySchema)})`)
      .sort()
      .join(" ");
  const want = `${keys(expected.KeySchema)} ${indexes(expected.GlobalSecondaryIndexes)}`;
  const got = `${keys(table.KeySchema)} ${indexes(table.GlobalSecondaryIndexes)}`;
  if (want !== got) {
    throw new InvalidConfigurationError(
      "TABLE_NAME",
      `expected a Memory Table table (keys and indexes ${want}), got ${tableName} with ${got}` +
        (endpoint ? ": delete it (or .dev/dynamodb-local/) to have it created anew" : ""),
    );
  }
}
