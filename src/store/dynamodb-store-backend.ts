import { compareCodePoints } from "../shared/order";
import type { ItemKey } from "../table/client";
import { isExpired } from "../table/expiry";
import {
  parseStoreItemSortKey,
  storeItemSortKey,
  storeNamespacePrefix,
  storeOwnItemsPrefix,
  storePartitionKey,
  storePrefixEnd,
} from "../table/keys";
import type { StoreItemRecord, StoreItems, StoreRangePage } from "../table/store-items";
import { compressJson, decompressJson } from "./json-compression";
import type { NamespaceCollector, StoreAddress } from "./namespaces";
import { packVectors, unpackVectors } from "./semantic-index";
import type {
  ExpiryRenewal,
  PreparedWrite,
  RangeHint,
  StoreBackend,
  StoredItem,
} from "./store-backend";
import { parseStoreValue } from "./value-json";

/**
 * The store on DynamoDB: one partition per tenant (`<tenant>##store`), one item per store item, sort keys in
 * namespace-then-key order. Reads are Queries on that partition by namespace prefix (never Scans), GetItem or
 * BatchGetItem by key; writes are UpdateItem (puts, renewals) and BatchWriteItem (deletes).
 */

/**
 * Query `Limit` of a namespace walk. It starts at WALK_FIRST_PAGE items and adapts: a page that reached several
 * namespaces (small ones) doubles the next, up to WALK_MAX_PAGE, so a walk over small namespaces reads them in a
 * few large pages, as a plain read would; after a page inside one namespace the walk jumps past it with a new
 * Query sized to read about 4 KB (a strongly consistent Query of up to 4 KB costs 1 RCU, whatever it returns),
 * from the item size the pages' consumed capacity shows. So a large namespace costs about one RCU to list.
 */
export const WALK_FIRST_PAGE = 16;
export const WALK_MAX_PAGE = 1000;
const READ_UNIT_BYTES = 4096;
/** Jump page when the item size is not known (DynamoDB did not report capacity). */
const DEFAULT_JUMP_PAGE = 8;
/** First page of a filtered search: the filter's selectivity is unknown, so it reads ahead. */
const FILTERED_FIRST_PAGE = 50;
/** Most writes (UpdateItem) in flight at once: a large batch must not queue behind the HTTP sockets. */
const MAX_CONCURRENT_WRITES = 16;

export class DynamoDBStoreBackend implements StoreBackend {
  private readonly pk: string;

  constructor(
    private readonly items: StoreItems,
    tenantId: string,
    /** Dimensions of the semantic index, when the store has one (vectors are decoded only then). */
    private readonly dims: number | undefined,
  ) {
    this.pk = storePartitionKey(tenantId);
  }

  async readItems(
    addresses: readonly StoreAddress[],
    nowMs: number,
  ): Promise<Array<StoredItem | undefined>> {
    const sortKeys = addresses.map((address) => storeItemSortKey(address.namespace, address.key));
    const distinct = [...new Set(sortKeys)];
    const found =
      distinct.length === 1
        ? [await this.items.get(this.pk, distinct[0]!)]
        : await this.items.getMany(this.pk, distinct);
    const bySortKey = new Map<string, StoreItemRecord>();
    for (const record of found) if (record) bySortKey.set(record.sk, record);
    return sortKeys.map((sk) => {
      const record = bySortKey.get(sk);
      return record && !isExpired(record.ttl, nowMs) ? this.decode(record) : undefined;
    });
  }

  async *readRange(
    prefix: readonly string[],
    nowMs: number,
    hint: RangeHint,
  ): AsyncGenerator<StoredItem> {
    const low = storeNamespacePrefix(prefix);
    const high = storePrefixEnd(low);
    let startKey: ItemKey | undefined;
    let limit: number | undefined;
    let yielded = 0;
    do {
      limit = nextPageLimit(hint, limit, yielded);
      const page = await this.items.range(this.pk, low, high, { limit, startKey, nowMs });
      for (const record of page.items) {
        if (isExpired(record.ttl, nowMs)) continue;
        yielded += 1;
        yield this.decode(record);
      }
      startKey = page.lastKey;
    } while (startKey);
  }

