import { isDeepStrictEqual } from "node:util";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  JsonPlusSerializer,
  TASKS,
  getCheckpointId,
  maxChannelVersion,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type DeltaChannelHistory,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import type { CheckpointRollback } from "../../shared/checkpoint-rollback";
import { CheckpointStoreError, InvalidIdentifierError } from "../../shared/errors";
import { assertIdentifier } from "../../shared/identifiers";
import { compareCodePoints } from "../../shared/order";
import { nextChannelVersion } from "../versions";
import {
  BoundedThreadStore,
  type InMemorySaverStats,
  type PurgeResult,
} from "./bounded-thread-store";
import {
  resolveInMemoryCheckpointConfig,
  type InMemoryCheckpointConfig,
} from "./in-memory-checkpoint-config";
import { sortWrites, writeIndex } from "./pending-writes";
import type {
  NamespaceRecord,
  SerializedValue,
  StoredPayload,
  StoredCheckpoint,
  StoredPendingWrite,
} from "./stored-records";

export interface BoundedInMemorySaverOptions {
  /** Guardrails; every field optional (see {@link InMemoryCheckpointConfig} for the defaults). */
  config?: InMemoryCheckpointConfig;
  /** Serializer of checkpoints, metadata, channel values and writes (default LangGraph's JsonPlusSerializer). */
  serde?: SerializerProtocol;
  /** Clock in milliseconds for the idle TTL (default `Date.now`); injectable so tests need no sleeps. */
  now?: () => number;
}

/** Everything one tuple needs, taken synchronously so a later eviction cannot tear it. */
interface TupleSnapshot {
  threadId: string;
  namespace: string;
  checkpointId: string;
  stored: StoredCheckpoint;
  writes: StoredPendingWrite[];
  /** Pending sends of the parent, for checkpoints older than format 4. */
  parentSends: StoredPendingWrite[] | undefined;
}

/**
 * LangGraph checkpoint saver kept in process memory, with guardrails: idle TTL, thread LRU eviction, per-thread
 * namespace and checkpoint caps, payload caps and a total byte budget (see {@link InMemoryCheckpointConfig}).
 *
 * Stores the delta model: each checkpoint without its channel values, plus one blob per (namespace, channel,
 * version) written only for the channels in `newVersions`. Every call serializes first and then checks limits and
 * mutates storage in one synchronous step, so concurrent calls never see or leave a half-applied write.
 */
export class BoundedInMemorySaver extends BaseCheckpointSaver implements CheckpointRollback {
  private readonly store: BoundedThreadStore;
  /** JsonPlusSerializer's "json" payloads are UTF-8 JSON text and it loads them from strings too. */
  private readonly textPayloads: boolean;

  constructor(options: BoundedInMemorySaverOptions = {}) {
    super(options.serde);
    this.textPayloads = this.serde instanceof JsonPlusSerializer;
    const config = resolveInMemoryCheckpointConfig(options.config);
    this.store = new BoundedThreadStore(config, options.now ?? Date.now);
  }

  /** Counts of what is stored and of every eviction, expiry and rejection so far. */
  stats(): InMemorySaverStats {
    return this.store.stats();
  }

  /** Removes every thread idle longer than the TTL now and says what went. */
  purgeExpired(): PurgeResult {
    return this.store.purgeExpired();
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const rawThreadId: unknown = config.configurable?.thread_id;
    if (rawThreadId === undefined || rawThreadId === null) return undefined;
    const threadId = this.identifier("thread_id", rawThreadId);
    const namespace = this.namespace(config.configurable?.checkpoint_ns ?? "");
    const requestedId = getCheckpointId(config);
    if (requestedId) this.identifier("checkpoint_id", requestedId);

    const record = this.store.readThread(threadId)?.namespaces.get(namespace);
    const checkpointId = requestedId || record?.latestId;
    if (record === undefined || checkpointId === undefined) return undefined;
    const snapshot = takeSnapshot(threadId, namespace, record, checkpointId);
    return snapshot && this.loadTuple(snapshot);
  }

