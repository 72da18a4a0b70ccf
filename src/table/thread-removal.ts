import { batchWrite, queryPage, queryPages, type Item, type TableConnection } from "./client";
import { CHECKPOINT_ITEM_ATTRIBUTES, TABLE_KEYS, THREAD_ATTRIBUTES } from "./definition";
import { isExpired } from "./expiry";
import { projection, singleItem, wholePartition } from "./expressions";
import { THREAD_RECORD_SK } from "./keys";

/**
 * Removes what a removed thread left behind: every item of its partition except the thread record and the items
 * of a live generation. Used by a deletion (after its record is gone) and by the cleaner (after DynamoDB TTL or
 * a deletion removed a record). The thread may have started a new life meanwhile (a new record, a new
 * generation), so the record is read again before each page of deletions: its items are kept, and the record
 * itself is never deleted here. Sends only `Query` and `BatchWriteItem` (all the cleaner's role may do).
 */
export async function removeThreadLeftovers(
  table: TableConnection,
  pk: string,
  now: () => number = Date.now,
): Promise<number> {
  let removed = 0;
  const keysOnly = projection([
    TABLE_KEYS.partitionKey,
    TABLE_KEYS.sortKey,
    CHECKPOINT_ITEM_ATTRIBUTES.generation,
  ]);
  const partition = wholePartition(pk);
  for await (const page of queryPages(table, {
    ...partition,
    ProjectionExpression: keysOnly.ProjectionExpression,
    ExpressionAttributeNames: {
      ...partition.ExpressionAttributeNames,
      ...keysOnly.ExpressionAttributeNames,
    },
  })) {
    const liveGeneration = await readLiveGeneration(table, pk, now());
    const doomed = page.filter(
      (item: Item) =>
        item[TABLE_KEYS.sortKey] !== THREAD_RECORD_SK &&
        (liveGeneration === undefined ||
          item[CHECKPOINT_ITEM_ATTRIBUTES.generation] !== liveGeneration),
    );
    await batchWrite(
      table,
      doomed.map((item) => ({
        DeleteRequest: {
          Key: {
            [TABLE_KEYS.partitionKey]: pk,
            [TABLE_KEYS.sortKey]: String(item[TABLE_KEYS.sortKey]),
          },
        },
      })),
    );
    removed += doomed.length;
  }
  return removed;
}

async function readLiveGeneration(
  table: TableConnection,
  pk: string,
  nowMs: number,
): Promise<string | undefined> {
  // A Query for the one key, not a GetItem: the cleaner's role is granted Query and BatchWriteItem only.
  const { Items } = await queryPage(table, { ...singleItem(pk, THREAD_RECORD_SK) });
  const record = Items?.[0];
  if (!record || isExpired(Number(record[THREAD_ATTRIBUTES.ttl]), nowMs)) return undefined;
  return String(record[THREAD_ATTRIBUTES.generation]);
}

/** A DynamoDB stream record as the cleaner receives it (keys-only view). */
export interface ThreadStreamRecord {
  eventName?: string;
  dynamodb?: { Keys?: Record<string, { S?: string }>; SequenceNumber?: string };
}

/**
 * True for a stream record of a thread record's removal: by DynamoDB TTL (an expiry) or by a deletion. The
 * cleaner acts on both: after a deletion it removes items a concurrent writer may still have stored under the
 * deleted generation; a thread that lives again keeps its live generation (see removeThreadLeftovers).
 */
export function isThreadRecordRemoval(record: ThreadStreamRecord): boolean {
  return (
    record.eventName === "REMOVE" &&
    record.dynamodb?.Keys?.[TABLE_KEYS.sortKey]?.S === THREAD_RECORD_SK
  );
}
