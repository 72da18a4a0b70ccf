import type { QueryCommandInput } from "@aws-sdk/lib-dynamodb";
import type { Item, ItemKey, TableClient } from "./client";
import { CHECKPOINT_ITEM_ATTRIBUTES as C, TABLE_KEYS } from "./definition";
import { projection, sortKeyBetween, sortKeyBeginsWith } from "./expressions";
import {
  MAX_CHUNKS,
  NESTED_CHECKPOINT_PREFIX,
  ROOT_CHECKPOINT_PREFIX,
  THREAD_RECORD_SK,
  checkpointItemRange,
  checkpointPrefix,
  chunkSortKey,
} from "./keys";

/**
 * The checkpoint family of items (see definition.ts for the layout and the attribute legend): their shapes,
 * their size budget, chunking, and the requests that read them. Payloads are opaque bytes here; the saver
 * decides what they hold.
 */
export const ITEM_KIND = { checkpoint: "c", writes: "w", chunk: "x" } as const;

/** A serialized payload as stored: serializer type, codec flag (0 raw, 1 brotli) and bytes. */
export interface EncodedPayload {
  t: string;
  z: 0 | 1;
  v: Uint8Array;
}

/** A channel value stored inline in the checkpoint item that introduced its version. */
export interface InlineValue extends EncodedPayload {
  ver: string;
}

/**
 * The writes of one `putWrites` call: a pack of its writes, inline (`v`) or in `n` chunks after its checkpoint
 * (`<checkpoint sk>#x#<q>#<i>`). A call's writes are stored together, so they become visible together.
 */
export interface WriteRecord {
  q: string;
  v?: Uint8Array;
  n?: number;
}

/**
 * A checkpoint: the commit record of one `put`, written after every chunk it refers to. What does not fit
 * inline (checkpoint, metadata, locations or new values) is packed into `sp` chunks (`<sk>#x#<q>#<i>`).
 * Locations are JSON text, or its brotli bytes when that is smaller.
 */
export interface CheckpointItem {
  pk: string;
  sk: string;
  k: typeof ITEM_KIND.checkpoint;
  g: string;
  /** Names the chunks of `sp`; only items with chunks carry it. */
  q?: string;
  p?: string;
  cp?: EncodedPayload;
  md?: EncodedPayload;
  lc?: string | Uint8Array;
  vals: Record<string, InlineValue>;
  sp?: number;
  w?: WriteRecord[];
}

export interface WritesItem {
  pk: string;
  sk: string;
  k: typeof ITEM_KIND.writes;
  g: string;
  ws: WriteRecord[];
}

export interface ChunkItem {
  pk: string;
  sk: string;
  k: typeof ITEM_KIND.chunk;
  g: string;
  d: Uint8Array;
}

export type CheckpointFamilyItem = CheckpointItem | WritesItem | ChunkItem;

/**
 * Most bytes one item may take: DynamoDB's limit is 400 KB (attribute names included); the rest is headroom for
 * the estimate below, which errs on the large side.
 */
export const ITEM_BUDGET_BYTES = 350 * 1024;
/** Bytes per chunk item (its key and attributes fit in the rest of the budget). */
export const CHUNK_BYTES = 320 * 1024;
/** Largest payload one write may store: MAX_CHUNKS chunks. */
export const MAX_CHUNKED_BYTES = MAX_CHUNKS * CHUNK_BYTES;

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

/** Splits `bytes` into the chunk items of write `sequence` of a checkpoint. */
export function chunkItems(
  pk: string,
  checkpointSk: string,
  sequence: string,
  generation: string,
  bytes: Uint8Array,
): ChunkItem[] {
  const items: ChunkItem[] = [];
  for (let offset = 0, index = 0; offset < bytes.byteLength; offset += CHUNK_BYTES, index += 1) {
    items.push({
      pk,
      sk: chunkSortKey(checkpointSk, sequence, index),
      k: ITEM_KIND.chunk,
      g: generation,
      d: bytes.subarray(offset, offset + CHUNK_BYTES),
    });
  }
  return items;
}

/** Keys of the `count` chunks of write `sequence` of a checkpoint. */
export function chunkKeys(
  pk: string,
  checkpointSk: string,
  sequence: string,
  count: number,
): ItemKey[] {
  return Array.from({ length: count }, (_, index) => ({
    [TABLE_KEYS.partitionKey]: pk,
    [TABLE_KEYS.sortKey]: chunkSortKey(checkpointSk, sequence, index),
  }));
}

/** The bytes of `count` chunks, or undefined when one is missing (`chunks` maps sort keys to chunk bytes). */
export function joinChunks(
  checkpointSk: string,
  sequence: string,
  count: number,
  chunks: ReadonlyMap<string, Uint8Array>,
): Uint8Array | undefined {
  const parts: Uint8Array[] = [];
  for (let index = 0; index < count; index += 1) {
    const chunk = chunks.get(chunkSortKey(checkpointSk, sequence, index));
    if (!chunk) return undefined;
    parts.push(chunk);
  }
  return parts.length === 1 ? parts[0]! : new Uint8Array(Buffer.concat(parts));
}

/** What a child checkpoint needs of its parent to refer to the parent's values. */
export const INHERITANCE_ATTRIBUTES = [
  TABLE_KEYS.sortKey,
  C.generation,
  C.sequence,
  C.locations,
  C.values,
  C.spill,
] as const;