  async *list(
    config: RunnableConfig,
    options: CheckpointListOptions = {},
  ): AsyncGenerator<CheckpointTuple> {
    const { before, filter } = options;
    let { limit } = options;
    const rawThreadId: unknown = config.configurable?.thread_id;
    const threadId =
      rawThreadId === undefined ? undefined : this.identifier("thread_id", rawThreadId);
    const rawNamespace: unknown = config.configurable?.checkpoint_ns;
    const namespace = rawNamespace === undefined ? undefined : this.namespace(rawNamespace);
    const checkpointId = getCheckpointId(config) || undefined;
    if (checkpointId !== undefined) this.identifier("checkpoint_id", checkpointId);
    const beforeId = getCheckpointId(before ?? {}) || undefined;
    if (beforeId !== undefined) this.identifier("before.checkpoint_id", beforeId);
    if (limit !== undefined && (typeof limit !== "number" || Number.isNaN(limit))) {
      throw new CheckpointStoreError(`Invalid limit: expected a number, got ${typeof limit}`);
    }

    // Candidates are fixed now (references only); each is loaded when its turn comes.
    const candidates: Array<{ threadId: string; namespace: string; record: NamespaceRecord }> = [];
    const threads =
      threadId === undefined
        ? this.store.liveThreads()
        : [this.store.readThread(threadId)].filter((thread) => thread !== undefined);
    for (const thread of threads) {
      for (const [name, record] of thread.namespaces) {
        if (namespace === undefined || name === namespace) {
          candidates.push({ threadId: thread.threadId, namespace: name, record });
        }
      }
    }
    for (const candidate of candidates) {
      const ids =
        checkpointId !== undefined
          ? [checkpointId]
          : Array.from(candidate.record.checkpoints.keys()).sort((a, b) => compareCodePoints(b, a));
      for (const id of ids) {
        if (beforeId !== undefined && compareCodePoints(id, beforeId) >= 0) continue;
        if (limit !== undefined && limit <= 0) return;
        const snapshot = takeSnapshot(
          candidate.threadId,
          candidate.namespace,
          candidate.record,
          id,
        );
        if (snapshot === undefined) continue;
        const metadata = (await this.load(snapshot.stored.metadata)) as CheckpointMetadata;
        if (filter !== undefined && !matchesFilter(metadata, filter)) continue;
        if (limit !== undefined) limit -= 1;
        yield await this.loadTuple(snapshot, metadata);
      }
    }
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const threadId = this.identifier("thread_id", config.configurable?.thread_id);
    const namespace = this.namespace(config.configurable?.checkpoint_ns ?? "");
    if (typeof checkpoint !== "object" || checkpoint === null) {
      throw new CheckpointStoreError(`Invalid checkpoint: expected an object, got ${checkpoint}`);
    }
    const checkpointId = this.identifier("checkpoint.id", checkpoint.id);
    const parentId = getCheckpointId(config) || undefined;
    if (parentId !== undefined) this.identifier("checkpoint_id", parentId);

    const { channel_values: channelValues = {}, ...withoutValues } = checkpoint;
    const values = channelValues as Record<string, unknown>;
    if (newVersions !== undefined && (typeof newVersions !== "object" || newVersions === null)) {
      throw new CheckpointStoreError(`Invalid newVersions: expected an object, got ${newVersions}`);
    }
    // Own properties only: a channel named like an Object.prototype member is just a channel.
    const changed = Object.entries(newVersions ?? {}).filter(
      ([channel]) => Object.hasOwn(values, channel) && values[channel] !== undefined,
    );
    const channelVersions = Object.entries(checkpoint.channel_versions ?? {});

    const [serializedCheckpoint, serializedMetadata, ...blobs] = await Promise.all([
      this.dump(withoutValues),
      this.dump(metadata),
      ...changed.map(([channel]) => this.dump(values[channel])),
    ]);
    let bytes = serializedCheckpoint!.size + serializedMetadata!.size;
    for (const blob of blobs) bytes += blob.size;
    if (bytes > this.store.limits.maxCheckpointBytes) {
      this.store.reject("maxCheckpointBytes", bytes);
    }

    // From here to the return: no await, so the limit checks and the mutation are one atomic step.
    this.store.commitCheckpoint({
      threadId,
      namespace,
      checkpointId,
      parentId,
      formatVersion: typeof checkpoint.v === "number" ? checkpoint.v : 0,
      checkpoint: serializedCheckpoint!,
      metadata: serializedMetadata!,
      newBlobs: changed.map(([channel, version], index) => ({
        channel,
        version,
        value: blobs[index]!,
      })),
      channelVersions,
    });
    return {
      configurable: { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: checkpointId },
    };
  }

