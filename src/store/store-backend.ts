import type { Item, SearchItem } from "@langchain/langgraph-checkpoint";
import type { ItemExpiry } from "./item-ttl";
import type { NamespaceCollector, StoreAddress } from "./namespaces";

/**
 * What a store keeps and the five things its storage does. Everything else (validation, filters, paging,
 * ranking, TTL rules, batch order) is shared code above it, so the DynamoDB store and the bounded in-memory
 * store behave alike by construction; each backend only reads and writes its own way.
 */

/** One live item as a backend returns it. */
export interface StoredItem extends StoreAddress {
  readonly namespace: string[];
  /** A fresh object (the caller may change it). */
  readonly value: Record<string, unknown>;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly expiry?: ItemExpiry;
  /** Embedding vectors, when the item was written with any. */
  readonly vectors?: readonly Float32Array[];
}

/** A checked write: a put (the value's JSON, its vectors, its expiry) or a delete. */
export type PreparedWrite =
  | {
      kind: "put";
      namespace: string[];
      key: string;
      json: string;
      /** UTF-8 bytes of `json`. */
      bytes: number;
      vectors: Float32Array[];
      expiry: ItemExpiry | undefined;
    }
  | { kind: "delete"; namespace: string[]; key: string };

/** A read's renewal of an item's expiry: applied only if the item still has the expiry it was read with. */
export interface ExpiryRenewal extends StoreAddress {
  readonly read: ItemExpiry;
  /** The new expiry, epoch seconds. */
  readonly expiresAt: number;
}

/** How much of a range a reader wants, so a backend reads no more than needed. */
export interface RangeHint {
  /** Matching items wanted (offset + limit), or undefined for every item (semantic ranking). */
  wanted: number | undefined;
  /** Whether items are filtered after reading (the backend reads ahead more). */
  filtered: boolean;
  /** Most items the reader will accept before refusing (semantic search); read at most one more. */
  cap: number | undefined;
}

export interface StoreBackend {
  /** Live items at `addresses` (undefined where absent or expired at `nowMs`), in the same order. */
  readItems(
    addresses: readonly StoreAddress[],
    nowMs: number,
  ): Promise<Array<StoredItem | undefined>>;
  /** Live items whose namespace starts with `prefix`, in namespace-then-key order; the reader may stop early. */
  readRange(prefix: readonly string[], nowMs: number, hint: RangeHint): AsyncIterable<StoredItem>;
  /** Offers the namespaces of live items under `collector.range`, in order, skipping what it says. */
  walkNamespaces(collector: NamespaceCollector, nowMs: number): Promise<void>;
  /** Applies puts and deletes of distinct addresses (any order). */
  write(writes: readonly PreparedWrite[], nowMs: number): Promise<void>;
  /** Extends expiries where the items are still as they were read. */
  renew(renewals: readonly ExpiryRenewal[], nowMs: number): Promise<void>;
}

/** LangGraph's `Item` of a stored item. */
export function toLangGraphItem(item: StoredItem): Item {
  return {
    namespace: [...item.namespace],
    key: item.key,
    value: item.value,
    createdAt: new Date(item.createdAt),
    updatedAt: new Date(item.updatedAt),
  };
}

/** LangGraph's `SearchItem`; `score` only for ranked (query) searches. */
export function toLangGraphSearchItem(item: StoredItem, score?: number): SearchItem {
  return score === undefined ? toLangGraphItem(item) : { ...toLangGraphItem(item), score };
}
