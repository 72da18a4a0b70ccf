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
import { writesSortKey } from "../../table/keys";
import { CheckpointTooLargeError } from "../../shared/errors";
import { encodeValue, type Compression } from "./codec";
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
    q: input.sequence,
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
  const body: Array<["cp" | "md" | "lc", EncodedPayload]> = [
    ["cp", input.checkpoint],
    ["md", input.metadata],
    ["lc", encodeLocations(locations, input.checkpointId, input.compression)],
  ];
  for (const [name, payload] of body) {
    const bytes = 1 + name.length + estimateItemBytes(payload);
    if (size + bytes <= ITEM_BUDGET_BYTES) {
      item[name] = payload;
      size += bytes;
    } else {
      spill([name, payload.t, payload.z], payload);
    }
  }

  // Small values first: as many channels as possible stay inline.
  let inlineValueBytes = 0;
  const bySize = [...input.values].sort((a, b) => a.payload.v.byteLength - b.payload.v.byteLength);
  for (const value of bySize) {
    const inline: InlineValue = { ...value.payload, ver: value.version };
    const bytes = 1 + Buffer.byteLength(value.channel) + estimateItemBytes(inline);
    if (
      value.payload.v.byteLength <= MAX_INLINE_VALUE_BYTES &&
      inlineValueBytes + bytes <= MAX_INLINE_VALUES_BYTES &&
      size + bytes <= ITEM_BUDGET_BYTES
    ) {
      item.vals[value.channel] = inline;
      inlineValueBytes += bytes;
      size += bytes;
    } else {
      spill([`v:${value.channel}`, value.payload.t, value.payload.z, value.version], value.payload);
    }
  }

  let chunks: ChunkItem[] = [];
  if (spilled.length > 0) {
    const pack = encodePack(spilled, spilledBytes);
    if (pack.byteLength > MAX_CHUNKED_BYTES) {
      throw new CheckpointTooLargeError(MAX_CHUNKED_BYTES, pack.byteLength);
    }
    chunks = chunkItems(input.pk, input.sk, input.sequence, input.generation, pack);
    item.sp = chunks.length;
  }
  return { item, chunks, locations };
}

/**
 * Locations as stored: holder id -> channels (holders are few, channels many), this checkpoint's own channels
 * under "". Serialized as JSON and compressed like any payload.
 */
function encodeLocations(
  locations: Record<string, string>,
  checkpointId: string,
  compression: Compression,
): EncodedPayload {
  const byHolder: Record<string, string[]> = {};
  for (const [channel, holder] of Object.entries(locations)) {
    (byHolder[holder === checkpointId ? OWN : holder] ??= []).push(channel);
  }
  return encodeValue("json", new TextEncoder().encode(JSON.stringify(byHolder)), compression);
}

/** The parts of a checkpoint's pack by name (`cp`, `md`, `lc`, `v:<channel>`), with the values' versions. */
export function decodePackParts(
  bytes: Uint8Array,
): Map<string, { payload: EncodedPayload; version?: string }> {
  const { header, payloads } = decodePack<SpilledPart[]>(bytes);
  const parts = new Map<string, { payload: EncodedPayload; version?: string }>();
  header.forEach(([name, type, codec, version], index) => {
    parts.set(name, { payload: { t: type, z: codec, v: payloads[index]! }, version });
  });
  return parts;
}

/** Locations (channel -> holder id) from their stored form. */
export function decodeLocations(
  byHolder: Record<string, string[]>,
  checkpointId: string,
): Record<string, string> {
  const locations: Record<string, string> = {};
  for (const [holder, channels] of Object.entries(byHolder)) {
    for (const channel of channels) locations[channel] = holder === OWN ? checkpointId : holder;
  }
  return locations;
}

/** One pending write of a putWrites call, serialized: `index` is LangGraph's write index. */
export interface PendingWritePayload {
  channel: string;
  index: number;
  payload: EncodedPayload;
}

/** The header of a putWrites call's pack: task id, task path and one `[channel, index, type, codec]` per write. */
export interface WritesPackHeader {
  k: string;
  p: string;
  w: Array<[channel: string, index: number, type: string, codec: 0 | 1]>;
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
  const header: WritesPackHeader = {
    k: input.taskId,
    p: input.taskPath,
    w: input.writes.map((write) => [write.channel, write.index, write.payload.t, write.payload.z]),
  };
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
    const bytes = 1 + estimateItemBytes(record.record);
    const key = itemKey(record.pk, record.checkpointSk);
    const checkpoint = checkpoints.get(key);
    if (
      checkpoint &&
      checkpoint.g === record.generation &&
      sizeOf(checkpoint) + bytes + 4 <= ITEM_BUDGET_BYTES
    ) {
      sizes.set(checkpoint, sizeOf(checkpoint) + bytes + (checkpoint.w ? 0 : 4));
      (checkpoint.w ??= []).push(record.record);
      continue;
    }
    const existing = writesItems.get(key);
    if (
      existing &&
      existing.g === record.generation &&
      sizeOf(existing) + bytes <= ITEM_BUDGET_BYTES
    ) {
      sizes.set(existing, sizeOf(existing) + bytes);
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