  async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    const threadId = this.identifier("thread_id", config.configurable?.thread_id);
    const namespace = this.namespace(config.configurable?.checkpoint_ns ?? "");
    const checkpointId = this.identifier("checkpoint_id", getCheckpointId(config) || undefined);
    this.identifier("task_id", taskId);
    if (taskPath !== undefined && typeof taskPath !== "string") {
      throw new InvalidIdentifierError("task_path", `expected a string, got a ${typeof taskPath}`);
    }
    if (!Array.isArray(writes)) {
      throw new CheckpointStoreError(`Invalid writes: expected an array, got a ${typeof writes}`);
    }
    const channels = writes.map((write, position) => {
      const channel: unknown = Array.isArray(write) ? write[0] : undefined;
      if (typeof channel !== "string") {
        throw new InvalidIdentifierError(
          `writes[${position}] channel`,
          `expected a string, got ${channel === undefined ? "undefined" : typeof channel}`,
        );
      }
      return channel;
    });

    const values = await Promise.all(writes.map(([, value]) => this.dump(value)));
    let bytes = 0;
    for (const value of values) bytes += value.size;
    if (bytes > this.store.limits.maxPendingWriteBytes) {
      this.store.reject("maxPendingWriteBytes", bytes);
    }
    if (writes.length === 0) return;

