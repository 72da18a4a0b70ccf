import type { EncodedValue } from "./codec";

/**
 * Shapes of the items the saver stores (attribute names are short: DynamoDB bills them as item bytes).
 * Every checkpoint, write and chunk item carries its thread's generation `g` (see thread-record.ts).
 */
export const ITEM_KIND = { checkpoint: "c", writes: "w", chunk: "x" } as const;

/** A channel value stored inline: its channel version, serializer type, codec flag and bytes. */
export interface InlineValue extends EncodedValue {
  ver: string;
}

/** A channel value split into `n` chunk items after its owner item (too large to live inline). */
export interface ChunkedValue {
  ver: string;
  t: string;
  z: 0 | 1;
  n: number;
}

export interface CheckpointItem {
  pk: string;
  sk: string;
  k: typeof ITEM_KIND.checkpoint;
  g: string;
  /** The checkpoint without channel values. */
  cp: EncodedValue;
  md: EncodedValue;
  /** Parent checkpoint id. */
  p?: string;
  /** Channel -> id of the ancestor checkpoint whose item holds the value of its version (own values: vals/big). */
  loc: Record<string, string>;
  /** Values new in this checkpoint (its `newVersions`), small enough to live in this item. */
  vals: Record<string, InlineValue>;
  /** Values new in this checkpoint stored as chunk items (`<sk>#x#<channel>#<n>`). */
  big: Record<string, ChunkedValue>;
  /** Pending writes of this checkpoint that were committed together with it (group commit). */
  w?: StoredWrite[];
}

/**
 * One pending write: task id, task path, the call's sequence (orders retries), channel, index, and the value
 * inline or as `n` chunk items after the item that holds the write.
 */
export interface StoredWrite {
  k: string;
  p: string;
  q: string;
  c: string;
  i: number;
  t: string;
  z: 0 | 1;
  v?: Uint8Array;
  n?: number;
}

export interface WritesItem {
  pk: string;
  sk: string;
  k: typeof ITEM_KIND.writes;
  g: string;
  ws: StoredWrite[];
}

export interface ChunkItem {
  pk: string;
  sk: string;
  k: typeof ITEM_KIND.chunk;
  g: string;
  d: Uint8Array;
}

export type StoredItem = CheckpointItem | WritesItem | ChunkItem;

/**
 * Most bytes one item may take: DynamoDB's limit is 400 KB (attribute names included); the rest is headroom for
 * the estimate below, which errs on the large side.
 */
export const ITEM_BUDGET_BYTES = 350 * 1024;

/** An upper estimate of an item's size by DynamoDB's rules (names and values; nested maps and lists). */
export function estimateItemBytes(value: unknown): number {
  if (value instanceof Uint8Array) return value.byteLength;
  if (typeof value === "string") return Buffer.byteLength(value);
  if (typeof value === "number") return 21;
  if (typeof value === "boolean" || value === null || value === undefined) return 1;
  if (Array.isArray(value))
    return 3 + value.reduce((sum: number, element) => sum + 1 + estimateItemBytes(element), 0);
  if (typeof value === "object") {
    let sum = 3;
    for (const [name, element] of Object.entries(value as Record<string, unknown>)) {
      sum += 1 + Buffer.byteLength(name) + estimateItemBytes(element);
    }
    return sum;
  }
  return 0;
}
