import {
  ITEM_BUDGET_BYTES,
  ITEM_KIND,
  MAX_CHUNKED_BYTES,
  chunkItems,
  estimateItemBytes,
  type CheckpointItem,
  type ChunkItem,
  type EncodedPayload,
  type InlineValue,
  type WriteRecord,
  type WritesItem,
} from "../../table/checkpoint-items";
import { MAX_SEQUENCE_LENGTH, writesSortKey } from "../../table/keys";
import { CheckpointTooLargeError } from "../../shared/errors";
import { decodeBytes, encodeValue, type Compression } from "./codec";
import { decodePack, encodePack } from "./pack";

/**
 * What the items of one write are: pure functions from serialized data to items, so every size rule is in one
 * place and testable without DynamoDB. Every item stays under ITEM_BUDGET_BYTES; whatever does not fit inline
 * goes into a pack stored in chunk items, which are written before the item that refers to them.
 */

/** A value larger than this (encoded) is never inline: it goes to the pack. */
export const MAX_INLINE_VALUE_BYTES = 64 * 1024;
/** Inline values of one checkpoint item together (its holders are read whole when a child needs one value). */
export const MAX_INLINE_VALUES_BYTES = 256 * 1024;
/** A putWrites call whose pack is larger than this is stored in chunks. */
export const MAX_INLINE_RECORD_BYTES = 256 * 1024;

/** Marks, in a checkpoint's locations, the channels whose value the checkpoint holds itself. */
const OWN = "";
/** What naming a pack adds to an item (`q` with the longest sequence, `sp`): kept free from the start. */
const PACK_REFERENCE_BYTES = 1 + 1 + MAX_SEQUENCE_LENGTH + 1 + 2 + 21;
/** What a checkpoint item may fill before it names a pack. */
const CHECKPOINT_BUDGET_BYTES = ITEM_BUDGET_BYTES - PACK_REFERENCE_BYTES;

export interface NewValue {
  channel: string;
  version: string;
  payload: EncodedPayload;
}

export interface CheckpointPlanInput {
  pk: string;
  sk: string;
  checkpointId: string;
  generation: string;
  /** Unique id of this write: names its chunks. */
  sequence: string;
  parentId?: string;
  checkpoint: EncodedPayload;
  metadata: EncodedPayload;
  /** Unchanged channels: the id of the ancestor checkpoint holding each value. */
  inherited: Record<string, string>;
  /** Values this checkpoint holds: its new versions, and small unchanged values copied from ancestors. */
  values: NewValue[];
  /** Pending writes already stored inside this checkpoint's item, when the put rewrites it. */
  carriedWrites: WriteRecord[];
  compression: Compression;
}

export interface CheckpointPlan {
  item: CheckpointItem;
  /** Written (and stored) before the item. */
  chunks: ChunkItem[];
  /** Where every channel's value lives: this checkpoint's id for its own. */
  locations: Record<string, string>;
}

/** One part of a checkpoint that did not fit inline: `cp`, `md`, `lc`, or `v:<channel>` with its version. */
export type SpilledPart = [name: string, type: string, codec: 0 | 1, version?: string];