  async walkNamespaces(collector: NamespaceCollector, nowMs: number): Promise<void> {
    const rangePrefix = storeNamespacePrefix(collector.range);
    const high = storePrefixEnd(rangePrefix);
    let low = rangePrefix;
    let startKey: ItemKey | undefined;
    let limit = WALK_FIRST_PAGE;
    // Items below this sort key are skipped: the collector has what their namespaces would give.
    let skipTo: string | undefined;
    for (;;) {
      const page = await this.items.range(this.pk, low, high, {
        limit,
        startKey,
        nowMs,
        keysOnly: true,
      });
      let offers = 0;
      for (const record of page.items) {
        if (skipTo !== undefined && compareCodePoints(record.sk, skipTo) < 0) continue;
        if (isExpired(record.ttl, nowMs)) continue;
        const { namespace } = parseStoreItemSortKey(record.sk);
        const skip = collector.offer(namespace);
        if (skip.kind === "stop") return;
        offers += 1;
        skipTo = storePrefixEnd(
          skip.kind === "subtree"
            ? storeNamespacePrefix(skip.labels)
            : storeOwnItemsPrefix(namespace),
        );
      }
      if (!page.lastKey) return;
      limit = offers > 1 ? Math.min(limit * 2, WALK_MAX_PAGE) : jumpPage(page);
      // Jump past a skipped range with a new Query rather than page through it.
      if (skipTo !== undefined && compareCodePoints(skipTo, String(page.lastKey.sk)) > 0) {
        low = skipTo;
        startKey = undefined;
      } else {
        startKey = page.lastKey;
      }
    }
  }

  async write(writes: readonly PreparedWrite[], nowMs: number): Promise<void> {
    const deletes: string[] = [];
    const puts: Array<() => Promise<void>> = [];
    for (const write of writes) {
      const sk = storeItemSortKey(write.namespace, write.key);
      if (write.kind === "delete") {
        deletes.push(sk);
        continue;
      }
      puts.push(() =>
        this.items.put(this.pk, sk, {
          value: compressJson(write.json, write.bytes),
          nowMs,
          expiry: write.expiry,
          vectors: write.vectors.length > 0 ? packVectors(write.vectors) : undefined,
        }),
      );
    }
    await Promise.all([
      inParallel(puts, MAX_CONCURRENT_WRITES),
      deletes.length > 0 ? this.items.delete(this.pk, deletes) : null,
    ]);
  }

  async renew(renewals: readonly ExpiryRenewal[]): Promise<void> {
    await inParallel(
      renewals.map(
        (renewal) => () =>
          this.items
            .renew(
              this.pk,
              storeItemSortKey(renewal.namespace, renewal.key),
              renewal.read,
              renewal.expiresAt,
            )
            .then(() => undefined),
      ),
      MAX_CONCURRENT_WRITES,
    );
  }

  private decode(record: StoreItemRecord): StoredItem {
    const { namespace, key } = parseStoreItemSortKey(record.sk);
    return {
      namespace,
      key,
      value: parseStoreValue(decompressJson(record.v)),
      createdAt: Number(record.ca),
      updatedAt: Number(record.ua),
      ...(record.ttl !== undefined && record.tm !== undefined
        ? { expiry: { expiresAt: Number(record.ttl), ttlMinutes: Number(record.tm) } }
        : {}),
      ...(record.e && this.dims ? { vectors: unpackVectors(record.e, this.dims) } : {}),
    };
  }
}

/** Items per jump: about one read unit's worth, judging by the last page's capacity per item. */
function jumpPage(page: StoreRangePage): number {
  if (page.capacityUnits === undefined || page.items.length === 0) return DEFAULT_JUMP_PAGE;
  const itemBytes = (page.capacityUnits * READ_UNIT_BYTES) / page.items.length;
  return Math.max(1, Math.min(DEFAULT_JUMP_PAGE, Math.floor(READ_UNIT_BYTES / itemBytes)));
}

/**
 * Query `Limit` of the next page of a search: no more than the reader can use. A page limit counts items read,
 * matching or not, so a filtered search reads ahead and every further page doubles (DynamoDB still stops a page
 * at 1 MB). A semantic search reads at most one item past its cap, enough to know it is over.
 */
function nextPageLimit(
  hint: RangeHint,
  previous: number | undefined,
  yielded: number,
): number | undefined {
  if (hint.cap !== undefined) return Math.max(1, hint.cap + 1 - yielded);
  if (hint.wanted === undefined) return undefined;
  if (previous === undefined) {
    return hint.filtered ? Math.max(FILTERED_FIRST_PAGE, hint.wanted * 2) : hint.wanted;
  }
  return previous * 2;
}

/** Runs the tasks with at most `width` in flight; rejects with the first failure (after the others settle). */
async function inParallel(tasks: ReadonlyArray<() => Promise<void>>, width: number): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(width, tasks.length) }, async () => {
    while (next < tasks.length) {
      const task = tasks[next]!;
      next += 1;
      await task();
    }
  });
  const outcomes = await Promise.allSettled(lanes);
  const failure = outcomes.find((outcome) => outcome.status === "rejected");
  if (failure) throw (failure as PromiseRejectedResult).reason;
}
