import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { QueryCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { THREAD_RECORD_SK } from "./keys";
import { removePartition, toDocumentClient } from "./partition";
import { withThrottlingRetry } from "./retry";
import { THREAD_ATTRIBUTES } from "./thread-record";

/**
 * Removes what an expired or deleted thread left behind. DynamoDB TTL deletes only the thread record (the one
 * item with a `ttl`); the table stream then calls this for its partition, as it does after a deletion.
 *
 * The thread may have started a new life meanwhile (a new record, a new generation), so before each page of
 * deletions the record is read again: items of a live generation are kept, and the record itself is never
 * deleted here. Only `Query` (base table) and `BatchWriteItem` deletes are sent.
 */
export async function removeExpiredThreadItems(input: {
  client: DynamoDBClient | DynamoDBDocumentClient;
  tableName: string;
  pk: string;
  now?: number;
}): Promise<number> {
  const client = toDocumentClient(input.client);
  const nowSeconds = () => Math.floor((input.now ?? Date.now()) / 1000);
  return removePartition(client, input.tableName, input.pk, async (page) => {
    const liveGeneration = await readLiveGeneration(
      client,
      input.tableName,
      input.pk,
      nowSeconds(),
    );
    return page.filter(
      (item) =>
        item.sk !== THREAD_RECORD_SK && (liveGeneration === undefined || item.g !== liveGeneration),
    );
  });
}

async function readLiveGeneration(
  client: DynamoDBDocumentClient,
  tableName: string,
  pk: string,
  nowSeconds: number,
): Promise<string | undefined> {
  // A Query for the one key, not a GetItem: the cleaner's role is granted Query and BatchWriteItem only.
  const { Items } = await withThrottlingRetry(() =>
    client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: "pk = :pk AND sk = :record",
        ExpressionAttributeValues: { ":pk": pk, ":record": THREAD_RECORD_SK },
        ConsistentRead: true,
      }),
    ),
  );
  const record = Items?.[0];
  if (!record || !(Number(record[THREAD_ATTRIBUTES.ttl]) > nowSeconds)) return undefined;
  return String(record[THREAD_ATTRIBUTES.generation]);
}

/**
 * True for a stream record of a thread record's removal: by DynamoDB TTL (an expiry) or by a deletion. The
 * cleaner acts on both: after a deletion it removes items a concurrent writer may still have stored under the
 * deleted generation; a thread that lives again keeps its live generation (see removeExpiredThreadItems).
 */
export function isThreadRecordRemoval(record: {
  eventName?: string;
  dynamodb?: { Keys?: Record<string, { S?: string }> };
}): boolean {
  return record.eventName === "REMOVE" && record.dynamodb?.Keys?.sk?.S === THREAD_RECORD_SK;
}