export function planCheckpoint(input: CheckpointPlanInput): CheckpointPlan {
  const locations: Record<string, string> = { ...input.inherited };
  for (const value of input.values) locations[value.channel] = input.checkpointId;
  const item: CheckpointItem = {
    pk: input.pk,
    sk: input.sk,
    k: ITEM_KIND.checkpoint,
    g: input.generation,
    vals: {},
  };
  if (input.parentId !== undefined) item.p = input.parentId;
  if (input.carriedWrites.length > 0) item.w = [...input.carriedWrites];
  let size = estimateItemBytes(item);
  const spilled: SpilledPart[] = [];
  const spilledBytes: Uint8Array[] = [];
  const spill = (part: SpilledPart, payload: EncodedPayload) => {
    spilled.push(part);
    spilledBytes.push(payload.v);
  };

  // The body, metadata and locations are read with every checkpoint: inline whenever they fit.
  for (const [name, payload] of [
    ["cp", input.checkpoint],
    ["md", input.metadata],
  ] as const) {
    const bytes = 1 + name.length + estimateItemBytes(payload);
    if (size + bytes <= CHECKPOINT_BUDGET_BYTES) {
      item[name] = payload;
      size += bytes;
    } else {
      spill([name, payload.t, payload.z], payload);
    }
  }
  // Locations list inherited channels by holder, and own values that did not fit inline (own inline values
  // are the keys of `vals`). Room is kept for the longest they can be: every own value spilled.
  const ownChannels = input.values.map((value) => value.channel);
  const longest = encodeLocations(input.inherited, ownChannels, input.compression);
  const reserved = longest === undefined ? 0 : 3 + estimateItemBytes(longest);

  // Small values first: as many channels as possible stay inline.
  let inlineValueBytes = 0;
  const spilledOwn: string[] = [];
  const bySize = [...input.values].sort((a, b) => a.payload.v.byteLength - b.payload.v.byteLength);
  for (const value of bySize) {
    const inline: InlineValue = { ...value.payload, ver: value.version };
    const bytes = 1 + Buffer.byteLength(value.channel) + estimateItemBytes(inline);
    if (
      value.payload.v.byteLength <= MAX_INLINE_VALUE_BYTES &&
      inlineValueBytes + bytes <= MAX_INLINE_VALUES_BYTES &&
      size + bytes + reserved <= CHECKPOINT_BUDGET_BYTES
    ) {
      item.vals[value.channel] = inline;
      inlineValueBytes += bytes;
      size += bytes;
    } else {
      spilledOwn.push(value.channel);
      spill([`v:${value.channel}`, value.payload.t, value.payload.z, value.version], value.payload);
    }
  }

  const stored = encodeLocations(input.inherited, spilledOwn, input.compression);
  if (stored !== undefined) {
    const bytes = 3 + estimateItemBytes(stored);
    if (size + bytes <= CHECKPOINT_BUDGET_BYTES) {
      item.lc = stored;
    } else {
      const payload = locationsPayload(stored);
      spill(["lc", payload.t, payload.z], payload);
    }
  }

  let chunks: ChunkItem[] = [];
  if (spilled.length > 0) {
    const pack = encodePack(spilled, spilledBytes);
    if (pack.byteLength > MAX_CHUNKED_BYTES) {
      throw new CheckpointTooLargeError(MAX_CHUNKED_BYTES, pack.byteLength);
    }
    chunks = chunkItems(input.pk, input.sk, input.sequence, input.generation, pack);
    item.q = input.sequence;
    item.sp = chunks.length;
  }
  return { item, chunks, locations };
}

/**
 * Locations as stored: holder id -> channels (holders are few, channels many), own values that went to the pack
 * under "" (own inline values are the keys of `vals`). JSON text, or its brotli bytes when smaller; undefined
 * when there is nothing to say.
 */
function encodeLocations(
  inherited: Record<string, string>,
  spilledOwn: string[],
  compression: Compression,
): string | Uint8Array | undefined {
  const byHolder: Record<string, string[]> = {};
  for (const [channel, holder] of Object.entries(inherited))
    (byHolder[holder] ??= []).push(channel);
  if (spilledOwn.length > 0) byHolder[OWN] = spilledOwn;
  if (Object.keys(byHolder).length === 0) return undefined;
  const text = JSON.stringify(byHolder);
  const encoded = encodeValue("json", new TextEncoder().encode(text), compression);
  return encoded.z === 1 ? encoded.v : text;
}

/** Stored locations as a payload (the form a pack holds them in). */
function locationsPayload(stored: string | Uint8Array): EncodedPayload {
  return typeof stored === "string"
    ? { t: "json", z: 0, v: new TextEncoder().encode(stored) }
    : { t: "json", z: 1, v: stored };
}

/**
 * Where every channel's value lives (channel -> holder id), from a checkpoint's stored locations (inline, from
 * its pack, or absent when empty) and the channels of its own inline values.
 */
export function decodeLocations(
  stored: string | Uint8Array | EncodedPayload | undefined,
  checkpointId: string,
  inlineChannels: Iterable<string>,
): Record<string, string> {
  const locations: Record<string, string> = {};
  for (const channel of inlineChannels) locations[channel] = checkpointId;
  if (stored === undefined) return locations;
  const text =
    typeof stored === "string"
      ? stored
      : new TextDecoder().decode(
          decodeBytes(stored instanceof Uint8Array ? { z: 1, v: stored } : stored),
        );
  const byHolder = JSON.parse(text) as Record<string, string[]>;
  for (const [holder, channels] of Object.entries(byHolder)) {
    for (const channel of channels) locations[channel] = holder === OWN ? checkpointId : holder;
  }
  return locations;
}

/** The parts of a checkpoint's pack by name (`cp`, `md`, `lc`, `v:<channel>`), with the values' versions. */
export function decodePackParts(
  bytes: Uint8Array,
): Map<string, { payload: EncodedPayload; version?: string }> {
  const { header, payloads } = decodePack<SpilledPart[]>(bytes);
  const parts = new Map<string, { payload: EncodedPayload; version?: string }>();
  header.forEach(([name, type, codec, version], index) => {
    // JSON writes an absent version as null.
    parts.set(name, {
      payload: { t: type, z: codec, v: payloads[index]! },
      version: version ?? undefined,
    });
  });
  return parts;
}

/** One pending write of a putWrites call, serialized: `index` is LangGraph's write index. */
export interface PendingWritePayload {
  channel: string;
  index: number;
  payload: EncodedPayload;
}

