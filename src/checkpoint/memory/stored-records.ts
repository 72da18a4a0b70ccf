import type { WritesSortKey } from "@langchain/langgraph-checkpoint";

/** Serializer output kept as is: the type travels with the bytes so `loadsTyped` gets it back. */
export interface SerializedValue {
  readonly type: string;
  readonly bytes: Uint8Array;
}

/** One checkpoint, stored without its channel values (those live in the namespace's blobs). */
export interface StoredCheckpoint {
  readonly checkpoint: SerializedValue;
  readonly metadata: SerializedValue;
  readonly parentId: string | undefined;
  /** Checkpoint format version, kept readable to know whether pending sends need migrating. */
  readonly formatVersion: number;
  /** The blob of every channel in `channel_versions`, resolved at `put` (absent channels are omitted). */
  readonly values: ReadonlyArray<readonly [channel: string, value: SerializedValue]>;
  /** Bytes of `checkpoint` and `metadata`; blobs are counted once, where they are stored. */
  readonly bytes: number;
}

export interface StoredWrite {
  readonly taskId: string;
  readonly channel: string;
  readonly value: SerializedValue;
  readonly sortKey: WritesSortKey;
}

/** A checkpoint namespace of a thread: checkpoints, channel blobs per version, and pending writes. */
export class NamespaceRecord {
  readonly checkpoints = new Map<string, StoredCheckpoint>();
  /** Checkpoint ids are uuid6, so the largest id is the latest; tracked to avoid sorting on every read. */
  latestId: string | undefined = undefined;
  /** channel -> version -> blob. Versions are unique per branch, so a blob is written once. */
  readonly blobs = new Map<string, Map<string | number, SerializedValue>>();
  /** checkpoint id -> `${idx}:${taskId}` -> write. May exist before its checkpoint does. */
  readonly writes = new Map<string, Map<string, StoredWrite>>();
}

/** A thread: the unit of eviction and expiry, so ancestry and channel versions always stay whole. */
export class ThreadRecord {
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
  return value.bytes.byteLength;
}