    // No await from the check to the mutation (see put).
    this.store.commitWrites({
      threadId,
      namespace,
      checkpointId,
      writes: channels.map((channel, position) => ({
        taskId,
        channel,
        idx: writeIndex(channel, position),
        taskPath: taskPath ?? "",
        ...values[position]!,
      })),
    });
  }

  /**
   * The parent-chain walk of the base class, on stored records: ancestors' writes and seed blobs are picked up
   * synchronously (one consistent view) and only the requested channels are deserialized, never whole checkpoints.
   */
  override async getDeltaChannelHistory(options: {
    config: RunnableConfig;
    channels: string[];
  }): Promise<Record<string, DeltaChannelHistory>> {
    const { config, channels } = options;
    if (channels.length === 0) return {};
    const collected = new Map<string, StoredPendingWrite[]>(
      channels.map((channel) => [channel, []]),
    );
    const seeds = new Map<string, StoredPayload>();
    const rawThreadId: unknown = config.configurable?.thread_id;
    if (rawThreadId !== undefined) {
      const threadId = this.identifier("thread_id", rawThreadId);
      const namespace = this.namespace(config.configurable?.checkpoint_ns ?? "");
      const requestedId = getCheckpointId(config);
      if (requestedId) this.identifier("checkpoint_id", requestedId);
      const record = this.store.readThread(threadId)?.namespaces.get(namespace);
      const targetId = requestedId || record?.latestId;
      const remaining = new Set(channels);
      let cursor = targetId === undefined ? undefined : record?.checkpoints.get(targetId)?.parentId;
      while (record !== undefined && cursor !== undefined && remaining.size > 0) {
        const ancestor = record.checkpoints.get(cursor);
        if (ancestor === undefined) break;
        // Newest first while walking up; reversed once at the end into oldest-to-newest order.
        const writes = sortWrites(record.writes.get(cursor) ?? []);
        for (let index = writes.length - 1; index >= 0; index -= 1) {
          const write = writes[index]!;
          if (remaining.has(write.channel)) collected.get(write.channel)!.push(write);
        }
        for (let index = 0; index < ancestor.values.length; index += 2) {
          const channel = ancestor.values[index] as string;
          if (!remaining.has(channel)) continue;
          seeds.set(channel, ancestor.values[index + 1]!);
          remaining.delete(channel);
        }
        cursor = ancestor.parentId;
      }
    }

    const entries = await Promise.all(
      channels.map(async (channel): Promise<[string, DeltaChannelHistory]> => {
        const writes = [...collected.get(channel)!].reverse();
        const history: DeltaChannelHistory = {
          writes: await Promise.all(
            writes.map(async (write): Promise<CheckpointPendingWrite> => [
              write.taskId,
              write.channel,
              await this.load(write),
            ]),
          ),
        };
        const seed = seeds.get(channel);
        if (seed !== undefined) history.seed = await this.load(seed);
        return [channel, history];
      }),
    );
    return Object.fromEntries(entries);
  }

  async deleteThread(threadId: string): Promise<void> {
    this.store.deleteThread(this.identifier("thread_id", threadId));
  }

  /**
   * Takes the thread back to `checkpointId` (see {@link CheckpointRollback}): every checkpoint newer than it, in
   * every namespace, goes with its pending writes and the channel blobs only it held; `undefined` empties the
   * thread. One synchronous step: concurrent reads see the thread before or after, never between.
   */
  async deleteCheckpointsAfter(threadId: string, checkpointId: string | undefined): Promise<void> {
    const thread = this.identifier("thread_id", threadId);
    const after =
      checkpointId === undefined ? undefined : this.identifier("checkpoint_id", checkpointId);
    this.store.deleteCheckpointsAfter(thread, after);
  }

  /**
   * Unique, ordered string versions, so branches forked from one checkpoint never share a blob.
   * Typed as `number` only because LangGraph's APIs accept `BaseCheckpointSaver<number>`; it treats versions
   * as opaque and compares them with `compareChannelVersions`, which orders these strings correctly.
   */
  override getNextVersion(current: number | undefined): number {
    return nextChannelVersion(current) as unknown as number;
  }

  private async loadTuple(
    snapshot: TupleSnapshot,
    knownMetadata?: CheckpointMetadata,
  ): Promise<CheckpointTuple> {
    const { stored, threadId, namespace, checkpointId } = snapshot;
    const [checkpoint, metadata, channelValues, pendingWrites, sends] = await Promise.all([
      this.load(stored.checkpoint) as Promise<Checkpoint>,
      knownMetadata ?? (this.load(stored.metadata) as Promise<CheckpointMetadata>),
      this.loadValues(stored.values),
      Promise.all(
        snapshot.writes.map(async (write): Promise<CheckpointPendingWrite> => [
          write.taskId,
          write.channel,
          await this.load(write),
        ]),
      ),
      snapshot.parentSends && Promise.all(snapshot.parentSends.map((send) => this.load(send))),
    ]);
    checkpoint.channel_values = channelValues;
    if (sends !== undefined) this.migratePendingSends(checkpoint, sends);

    const tuple: CheckpointTuple = {
      config: {
        configurable: {
          thread_id: threadId,
          checkpoint_ns: namespace,
          checkpoint_id: checkpointId,
        },
      },
      checkpoint,
      metadata,
      pendingWrites,
    };
    if (stored.parentId !== undefined) {
      tuple.parentConfig = {
        configurable: {
          thread_id: threadId,
          checkpoint_ns: namespace,
          checkpoint_id: stored.parentId,
        },
      };
    }
    return tuple;
  }

  /** Checkpoints before format 4 kept pending sends as the parent's writes; LangGraph expects a channel. */
  private migratePendingSends(checkpoint: Checkpoint, sends: unknown[]): void {
    checkpoint.channel_values[TASKS] = sends;
    const versions = Object.values(checkpoint.channel_versions ?? {});
    checkpoint.channel_versions ??= {};
    checkpoint.channel_versions[TASKS] =
      versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }

  /** Channel values from the flat `[channel, blob, ...]` list of a stored checkpoint. */
  private async loadValues(flat: readonly StoredPayload[]): Promise<Record<string, unknown>> {
    // Even positions hold channel names, odd ones their payloads.
    const loaded = await Promise.all(
      flat.map((entry, index) => (index % 2 === 0 ? entry : this.load(entry))),
    );
    const entries: Array<[string, unknown]> = [];
    for (let index = 0; index < loaded.length; index += 2) {
      entries.push([loaded[index] as string, loaded[index + 1]]);
    }
    // fromEntries defines own properties: a channel named "__proto__" stays a plain value.
    return Object.fromEntries(entries);
  }

  private async dump(value: unknown): Promise<SerializedValue> {
    const [type, bytes] = await this.serde.dumpsTyped(value);
    if (type === "json" && this.textPayloads) {
      return { type, data: UTF8.decode(bytes), size: bytes.byteLength };
    }
    // JsonPlusSerializer hands raw byte input back as is: copy it so the caller cannot change stored data.
    return { type, data: bytes === value ? bytes.slice() : bytes, size: bytes.byteLength };
  }

  private load(value: StoredPayload): Promise<unknown> {
    if (typeof value === "string") return this.serde.loadsTyped("json", value);
    return this.serde.loadsTyped(value.type, value.data);
  }

  /** An identifier within the configured length; oversized ones are a capacity rejection. */
  private identifier(field: string, value: unknown): string {
    const maxLength = this.store.limits.maxIdentifierLength;
    if (typeof value === "string" && value.length > maxLength) {
      this.store.reject("maxIdentifierLength", value.length);
    }
    return assertIdentifier(field, value, { maxLength });
  }

  private namespace(value: unknown): string {
    const maxLength = this.store.limits.maxIdentifierLength;
    if (typeof value === "string" && value.length > maxLength) {
      this.store.reject("maxIdentifierLength", value.length);
    }
    return assertIdentifier("checkpoint_ns", value, { maxLength, allowEmpty: true });
  }
}

