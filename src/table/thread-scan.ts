import {
  INBOX_STATUSES,
  type ScanThreadsInput,
  type ThreadRecord,
  type ThreadScan,
} from "../shared/threads";
import type { Item, TableClient } from "./client";
import {
  TABLE_KEYS,
  THREAD_ATTRIBUTES as A,
  THREADS_BY_STATUS_INDEX,
  THREADS_BY_TENANT_INDEX,
  THREADS_UNSETTLED_INDEX,
  UNSETTLED_SHARDS,
} from "./definition";
import { isExpired } from "./expiry";
import { indexPartition } from "./expressions";
import {
  parseAnyThreadPartitionKey,
  parseThreadPartitionKey,
  threadPartitionKey,
  unsettledPartition,
} from "./keys";
import { recordKey, tenantStatus, toRecord } from "./thread-record-model";

/** Reading a tenant's threads through the table's thread indexes, for ThreadRecords. */

// Records per page of a thread scan: the first page small (one page of search results), then BatchGet's most.
const SCAN_FIRST_PAGE = 25;
const SCAN_PAGE = 100;

/** A tenant's thread ids, newest thread first (from the keys-only index; expired ones read as absent later). */
export async function* tenantThreadIds(
  table: TableClient,
  tenantId: string,
): AsyncGenerator<string> {
  for await (const page of table.queryPages({
    IndexName: THREADS_BY_TENANT_INDEX.name,
    ...indexPartition(THREADS_BY_TENANT_INDEX.partitionKey, tenantId),
    ScanIndexForward: false,
  })) {
    for (const item of page) {
      const threadId = parseThreadPartitionKey(tenantId, String(item[TABLE_KEYS.partitionKey]));
      if (threadId !== undefined) yield threadId;
    }
  }
}

/**
 * Every thread with a run on it, of every tenant (the threads-unsettled index, shard by shard): what the recovery
 * sweep looks at. Keys only; each thread's record is read by whoever recovers it.
 */
export async function* unsettledThreads(
  table: TableClient,
): AsyncGenerator<{ tenantId: string; threadId: string }> {
  for (let shard = 0; shard < UNSETTLED_SHARDS; shard++) {
    for await (const page of table.queryPages({
      IndexName: THREADS_UNSETTLED_INDEX.name,
      ...indexPartition(THREADS_UNSETTLED_INDEX.partitionKey, unsettledPartition(shard)),
    })) {
      for (const item of page) {
        const thread = parseAnyThreadPartitionKey(String(item[TABLE_KEYS.partitionKey]));
        if (thread) yield thread;
      }
    }
  }
}

/**
 * The inbox statuses are served by the sparse status index (records included). Other searches walk the
 * keys-only tenant index, newest thread first, and read the records by key, consistently.
 */
export function scanThreadRecords(
  table: TableClient,
  input: ScanThreadsInput,
  now: () => number,
): ThreadScan {
  if (input.ids) return { orderedBy: undefined, records: scanIds(table, input, now) };
  const inbox = input.status !== undefined && INBOX_STATUSES.includes(input.status);
  return {
    orderedBy: inbox ? "updated_at" : "created_at",
    records: scanIndex(table, input, inbox, now),
  };
}

/** Pages of an index: an inbox status's own (records projected), else the tenant's (keys, then records). */
async function* scanIndex(
  table: TableClient,
  input: ScanThreadsInput,
  inbox: boolean,
  now: () => number,
): AsyncIterable<ThreadRecord> {
  const { status } = input;
  const index = inbox ? THREADS_BY_STATUS_INDEX : THREADS_BY_TENANT_INDEX;
  const partition = inbox ? tenantStatus(input.tenantId, status!) : input.tenantId;
  let startKey: Item | undefined;
  let pageSize = SCAN_FIRST_PAGE;
  do {
    const page = await table.query({
      IndexName: index.name,
      ...indexPartition(index.partitionKey, partition),
      ScanIndexForward: input.order === "asc",
      // Small first: most searches want one page of results; later pages are read larger.
      Limit: pageSize,
      ExclusiveStartKey: startKey,
    });
    pageSize = SCAN_PAGE;
    const items = inbox ? (page.Items ?? []) : await readRecords(table, page.Items ?? []);
    const nowMs = now();
    for (const item of items) {
      // TTL deletion lags: an expired record is no thread.
      if (isExpired(item[A.ttl], nowMs)) continue;
      const record = toRecord(item);
      if (status === undefined || record.status === status) yield record;
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
}

async function* scanIds(
  table: TableClient,
  input: ScanThreadsInput,
  now: () => number,
): AsyncIterable<ThreadRecord> {
  const ids = [...new Set(input.ids)];
  for (let start = 0; start < ids.length; start += SCAN_PAGE) {
    const keys = ids
      .slice(start, start + SCAN_PAGE)
      .map((threadId) => recordKey(threadPartitionKey(input.tenantId, threadId)));
    const nowMs = now();
    for (const item of await readRecords(table, keys)) {
      if (isExpired(item[A.ttl], nowMs)) continue;
      const record = toRecord(item);
      if (input.status === undefined || record.status === input.status) yield record;
    }
  }
}

/** The records behind keys-only index entries, in the entries' order. */
async function readRecords(table: TableClient, keys: Item[]): Promise<Item[]> {
  if (keys.length === 0) return [];
  const records = await table.batchGet(
    keys.map((key) => ({
      [TABLE_KEYS.partitionKey]: String(key[TABLE_KEYS.partitionKey]),
      [TABLE_KEYS.sortKey]: String(key[TABLE_KEYS.sortKey]),
    })),
  );
  const byPk = new Map(records.map((record) => [String(record[TABLE_KEYS.partitionKey]), record]));
  return keys.flatMap((key): Item[] => {
    const record = byPk.get(String(key[TABLE_KEYS.partitionKey]));
    return record ? [record] : [];
  });
}