/** What a checkpoint's values need of the checkpoint item holding them. */
export const HOLDER_ATTRIBUTES = [
  TABLE_KEYS.sortKey,
  C.generation,
  C.sequence,
  C.values,
  C.spill,
] as const;

// Above every nested checkpoint key (`n#...`: `$` sorts right after `#`), below run records (`r#...`).
const NAMESPACES_END = `${NESTED_CHECKPOINT_PREFIX.slice(0, -1)}$`;
// First page of a latest-checkpoint Query: the thread record, a few writes and the checkpoint.
const LATEST_FIRST_PAGE = 3;
const LATEST_NEXT_PAGES = 50;

/** The requests that read checkpoint-family items; every read is consistent. */
export class CheckpointItems {
  constructor(private readonly table: TableClient) {}

  /**
   * Pages of one namespace's items, newest checkpoint first; for the root namespace the first page starts with
   * the thread record. The caller stops reading once it has the latest checkpoint (usually on the first page).
   */
  async *latestPages(pk: string, namespace: string): AsyncGenerator<Item[]> {
    const range: Omit<QueryCommandInput, "TableName"> =
      namespace === ""
        ? sortKeyBetween(pk, ROOT_CHECKPOINT_PREFIX, THREAD_RECORD_SK)
        : sortKeyBeginsWith(pk, checkpointPrefix(namespace));
    let startKey: Item | undefined;
    let limit = LATEST_FIRST_PAGE;
    do {
      const page = await this.table.query({
        ...range,
        ScanIndexForward: false,
        Limit: limit,
        ExclusiveStartKey: startKey,
      });
      yield page.Items ?? [];
      startKey = page.LastEvaluatedKey;
      limit = LATEST_NEXT_PAGES;
    } while (startKey);
  }

  /** One checkpoint with its writes and chunks (one key range). */
  readCheckpoint(pk: string, checkpointSk: string): Promise<Item[]> {
    const { low, high } = checkpointItemRange(checkpointSk);
    return this.table.queryAll(sortKeyBetween(pk, low, high));
  }

  /**
   * Every item of one namespace, or of every namespace (the thread record included, the thread's run records
   * after them not) when it is undefined.
   */
  readNamespace(pk: string, namespace: string | undefined): Promise<Item[]> {
    return this.table.queryAll(
      namespace === undefined
        ? sortKeyBetween(pk, ROOT_CHECKPOINT_PREFIX, NAMESPACES_END)
        : sortKeyBeginsWith(pk, checkpointPrefix(namespace)),
    );
  }

  /** Some attributes of one checkpoint item. */
  readItem(
    pk: string,
    checkpointSk: string,
    attributes: readonly string[],
  ): Promise<Item | undefined> {
    return this.table.get(
      { [TABLE_KEYS.partitionKey]: pk, [TABLE_KEYS.sortKey]: checkpointSk },
      attributes,
    );
  }

  /** Some attributes of several checkpoint items of one partition (missing ones are left out). */
  readItems(
    pk: string,
    sortKeys: Iterable<string>,
    attributes?: readonly string[],
  ): Promise<Item[]> {
    const keys = [...new Set(sortKeys)].map((sk) => ({
      [TABLE_KEYS.partitionKey]: pk,
      [TABLE_KEYS.sortKey]: sk,
    }));
    return keys.length === 0 ? Promise.resolve([]) : this.table.batchGet(keys, attributes);
  }

  /** Chunk bytes by sort key (missing chunks are left out). */
  async readChunks(keys: ItemKey[]): Promise<Map<string, Uint8Array>> {
    const chunks = new Map<string, Uint8Array>();
    if (keys.length === 0) return chunks;
    const items = await this.table.batchGet(keys, [TABLE_KEYS.sortKey, C.data]);
    for (const item of items)
      chunks.set(String(item[TABLE_KEYS.sortKey]), item[C.data] as Uint8Array);
    return chunks;
  }

  /**
   * The sort keys of every checkpoint, writes and chunk item of a thread, in every namespace and generation (not
   * the thread record, nor the run records and events after the checkpoints): keys only, so pages stay small.
   */
  async readSortKeys(pk: string): Promise<string[]> {
    const range = sortKeyBetween(pk, ROOT_CHECKPOINT_PREFIX, NAMESPACES_END);
    const keysOnly = projection([TABLE_KEYS.sortKey]);
    const items = await this.table.queryAll({
      ...range,
      ProjectionExpression: keysOnly.ProjectionExpression,
      ExpressionAttributeNames: {
        ...range.ExpressionAttributeNames,
        ...keysOnly.ExpressionAttributeNames,
      },
    });
    return items
      .map((item) => String(item[TABLE_KEYS.sortKey]))
      .filter((sk) => sk !== THREAD_RECORD_SK);
  }

  /**
   * Deletes items of one partition by sort key. Like {@link write}, each BatchWriteItem entry lands on its own:
   * callers order what refers to what, one call after the other.
   */
  remove(pk: string, sortKeys: readonly string[]): Promise<void> {
    return this.table.batchWrite(
      sortKeys.map((sk) => ({
        DeleteRequest: { Key: { [TABLE_KEYS.partitionKey]: pk, [TABLE_KEYS.sortKey]: sk } },
      })),
    );
  }

  /** Stores items; each BatchWriteItem entry lands on its own, so callers order what refers to what. */
  write(items: CheckpointFamilyItem[]): Promise<void> {
    return this.table.batchWrite(
      items.map((item) => ({ PutRequest: { Item: item as unknown as Item } })),
    );
  }
}