const UTF8 = new TextDecoder();

/** The LangGraph.js name of the default in-memory saver; here it is the bounded one. */
export const InMemorySaver = BoundedInMemorySaver;
export type InMemorySaver = BoundedInMemorySaver;

function takeSnapshot(
  threadId: string,
  namespace: string,
  record: NamespaceRecord,
  checkpointId: string,
): TupleSnapshot | undefined {
  const stored = record.checkpoints.get(checkpointId);
  if (stored === undefined) return undefined;
  const writes = record.writes.get(checkpointId);
  let parentSends: StoredPendingWrite[] | undefined;
  if (stored.formatVersion < 4 && stored.parentId !== undefined) {
    const parentWrites = record.writes.get(stored.parentId) ?? [];
    parentSends = sortWrites(parentWrites).filter((write) => write.channel === TASKS);
  }
  return {
    threadId,
    namespace,
    checkpointId,
    stored,
    writes: writes === undefined ? [] : sortWrites(writes),
    parentSends,
  };
}

/** Deep equality per top-level metadata key, applied before `limit` counts. */
function matchesFilter(metadata: CheckpointMetadata, filter: Record<string, unknown>): boolean {
  const values = metadata as Record<string, unknown>;
  return Object.entries(filter).every(([key, expected]) =>
    isDeepStrictEqual(values[key], expected),
  );
}
