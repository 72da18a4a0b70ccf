import {
  BatchGetCommand,
  BatchWriteCommand,
  type BatchGetCommandInput,
  type DynamoDBDocumentClient,
} from "@aws-sdk/lib-dynamodb";
import { CheckpointStoreError } from "../../shared/errors";

/**
 * Batch reads and writes that never drop anything: throttling errors and `UnprocessedItems`/`UnprocessedKeys`
 * are retried with capped exponential backoff and full jitter, and only a persistent failure is thrown.
 */
export const BATCH_WRITE_LIMIT = 25;
export const BATCH_GET_LIMIT = 100;

const MAX_ATTEMPTS = 10;
const BASE_DELAY_MS = 20;
const MAX_DELAY_MS = 2_000;

const THROTTLING_ERRORS = new Set([
  "ProvisionedThroughputExceededException",
  "ThrottlingException",
  "RequestLimitExceeded",
  "TooManyRequestsException",
]);

export function isThrottlingError(error: unknown): boolean {
  return error instanceof Error && THROTTLING_ERRORS.has(error.name);
}

export function backoffDelay(attempt: number): number {
  return Math.random() * Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** attempt);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `operation`, retrying throttling errors with backoff. */
export async function withThrottlingRetry<T>(operation: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await operation();
    } catch (error) {
      if (!isThrottlingError(error) || attempt + 1 >= MAX_ATTEMPTS) throw error;
      await sleep(backoffDelay(attempt));
    }
  }
}

type WriteRequest = NonNullable<
  NonNullable<ConstructorParameters<typeof BatchWriteCommand>[0]["RequestItems"]>[string]
>[number];

/** Writes (puts and deletes) of one table, in batches of 25, until every request is processed. */
export async function batchWriteAll(
  client: DynamoDBDocumentClient,
  tableName: string,
  requests: WriteRequest[],
): Promise<void> {
  const batches: WriteRequest[][] = [];
  for (let i = 0; i < requests.length; i += BATCH_WRITE_LIMIT) {
    batches.push(requests.slice(i, i + BATCH_WRITE_LIMIT));
  }
  await Promise.all(batches.map((batch) => writeBatch(client, tableName, batch)));
}

async function writeBatch(
  client: DynamoDBDocumentClient,
  tableName: string,
  batch: WriteRequest[],
): Promise<void> {
  let pending = batch;
  for (let attempt = 0; pending.length > 0; attempt += 1) {
    if (attempt >= MAX_ATTEMPTS) {
      throw new CheckpointStoreError(
        `BatchWriteItem left ${pending.length} items unprocessed after ${MAX_ATTEMPTS} attempts`,
      );
    }
    if (attempt > 0) await sleep(backoffDelay(attempt));
    const response = await withThrottlingRetry(() =>
      client.send(new BatchWriteCommand({ RequestItems: { [tableName]: pending } })),
    );
    pending = (response.UnprocessedItems?.[tableName] ?? []) as WriteRequest[];
  }
}

type Key = Record<string, unknown>;

/** Reads keys of one table, in batches of 100, consistently, until every key is answered. */
export async function batchGetAll(
  client: DynamoDBDocumentClient,
  tableName: string,
  keys: Key[],
  projection?: Pick<
    NonNullable<BatchGetCommandInput["RequestItems"]>[string],
    "ProjectionExpression" | "ExpressionAttributeNames"
  >,
): Promise<Record<string, unknown>[]> {
  const batches: Key[][] = [];
  for (let i = 0; i < keys.length; i += BATCH_GET_LIMIT) {
    batches.push(keys.slice(i, i + BATCH_GET_LIMIT));
  }
  const results = await Promise.all(
    batches.map((batch) => getBatch(client, tableName, batch, projection)),
  );
  return results.flat();
}

async function getBatch(
  client: DynamoDBDocumentClient,
  tableName: string,
  batch: Key[],
  projection: Parameters<typeof batchGetAll>[3],
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let pending = batch;
  for (let attempt = 0; pending.length > 0; attempt += 1) {
    if (attempt >= MAX_ATTEMPTS) {
      throw new CheckpointStoreError(
        `BatchGetItem left ${pending.length} keys unprocessed after ${MAX_ATTEMPTS} attempts`,
      );
    }
    if (attempt > 0) await sleep(backoffDelay(attempt));
    const response = await withThrottlingRetry(() =>
      client.send(
        new BatchGetCommand({
          RequestItems: { [tableName]: { Keys: pending, ConsistentRead: true, ...projection } },
        }),
      ),
    );
    items.push(...((response.Responses?.[tableName] ?? []) as Record<string, unknown>[]));
    pending = (response.UnprocessedKeys?.[tableName]?.Keys ?? []) as Key[];
  }
  return items;
}
