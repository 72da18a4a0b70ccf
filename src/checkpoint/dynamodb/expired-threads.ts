import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { THREAD_RECORD_SK } from "./keys";
import { removePartition, toDocumentClient } from "./partition";
import { THREAD_ATTRIBUTES } from "./thread-record";

/**
 * Removes what an expired thread left behind. DynamoDB TTL deletes only the thread record (the one item with a
 * `ttl`); the table stream then calls this for its partition. Items of other generations go: all of them when
 * no live record remains, the old generation's when the thread was started again since.
 */
export async function removeExpiredThreadItems(input: {
  client: DynamoDBClient | DynamoDBDocumentClient;
  tableName: string;
  pk: string;
  now?: number;
}): Promise<number> {
  const client = toDocumentClient(input.client);
  const nowSeconds = Math.floor((input.now ?? Date.now()) / 1000);
  let liveGeneration: string | undefined;
  const projection = {
    expression: "pk, sk, g, #ttl, #gen",
    names: { "#ttl": THREAD_ATTRIBUTES.ttl, "#gen": THREAD_ATTRIBUTES.generation },
  };
  // First pass finds the record (it sorts among the items, so read all keys before deciding).
  await removePartition(
    client,
    input.tableName,
    input.pk,
    (item) => {
      if (item.sk === THREAD_RECORD_SK && Number(item[THREAD_ATTRIBUTES.ttl]) > nowSeconds) {
        liveGeneration = String(item[THREAD_ATTRIBUTES.generation]);
      }
      return false;
    },
    projection,
  );
  return removePartition(
    client,
    input.tableName,
    input.pk,
    (item) =>
      liveGeneration === undefined
        ? true
        : item.sk !== THREAD_RECORD_SK && item.g !== liveGeneration,
    projection,
  );
}

/** True for a stream record of DynamoDB TTL removing a thread record (the only records the cleaner acts on). */
export function isExpiredThreadRemoval(record: {
  eventName?: string;
  userIdentity?: { type?: string; principalId?: string };
  dynamodb?: { Keys?: Record<string, { S?: string }> };
}): boolean {
  return (
    record.eventName === "REMOVE" &&
    record.userIdentity?.type === "Service" &&
    record.userIdentity.principalId === "dynamodb.amazonaws.com" &&
    record.dynamodb?.Keys?.sk?.S === THREAD_RECORD_SK
  );
}
