/**
 * The image's expired-thread cleaner (CMD `cleaner.handler`), triggered by the table's stream. DynamoDB TTL
 * deletes only a thread's record; this removes the rest of that thread's items. Removals of thread records (by
 * TTL or by a deletion) are acted on, keeping any live generation; every other stream record is ignored. The event source mapping has
 * `ReportBatchItemFailures`: the records of threads that could not be cleaned are returned as batch item
 * failures (by sequence number), so the shard is retried from the first of them, not from the whole batch.
 * Removal is idempotent, so records retried after a success are harmless.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { readRuntimeConfig, requireTableName } from "../src/runtime/config";
import { createLogger } from "../src/runtime/observability";
import { InvalidEventError } from "../src/shared/errors";
import { connectTable } from "../src/table/client";
import {
  isThreadRecordRemoval,
  removeThreadLeftovers,
  type ThreadStreamRecord as StreamRecord,
} from "../src/table/thread-removal";
import { atColdStart } from "./init-error";

/** The response shape Lambda reads for `ReportBatchItemFailures`, with what was done for the logs and tests. */
export interface CleanerResult {
  /** Stream records (by sequence number) of threads that could not be cleaned: Lambda retries from them. */
  batchItemFailures: { itemIdentifier: string }[];
  /** Stream records received. */
  records: number;
  /** Threads (partitions) whose record removal was acted on. */
  threads: number;
  itemsRemoved: number;
}

export const handler = atColdStart(() => {
  const config = readRuntimeConfig(process.env);
  const tableName = requireTableName(config);
  const logger = createLogger(config.logLevel);
  const endpoint = config.dynamodbEndpoint;
  const table = connectTable(new DynamoDBClient(endpoint ? { endpoint } : {}), tableName);

  return async (event: unknown): Promise<CleanerResult> => {
    const records = streamRecords(event);
    const removals = records.filter(isThreadRecordRemoval);
    const partitions = [...new Set(removals.map((record) => record.dynamodb!.Keys!.pk!.S!))];
    const results = await Promise.allSettled(
      partitions.map((pk) => removeThreadLeftovers(table, pk)),
    );
    const failures = results.filter((result) => result.status === "rejected");
    const failedPartitions = new Set(
      partitions.filter((_, index) => results[index]!.status === "rejected"),
    );
    const failedRecords = removals.filter((record) =>
      failedPartitions.has(record.dynamodb!.Keys!.pk!.S!),
    );
    const itemsRemoved = results.reduce(
      (total, result) => total + (result.status === "fulfilled" ? result.value : 0),
      0,
    );
    logger.info(
      {
        records: records.length,
        threads: partitions.length,
        itemsRemoved,
        failed: failures.length,
      },
      "expired threads cleaned",
    );
    for (const failure of failures) {
      logger.error(
        { err: (failure as PromiseRejectedResult).reason },
        "expired thread not cleaned",
      );
    }
    // Without a sequence number a failed record cannot be reported alone: fail the batch, retried whole.
    if (failedRecords.some((record) => typeof record.dynamodb?.SequenceNumber !== "string")) {
      throw new AggregateError(
        failures.map((failure) => (failure as PromiseRejectedResult).reason),
        `${failures.length} of ${partitions.length} expired threads could not be cleaned; the batch is retried`,
      );
    }
    return {
      batchItemFailures: failedRecords.map((record) => ({
        itemIdentifier: record.dynamodb!.SequenceNumber!,
      })),
      records: records.length,
      threads: partitions.length,
      itemsRemoved,
    };
  };
});

function streamRecords(event: unknown): StreamRecord[] {
  const records = (event as { Records?: unknown } | null)?.Records;
  if (!Array.isArray(records)) {
    throw new InvalidEventError(
      "event",
      `expected a DynamoDB stream event with a Records array, got ${describeEvent(event)}`,
    );
  }
  records.forEach((record, index) => {
    if (typeof record !== "object" || record === null) {
      throw new InvalidEventError(
        `Records[${index}]`,
        `expected a stream record object, got ${typeof record}`,
      );
    }
    const keys = (record as StreamRecord).dynamodb?.Keys;
    if (isThreadRecordRemoval(record as StreamRecord) && typeof keys?.pk?.S !== "string") {
      throw new InvalidEventError(
        `Records[${index}].dynamodb.Keys.pk`,
        "expected a string key, got none",
      );
    }
  });
  return records as StreamRecord[];
}

function describeEvent(event: unknown): string {
  if (event === null || typeof event !== "object") return JSON.stringify(event) ?? typeof event;
  const keys = Object.keys(event);
  return keys.length === 0 ? "{}" : `an object with ${keys.slice(0, 5).join(", ")}`;
}
