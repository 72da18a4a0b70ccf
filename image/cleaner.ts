/**
 * The image's expired-thread cleaner (CMD `cleaner.handler`), triggered by the table's stream. DynamoDB TTL
 * deletes only a thread's record; this removes the rest of that thread's items. Only TTL removals of thread
 * records are acted on; every other stream record is ignored. Removal is idempotent, so a failed batch is
 * thrown and retried whole by the event source mapping.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  isExpiredThreadRemoval,
  removeExpiredThreadItems,
} from "../src/checkpoint/dynamodb/expired-threads";
import { InvalidEventError } from "../src/shared/errors";
import { createLogger } from "../src/runtime/observability";
import { readEndpoint, readLogLevel, readTableName } from "./image-config";
import { atColdStart } from "./init-error";

type StreamRecord = Parameters<typeof isExpiredThreadRemoval>[0];

export interface CleanerResult {
  /** Stream records received. */
  records: number;
  /** Expired threads whose items were removed. */
  threads: number;
  itemsRemoved: number;
}

export const handler = atColdStart(() => {
  const tableName = readTableName(process.env);
  const endpoint = readEndpoint(process.env);
  const logger = createLogger(readLogLevel(process.env));
  const client = new DynamoDBClient(endpoint ? { endpoint } : {});

  return async (event: unknown): Promise<CleanerResult> => {
    const records = streamRecords(event);
    const partitions = [
      ...new Set(
        records.filter(isExpiredThreadRemoval).map((record) => record.dynamodb!.Keys!.pk!.S!),
      ),
    ];
    const results = await Promise.allSettled(
      partitions.map((pk) => removeExpiredThreadItems({ client, tableName, pk })),
    );
    const failures = results.filter((result) => result.status === "rejected");
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
    if (failures.length > 0) {
      throw new AggregateError(
        failures.map((failure) => (failure as PromiseRejectedResult).reason),
        `${failures.length} of ${partitions.length} expired threads could not be cleaned; the batch is retried`,
      );
    }
    return { records: records.length, threads: partitions.length, itemsRemoved };
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
    if (isExpiredThreadRemoval(record as StreamRecord) && typeof keys?.pk?.S !== "string") {
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