/**
 * The header of a putWrites call's pack: task id, task path and one entry per write, `[channel, index]` for the
 * usual uncompressed JSON, `[channel, index, type, codec]` otherwise (every item repeats it: bytes count).
 */
export type WritesPackHeader = [
  taskId: string,
  taskPath: string,
  writes: Array<[channel: string, index: number] | [string, number, string, 0 | 1]>,
];

/** The writes of a putWrites call's pack, in call order. */
export function decodeWritesPack(bytes: Uint8Array): {
  taskId: string;
  taskPath: string;
  writes: PendingWritePayload[];
} {
  const { header, payloads } = decodePack<WritesPackHeader>(bytes);
  const [taskId, taskPath, entries] = header;
  return {
    taskId,
    taskPath,
    writes: entries.map(([channel, index, type, codec], position) => ({
      channel,
      index,
      payload: { t: type ?? "json", z: codec ?? 0, v: payloads[position]! },
    })),
  };
}

export interface WriteRecordPlanInput {
  pk: string;
  checkpointSk: string;
  generation: string;
  sequence: string;
  taskId: string;
  taskPath: string;
  writes: PendingWritePayload[];
}

/** A putWrites call as one record (its pack inline, or in chunks written before the record). */
export function planWriteRecord(input: WriteRecordPlanInput): {
  record: WriteRecord;
  chunks: ChunkItem[];
} {
  const header: WritesPackHeader = [
    input.taskId,
    input.taskPath,
    input.writes.map(({ channel, index, payload }) =>
      payload.t === "json" && payload.z === 0
        ? [channel, index]
        : [channel, index, payload.t, payload.z],
    ),
  ];
  const pack = encodePack(
    header,
    input.writes.map((write) => write.payload.v),
  );
  if (pack.byteLength <= MAX_INLINE_RECORD_BYTES) {
    return { record: { q: input.sequence, v: pack }, chunks: [] };
  }
  if (pack.byteLength > MAX_CHUNKED_BYTES) {
    throw new CheckpointTooLargeError(MAX_CHUNKED_BYTES, pack.byteLength, "pending writes");
  }
  const chunks = chunkItems(input.pk, input.checkpointSk, input.sequence, input.generation, pack);
  return { record: { q: input.sequence, n: chunks.length }, chunks };
}

/** A record waiting for the next batch: a checkpoint item, or a putWrites call for a checkpoint. */
export type CommitRecord =
  | { kind: "checkpoint"; item: CheckpointItem }
  | { kind: "writes"; pk: string; checkpointSk: string; generation: string; record: WriteRecord };

/**
 * Plans one batch: putWrites calls whose checkpoint is committed in the same batch travel inside the checkpoint
 * item when they fit, the others share writes items per checkpoint. A call is never split across items, so its
 * writes become visible together; no item grows past ITEM_BUDGET_BYTES.
 */
export function planCommitBatch(records: CommitRecord[]): Array<CheckpointItem | WritesItem> {
  const sizes = new Map<object, number>();
  const sizeOf = (item: object) => sizes.get(item) ?? estimateItemBytes(item);
  const checkpoints = new Map<string, CheckpointItem>();
  for (const record of records) {
    if (record.kind === "checkpoint")
      checkpoints.set(itemKey(record.item.pk, record.item.sk), record.item);
  }
  const items: Array<CheckpointItem | WritesItem> = [...checkpoints.values()];
  const writesItems = new Map<string, WritesItem>();
  for (const record of records) {
    if (record.kind !== "writes") continue;
    // As estimateItemBytes counts: a list element is its bytes plus one; a new `w` list adds its name and 3.
    const element = 1 + estimateItemBytes(record.record);
    const key = itemKey(record.pk, record.checkpointSk);
    const checkpoint = checkpoints.get(key);
    const added = element + (checkpoint?.w ? 0 : 1 + "w".length + 3);
    if (
      checkpoint &&
      checkpoint.g === record.generation &&
      sizeOf(checkpoint) + added <= ITEM_BUDGET_BYTES
    ) {
      sizes.set(checkpoint, sizeOf(checkpoint) + added);
      (checkpoint.w ??= []).push(record.record);
      continue;
    }
    const existing = writesItems.get(key);
    if (
      existing &&
      existing.g === record.generation &&
      sizeOf(existing) + element <= ITEM_BUDGET_BYTES
    ) {
      sizes.set(existing, sizeOf(existing) + element);
      existing.ws.push(record.record);
      continue;
    }
    const item: WritesItem = {
      pk: record.pk,
      sk: writesSortKey(record.checkpointSk, record.record.q),
      k: ITEM_KIND.writes,
      g: record.generation,
      ws: [record.record],
    };
    writesItems.set(key, item);
    items.push(item);
  }
  return items;
}

function itemKey(pk: string, sk: string): string {
  return `${pk}\u0000${sk}`;
}
