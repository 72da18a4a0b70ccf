/**
 * Serializer output: the type travels with the payload so `loadsTyped` gets it back. JSON text from the default
 * serializer is kept as a string (which `loadsTyped` accepts): a Uint8Array costs ~150 bytes of JS objects
 * besides its payload, a string 16, and strings are leaves for the garbage collector.
 */
export interface SerializedValue {
  readonly type: string;
  readonly data: Uint8Array | string;
  /** Serialized size in bytes (what the byte limits count). */
  readonly size: number;
}

/** A stored payload: JSON text (type "json") as the bare string, anything else with its type. */
export type StoredPayload = string | SerializedValue;

/** Drops the wrapper object where the type is implied: one object less per payload for the GC to trace. */
export function compactPayload(value: SerializedValue): StoredPayload {
  return value.type === "json" && typeof value.data === "string" ? value.data : value;
}

/** One checkpoint, stored without its channel values (those live in the namespace's blobs). */
export interface StoredCheckpoint {
  readonly checkpoint: StoredPayload;
  readonly metadata: StoredPayload;
  readonly parentId: string | undefined;
  /** Checkpoint format version, kept readable to know whether pending sends need migrating. */
  readonly formatVersion: number;
  /**
   * The blob of every channel in `channel_versions`, resolved at `put` (absent channels are omitted), flat as
   * `[channel, blob, channel, blob, ...]`: one array per checkpoint instead of one per channel.
   */
  readonly values: readonly StoredPayload[];
  /** Bytes of `checkpoint` and `metadata`; blobs are counted once, where they are stored. */
  readonly bytes: number;
}

/** A pending write, flat (the serialized value inline) since a checkpoint usually has several. */
export interface StoredPendingWrite extends SerializedValue {
  readonly taskId: string;
  readonly channel: string;
  /** `WRITES_IDX_MAP[channel]` (negative, special channels) or the position in its batch. */
  readonly idx: number;
  readonly taskPath: string;
}

/** A checkpoint namespace of a thread: checkpoints, channel blobs per version, and pending writes. */
export class NamespaceRecord {
  readonly checkpoints = new Map<string, StoredCheckpoint>();
  /** Checkpoint ids are uuid6, so the largest id is the latest; tracked to avoid sorting on every read. */
  latestId: string | undefined = undefined;
  /** channel -> version -> blob. Versions are unique per branch, so a blob is written once. */
  readonly blobs = new Map<string, Map<string | number, StoredPayload>>();
  /** checkpoint id -> its writes, unordered (a handful each; sorted on read). May exist before the checkpoint. */
  readonly writes = new Map<string, StoredPendingWrite[]>();
}

/** A thread: the unit of eviction and expiry, so ancestry and channel versions always stay whole. */
export class StoredThread {
  readonly namespaces = new Map<string, NamespaceRecord>();
  checkpointCount = 0;
  writeCount = 0;
  bytes = 0;

  constructor(
    readonly threadId: string,
    public lastUsedAt: number,
  ) {}
}

export function serializedSize(value: SerializedValue): number {
  return value.size;
}

/** Bytes a stored payload was counted for: a compacted JSON text is its UTF-8 serializer output, decoded. */
export function storedSize(value: StoredPayload): number {
  return typeof value === "string" ? Buffer.byteLength(value) : value.size;
}
