import { randomUUID } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { emptyCheckpoint, uuid6, type Checkpoint } from "@langchain/langgraph-checkpoint";
import { DynamoDBSaver } from "../../../src/checkpoint/dynamodb/saver";
import { ExpiryPolicy } from "../../../src/table/expiry";
import { createLocalClient, createTestTable, localEndpoint } from "../../support/dynamodb";
import { LOCAL_CLIENT_CONFIG } from "../../support/dynamodb-local";

/**
 * What the DynamoDBSaver integration tests share: a table on DynamoDB Local per test file, savers on it, and
 * checkpoints built the way LangGraph builds them. Faults DynamoDB Local cannot produce on demand (throttling,
 * a process dying mid-put) are injected with AWS SDK middleware by `instrumentedClient`.
 */
export interface SaverTable {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  newSaver(
    tenantId?: string,
    options?: Partial<ConstructorParameters<typeof DynamoDBSaver>[0]>,
  ): DynamoDBSaver;
}

/** A fresh table for the calling test file (created before its tests, its client closed after). */
export function useSaverTable(prefix: string): SaverTable {
  let client: DynamoDBClient | undefined;
  let tableName = "";
  beforeAll(async () => {
    client = createLocalClient();
    tableName = await createTestTable(client, prefix);
  });
  afterAll(() => client?.destroy());
  return {
    get client() {
      if (!client) throw new Error("the table is created in beforeAll");
      return client;
    },
    get tableName() {
      return tableName;
    },
    newSaver(tenantId = `tenant-${randomUUID()}`, options = {}) {
      return new DynamoDBSaver({ tableName, client, tenantId, ...options });
    },
  };
}

/** A client whose requests are counted (and optionally tampered with by `intercept`). */
export function instrumentedClient(
  intercept?: (command: string, input: Record<string, unknown>) => unknown,
): { client: DynamoDBClient; requests: string[] } {
  const requests: string[] = [];
  const instrumented = new DynamoDBClient({ ...LOCAL_CLIENT_CONFIG, endpoint: localEndpoint() });
  instrumented.middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName);
      requests.push(command);
      const replaced = intercept?.(command, args.input as Record<string, unknown>);
      if (replaced !== undefined) return replaced as Awaited<ReturnType<typeof next>>;
      return next(args);
    },
    { step: "initialize", name: "testInterceptor" },
  );
  return { client: instrumented, requests };
}

export function checkpointWith(
  values: Record<string, unknown>,
  versions: Record<string, number>,
): Checkpoint {
  return {
    ...emptyCheckpoint(),
    id: uuid6(-3),
    channel_values: values,
    channel_versions: versions,
  };
}

export const metadata = { source: "loop" as const, step: 0, parents: {} };

/** A moment just past the expiry of a thread last written at `writtenAt` (its TTL plus renewal headroom). */
export function pastExpiry(ttlSeconds: number, writtenAt: number): number {
  return new ExpiryPolicy(ttlSeconds).renewedExpiry(writtenAt) * 1000 + 1000;
}

export async function putValues(
  saver: DynamoDBSaver,
  threadId: string,
  values: Record<string, unknown>,
  parentId?: string,
) {
  const versions = Object.fromEntries(
    Object.keys(values).map((key) => [key, saver.getNextVersion(undefined)]),
  );
  const checkpoint = checkpointWith(values, versions);
  return saver.put(
    { configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: parentId } },
    checkpoint,
    metadata,
    versions,
  );
}
