import { randomBytes } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { DynamoDBClient, type DynamoDBClientConfig } from "@aws-sdk/client-dynamodb";
import {
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  type QueryCommandInput,
} from "@aws-sdk/lib-dynamodb";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  TASKS,
  WRITES_IDX_MAP,
  compareWritesSortKeys,
  getCheckpointId,
  maxChannelVersion,
  writesSortKey,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import {
  CheckpointStoreError,
  CheckpointTooLargeError,
  InvalidConfigurationError,
} from "../../shared/errors";
import { nextChannelVersion } from "../versions";
import { decodeBytes, encodeValue, type Compression, type EncodedValue } from "./codec";
import {
  ITEM_BUDGET_BYTES,
  ITEM_KIND,
  estimateItemBytes,
  type CheckpointItem,
  type ChunkItem,
  type ChunkedValue,
  type InlineValue,
  type StoredItem,
  type StoredWrite,
  type WritesItem,
} from "./items";
import {
  ROOT_CHECKPOINT_PREFIX,
  THREAD_RECORD_SK,
  assertCheckpointId,
  assertNamespace,
  assertTaskId,
  assertTenantId,
  assertThreadId,
  buildCheckpointSk,
  buildChunkSk,
  buildPk,
  checkpointPrefix,
  parseCheckpointSk,
  parsePk,
  writesPrefix,
  buildWritesSk,
} from "./keys";
import { batchGetAll, batchWriteAll, withThrottlingRetry } from "./retry";
import { THREADS_BY_TENANT_INDEX } from "./table-definition";
import { assertThreadStatus, buildStatusUpdate, type ThreadStatus } from "./thread-record";
import { chunkItem, joinChunks, putRequest, splitChunks } from "./chunks";
import { GroupCommit } from "./group-commit";
import { queryAll, removePartition, toDocumentClient } from "./partition";
import { ThreadLifecycle, type ThreadState } from "./thread-lifecycle";

export interface DynamoDBSaverOptions {
  /** Name of the Memory Table DynamoDB table. */
  tableName: string;
  /** The tenant every key of this instance belongs to (from verified JWT claims only). */
  tenantId: string;
  /** A DynamoDB client to share across instances (one per container); or `clientConfig` to create one. */
  client?: DynamoDBClient | DynamoDBDocumentClient;
  clientConfig?: DynamoDBClientConfig;
  /** Seconds a thread lives after its last write (default 30 days). */
  ttlSeconds?: number;
  /** Largest serialized checkpoint with its new channel values, in bytes (default 4 MiB). */
  maxCheckpointBytes?: number;
  /** Payload compression (default brotli). */
  compression?: Compression;
  serde?: SerializerProtocol;
  /** Clock in epoch milliseconds (tests of expiry). */
  now?: () => number;
}

export const DEFAULT_TTL_SECONDS = 30 * 24 * 60 * 60;
export const DEFAULT_MAX_CHECKPOINT_BYTES = 4 * 1024 * 1024;

// A value larger than this (encoded) is stored as chunk items; the rest of an item stays far below 400 KB.
const MAX_INLINE_VALUE_BYTES = 64 * 1024;
const MAX_INLINE_TOTAL_BYTES = 256 * 1024;
// First page of a latest-checkpoint Query: the thread record, a few pending writes and the checkpoint.
const LATEST_PAGE_LIMIT = 3;
const LINEAGE_CACHE_SIZE = 128;
// Unchanged values up to this size are copied into a child checkpoint item (at most MAX_COPIED_BYTES in all).
const MAX_COPIED_VALUE_BYTES = 256;
const MAX_COPIED_BYTES = 1024;
const SMALL_VALUES_LIMIT = 10_000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Item = Record<string, any>;

/**
 * A LangGraph checkpoint saver on one DynamoDB table, bound to one tenant.
 *
 * - Keys: every key starts with the tenant (`keys.ts`); identifiers are validated before any request.
 * - Delta storage: a checkpoint item holds the checkpoint without channel values plus the values new in it;
 *   unchanged channels point (`loc`) at the ancestor item that holds their version. The checkpoint item is the
 *   commit record: it is written last, so a reader never sees a checkpoint whose values are missing.
 * - Reads are consistent; the latest root checkpoint with its pending writes and the thread record is one Query,
 *   its older values one BatchGetItem.
 * - Writes issued in the same event-loop turn share one BatchWriteItem (group commit).
 * - Threads expire whole: the thread record's `ttl` is renewed by writes; an expired thread reads as absent.
 */
export class DynamoDBSaver extends BaseCheckpointSaver {
  readonly tenantId: string;
  readonly tableName: string;
  readonly ttlSeconds: number;
  readonly maxCheckpointBytes: number;
  private readonly compression: Compression;
  private readonly client: DynamoDBDocumentClient;
  private readonly commits: GroupCommit;
  private readonly now: () => number;
  private readonly threads: ThreadLifecycle;
  private readonly lineage = new Map<string, Record<string, string>>();
  /** Locations of checkpoints whose put is in flight in this instance (undefined if it fails). */
  private readonly locationsInFlight = new Map<
    string,
    Promise<Record<string, string> | undefined>
  >();
  private sequence = 0;
  /** Small encoded values by (thread, namespace, channel, version), to copy into child checkpoints. */
  private readonly smallValues = new Map<string, InlineValue>();

  constructor(options: DynamoDBSaverOptions) {
    super(options.serde);
    if (typeof options.tableName !== "string" || options.tableName.length === 0) {
      throw new InvalidConfigurationError("tableName", "expected a non-empty string");
    }
    this.tableName = options.tableName;
    this.tenantId = assertTenantId(options.tenantId);
    this.ttlSeconds = positiveInteger("ttlSeconds", options.ttlSeconds, DEFAULT_TTL_SECONDS);
    this.maxCheckpointBytes = positiveInteger(
      "maxCheckpointBytes",
      options.maxCheckpointBytes,
      DEFAULT_MAX_CHECKPOINT_BYTES,
    );
    this.compression = options.compression ?? "brotli";
    this.now = options.now ?? Date.now;
    this.client = toDocumentClient(
      options.client ?? new DynamoDBClient(options.clientConfig ?? {}),
    );
    this.commits = new GroupCommit(this.client, this.tableName);
    this.threads = new ThreadLifecycle({
      client: this.client,
      tableName: this.tableName,
      tenantId: this.tenantId,
      ttlSeconds: this.ttlSeconds,
      now: this.now,
      removeThread: (threadId) => this.deleteThread(threadId),
    });
  }

  // LangGraph types channel versions as numbers by default but compares them as strings or numbers alike;
  // string versions keep forks apart (see versions.ts), the cast keeps the saver assignable where graphs expect one.
  override getNextVersion(current: number | undefined): number {
    return nextChannelVersion(current) as unknown as number;
  }

  /** The runtime renewed the thread record itself (with the lease): skip this instance's renewal write. */
  noteThreadExpiry(threadId: string, ttlEpochSeconds: number): void {
    this.threads.noteRenewed(threadId, ttlEpochSeconds);
  }

  // ---------------------------------------------------------------- reads

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config.configurable?.thread_id;
    if (threadId === undefined || threadId === null) return undefined;
    assertThreadId(threadId);
    const namespace = assertNamespace(config.configurable?.checkpoint_ns ?? "");
    const checkpointId = getCheckpointId(config);
    if (checkpointId) assertCheckpointId(checkpointId);

    const found =
      checkpointId === undefined || checkpointId === ""
        ? await this.readLatest(threadId, namespace)
        : await this.readById(threadId, namespace, checkpointId);
    if (!found) return undefined;
    const [tuple] = await this.assembleTuples(threadId, [found]);
    return tuple;
  }

  override async *list(
    config: RunnableConfig,
    options: CheckpointListOptions = {},
  ): AsyncGenerator<CheckpointTuple> {
    const { filter, before } = options;
    let remaining = options.limit ?? Number.POSITIVE_INFINITY;
    const beforeId = before?.configurable?.checkpoint_id as string | undefined;
    const namespaceOption = config.configurable?.checkpoint_ns as string | undefined;
    const namespace = namespaceOption === undefined ? undefined : assertNamespace(namespaceOption);
    const threadId = config.configurable?.thread_id as string | undefined;
    const checkpointId = getCheckpointId(config) || undefined;
    if (checkpointId !== undefined) assertCheckpointId(checkpointId);
    const threadIds =
      threadId === undefined || threadId === null
        ? this.listThreadIds()
        : singleton(assertThreadId(threadId));

    for await (const id of threadIds) {
      if (remaining <= 0) return;
      const groups = await this.readThreadCheckpoints(id, namespace);
      const selected: CheckpointGroup[] = [];
      for (const group of groups) {
        if (remaining - selected.length <= 0) break;
        // A checkpoint id in the config narrows the listing to that checkpoint (as LangGraph's savers do).
        if (checkpointId !== undefined && group.checkpointId !== checkpointId) continue;
        if (beforeId !== undefined && !(group.checkpointId < beforeId)) continue;
        if (filter && !(await this.matchesFilter(group.item, filter))) continue;
        selected.push(group);
      }
      remaining -= selected.length;
      yield* await this.assembleTuples(id, selected, groups);
    }
  }

  // ---------------------------------------------------------------- writes

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const threadId = config.configurable?.thread_id;
    if (threadId === undefined || threadId === null) {
      throw new Error(
        'Failed to put checkpoint. The passed RunnableConfig is missing a required "thread_id" field in its "configurable" property.',
      );
    }
    assertThreadId(threadId);
    const namespace = assertNamespace(config.configurable?.checkpoint_ns ?? "");
    const checkpointId = assertCheckpointId(checkpoint.id);
    const parentId = config.configurable?.checkpoint_id as string | undefined;
    if (parentId) assertCheckpointId(parentId);
    // A child put issued while this one is in flight inherits from it once its locations are known.
    const locations = this.announceLocations(threadId, namespace, checkpointId);
    try {
      return await this.writeCheckpoint(
        { threadId, namespace, checkpointId, parentId },
        checkpoint,
        metadata,
        newVersions,
        locations.resolve,
      );
    } finally {
      locations.settle();
    }
  }

  private async writeCheckpoint(
    target: { threadId: string; namespace: string; checkpointId: string; parentId?: string },
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
    publishLocations: (locations: Record<string, string>) => void,
  ): Promise<RunnableConfig> {
    const { threadId, namespace, checkpointId, parentId } = target;
    // Serialize everything before the first request: an oversized checkpoint is rejected with nothing written.
    const { channel_values: channelValues, ...rest } = checkpoint;
    const [checkpointType, checkpointBytes] = await this.serde.dumpsTyped({
      ...rest,
      channel_values: {},
    });
    const [metadataType, metadataBytes] = await this.serde.dumpsTyped(metadata);
    const newValues: Array<{ channel: string; version: string; type: string; bytes: Uint8Array }> =
      [];
    for (const channel of Object.keys(newVersions)) {
      if (!(channel in channelValues)) continue;
      const [type, bytes] = await this.serde.dumpsTyped(channelValues[channel]);
      newValues.push({ channel, version: String(newVersions[channel]), type, bytes });
    }
    const totalBytes =
      checkpointBytes.byteLength +
      metadataBytes.byteLength +
      newValues.reduce((sum, value) => sum + value.bytes.byteLength, 0);
    if (totalBytes > this.maxCheckpointBytes) {
      throw new CheckpointTooLargeError(this.maxCheckpointBytes, totalBytes);
    }

    const pk = buildPk(this.tenantId, threadId);
    this.commits.beginPut(pk);
    try {
      const [thread, parentLocations] = await Promise.all([
        this.threads.ensureWritable(threadId),
        parentId
          ? this.readLocations(threadId, namespace, parentId)
          : Promise.resolve<Record<string, string>>({}),
      ]);

      const sk = buildCheckpointSk(namespace, checkpointId);
      const item: CheckpointItem = {
        pk,
        sk,
        k: ITEM_KIND.checkpoint,
        g: thread.generation,
        cp: encodeValue(checkpointType, checkpointBytes, this.compression),
        md: encodeValue(metadataType, metadataBytes, this.compression),
        loc: {},
        vals: {},
        big: {},
      };
      if (parentId) item.p = parentId;
      const newChannels = new Set(Object.keys(newVersions));
      let copiedBytes = 0;
      for (const [channel, version] of Object.entries(checkpoint.channel_versions)) {
        const inherited = parentLocations[channel];
        if (newChannels.has(channel) || inherited === undefined) continue;
        // A small unchanged value this instance already holds rides along, so reading this checkpoint
        // (a resume) needs no fetch of the ancestor item; larger ones stay where they are.
        const small = this.smallValues.get(smallValueKey(pk, namespace, channel, String(version)));
        if (small && copiedBytes + small.v.byteLength <= MAX_COPIED_BYTES) {
          copiedBytes += small.v.byteLength;
          item.vals[channel] = small;
        } else {
          item.loc[channel] = inherited;
        }
      }
      const chunks: ChunkItem[] = [];
      // Values stay inline while the whole item fits; the checkpoint body and metadata always do.
      const bodyBytes = estimateItemBytes(item);
      if (bodyBytes > ITEM_BUDGET_BYTES) {
        throw new CheckpointTooLargeError(
          ITEM_BUDGET_BYTES,
          bodyBytes,
          "checkpoint body and metadata",
        );
      }
      let inlineBytes = 0;
      const inlineBudget = Math.min(MAX_INLINE_TOTAL_BYTES, ITEM_BUDGET_BYTES - bodyBytes);
      for (const value of newValues) {
        const encoded = encodeValue(value.type, value.bytes, this.compression);
        const size = encoded.v.byteLength + Buffer.byteLength(value.channel) + 64;
        if (encoded.v.byteLength <= MAX_INLINE_VALUE_BYTES && inlineBytes + size <= inlineBudget) {
          inlineBytes += size;
          item.vals[value.channel] = { ...encoded, ver: value.version };
          this.rememberSmallValue(pk, namespace, value.channel, item.vals[value.channel]!);
        } else {
          const parts = splitChunks(encoded.v).map((d, n) =>
            chunkItem(pk, buildChunkSk(sk, value.channel, n), thread.generation, d),
          );
          chunks.push(...parts);
          item.big[value.channel] = {
            ver: value.version,
            t: encoded.t,
            z: encoded.z,
            n: parts.length,
          };
        }
      }
      publishLocations(locationsOf(item, checkpointId));
      // Chunks first, then the checkpoint item that references them: the commit point.
      if (chunks.length > 0)
        await batchWriteAll(this.client, this.tableName, chunks.map(putRequest));
      await this.commits.submitCheckpoint(item);
      this.rememberLocations(threadId, namespace, checkpointId, locationsOf(item, checkpointId));
    } finally {
      this.commits.endPut(pk);
    }
    return {
      configurable: { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: checkpointId },
    };
  }

  override async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath = "",
  ): Promise<void> {
    const threadId = config.configurable?.thread_id;
    const checkpointId = config.configurable?.checkpoint_id;
    if (threadId === undefined || threadId === null) {
      throw new Error(
        'Failed to put writes. The passed RunnableConfig is missing a required "thread_id" field in its "configurable" property',
      );
    }
    if (checkpointId === undefined || checkpointId === null) {
      throw new Error(
        'Failed to put writes. The passed RunnableConfig is missing a required "checkpoint_id" field in its "configurable" property.',
      );
    }
    assertThreadId(threadId);
    assertCheckpointId(checkpointId);
    assertTaskId(taskId);
    const namespace = assertNamespace(config.configurable?.checkpoint_ns ?? "");
    if (typeof taskPath !== "string") throw new TypeError("Invalid task path: expected a string");

    const serialized = await Promise.all(
      writes.map(async ([channel, value], position) => {
        const [type, bytes] = await this.serde.dumpsTyped(value);
        return { channel, index: WRITES_IDX_MAP[channel] ?? position, type, bytes };
      }),
    );
    const thread = await this.threads.ensureWritable(threadId);
    const pk = buildPk(this.tenantId, threadId);
    const checkpointSk = buildCheckpointSk(namespace, checkpointId);
    const seq = this.nextSequence();
    const encoded = serialized.map((write) => ({
      write,
      value: encodeValue(write.type, write.bytes, this.compression),
    }));
    const inlineBytes = encoded.reduce((sum, { value }) => sum + value.v.byteLength, 0);
    const entry = (write: (typeof serialized)[number], value: EncodedValue): StoredWrite => ({
      k: taskId,
      p: taskPath,
      q: seq,
      c: write.channel,
      i: write.index,
      t: value.t,
      z: value.z,
      v: value.v,
    });
    if (
      inlineBytes <= MAX_INLINE_TOTAL_BYTES &&
      encoded.every(({ value }) => value.v.byteLength <= MAX_INLINE_VALUE_BYTES)
    ) {
      await this.commits.submitWrites({
        pk,
        checkpointSk,
        writesSk: buildWritesSk(namespace, checkpointId, seq),
        generation: thread.generation,
        entries: encoded.map(({ write, value }) => entry(write, value)),
      });
      return;
    }
    // Large writes get their own item, their chunks written first, so the item never points at missing chunks.
    const sk = buildWritesSk(namespace, checkpointId, seq);
    const chunks: ChunkItem[] = [];
    const stored = encoded.map(({ write, value }, position): StoredWrite => {
      if (value.v.byteLength <= MAX_INLINE_VALUE_BYTES) return entry(write, value);
      const parts = splitChunks(value.v).map((d, n) =>
        chunkItem(pk, buildChunkSk(sk, String(position), n), thread.generation, d),
      );
      chunks.push(...parts);
      const { v: _bytes, ...rest } = entry(write, value);
      return { ...rest, n: parts.length };
    });
    const item: WritesItem = { pk, sk, k: ITEM_KIND.writes, g: thread.generation, ws: stored };
    await batchWriteAll(this.client, this.tableName, [...chunks, item].map(putRequest));
  }

  override async deleteThread(threadId: string): Promise<void> {
    assertThreadId(threadId);
    this.commits.discardHeld(
      buildPk(this.tenantId, threadId),
      new CheckpointStoreError(`Thread ${threadId} was deleted before these writes were stored`),
    );
    await removePartition(this.client, this.tableName, buildPk(this.tenantId, threadId));
    this.forget(threadId);
  }

  /**
   * Sets the thread's operational status (and next node, for paused threads) on its record, renewing its expiry.
   * `config` needs only `thread_id`.
   */
  async markStatus(config: RunnableConfig, status: ThreadStatus, nextNode?: string): Promise<void> {
    const threadId = assertThreadId(config.configurable?.thread_id);
    assertThreadStatus(status);
    if (nextNode !== undefined && typeof nextNode !== "string") {
      throw new TypeError("Invalid next node: expected a string");
    }
    await this.threads.touch(threadId, buildStatusUpdate(this.tenantId, status, nextNode));
  }

  private rememberSmallValue(
    pk: string,
    namespace: string,
    channel: string,
    value: InlineValue,
  ): void {
    if (value.v.byteLength > MAX_COPIED_VALUE_BYTES) return;
    if (this.smallValues.size >= SMALL_VALUES_LIMIT) this.smallValues.clear();
    this.smallValues.set(smallValueKey(pk, namespace, channel, value.ver), value);
  }

  /** A read found no thread record: forget what this instance knew of the thread (it was deleted). */
  private threadAbsent(threadId: string): undefined {
    this.threads.live(threadId, undefined);
    return undefined;
  }

  private forget(threadId: string): void {
    this.threads.forget(threadId);
    const prefix = `${threadId}\u0000`;
    for (const key of this.lineage.keys()) if (key.startsWith(prefix)) this.lineage.delete(key);
  }

  // ---------------------------------------------------------------- checkpoint reads

  /** Latest checkpoint of a namespace with its writes and chunks; the root one in a single Query. */
  private async readLatest(
    threadId: string,
    namespace: string,
  ): Promise<CheckpointGroup | undefined> {
    const pk = buildPk(this.tenantId, threadId);
    const root = namespace === "";
    const input: QueryCommandInput = root
      ? {
          TableName: this.tableName,
          KeyConditionExpression: "pk = :pk AND sk BETWEEN :low AND :high",
          ExpressionAttributeValues: {
            ":pk": pk,
            ":low": ROOT_CHECKPOINT_PREFIX,
            ":high": THREAD_RECORD_SK,
          },
        }
      : {
          TableName: this.tableName,
          KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
          ExpressionAttributeValues: { ":pk": pk, ":prefix": checkpointPrefix(namespace) },
        };
    const threadRead = root ? undefined : this.threads.read(threadId);
    let thread: ThreadState | undefined;
    const pending: StoredItem[] = [];
    let startKey: Item | undefined;
    let limit = LATEST_PAGE_LIMIT;
    for (;;) {
      const page = await this.query({
        ...input,
        ScanIndexForward: false,
        ConsistentRead: true,
        Limit: limit,
        ExclusiveStartKey: startKey,
      });
      for (const raw of page.Items ?? []) {
        if (raw.sk === THREAD_RECORD_SK) {
          thread = this.threads.live(threadId, raw);
          if (!thread) return undefined;
          continue;
        }
        if (root && !thread) return this.threadAbsent(threadId);
        const item = raw as unknown as StoredItem;
        if (item.k !== ITEM_KIND.checkpoint) {
          pending.push(item);
          continue;
        }
        thread ??= await threadRead;
        if (!thread) return undefined;
        if (item.g !== thread.generation) continue;
        const { checkpointId } = parseCheckpointSk(item.sk);
        return this.group(thread, item, checkpointId, pending);
      }
      if (root && !thread) return this.threadAbsent(threadId);
      startKey = page.LastEvaluatedKey;
      if (!startKey) return undefined;
      limit = 50;
    }
  }

  private async readById(
    threadId: string,
    namespace: string,
    checkpointId: string,
  ): Promise<CheckpointGroup | undefined> {
    const pk = buildPk(this.tenantId, threadId);
    const sk = buildCheckpointSk(namespace, checkpointId);
    const [thread, items] = await Promise.all([
      this.threads.read(threadId),
      this.queryAll({
        TableName: this.tableName,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues: { ":pk": pk, ":prefix": sk },
        ConsistentRead: true,
      }),
    ]);
    if (!thread) return undefined;
    const own = (items as unknown as StoredItem[]).filter(
      (item) => item.sk === sk || item.sk.startsWith(`${sk}#`),
    );
    const checkpoint = own.find((item): item is CheckpointItem => item.k === ITEM_KIND.checkpoint);
    if (!checkpoint || checkpoint.g !== thread.generation) return undefined;
    return this.group(thread, checkpoint, checkpointId, own);
  }

  /** Every live checkpoint of a thread (one namespace, or all), newest first across namespaces. */
  private async readThreadCheckpoints(
    threadId: string,
    namespace: string | undefined,
  ): Promise<CheckpointGroup[]> {
    const pk = buildPk(this.tenantId, threadId);
    const [thread, items] = await Promise.all([
      this.threads.read(threadId),
      this.queryAll({
        TableName: this.tableName,
        ...(namespace === undefined
          ? {
              KeyConditionExpression: "pk = :pk AND sk >= :low",
              ExpressionAttributeValues: { ":pk": pk, ":low": ROOT_CHECKPOINT_PREFIX },
            }
          : {
              KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
              ExpressionAttributeValues: { ":pk": pk, ":prefix": checkpointPrefix(namespace) },
            }),
        ConsistentRead: true,
      }),
    ]);
    if (!thread) return [];
    const byCheckpoint = new Map<string, { item?: CheckpointItem; related: StoredItem[] }>();
    for (const raw of items) {
      if (raw.sk === THREAD_RECORD_SK) continue;
      const item = raw as unknown as StoredItem;
      if (item.g !== thread.generation) continue;
      const { namespace: ns, checkpointId } = parseCheckpointSk(item.sk);
      const key = `${ns}\u0000${checkpointId}`;
      const entry = byCheckpoint.get(key) ?? { related: [] };
      if (item.k === ITEM_KIND.checkpoint) entry.item = item;
      else entry.related.push(item);
      byCheckpoint.set(key, entry);
    }
    const groups: CheckpointGroup[] = [];
    for (const entry of byCheckpoint.values()) {
      if (!entry.item) continue;
      const { checkpointId } = parseCheckpointSk(entry.item.sk);
      groups.push(this.group(thread, entry.item, checkpointId, entry.related));
    }
    return groups.sort((a, b) =>
      a.checkpointId < b.checkpointId ? 1 : a.checkpointId > b.checkpointId ? -1 : 0,
    );
  }

  private group(
    thread: ThreadState,
    item: CheckpointItem,
    checkpointId: string,
    related: StoredItem[],
  ): CheckpointGroup {
    const { namespace } = parseCheckpointSk(item.sk);
    this.commits.markKnown(item.pk, item.sk);
    const ownPrefix = `${item.sk}#`;
    const own = related.filter(
      (other) => other.sk.startsWith(ownPrefix) && other.g === thread.generation,
    );
    return {
      item,
      namespace,
      checkpointId,
      writes: own.filter((other): other is WritesItem => other.k === ITEM_KIND.writes),
      chunks: own.filter((other): other is ChunkItem => other.k === ITEM_KIND.chunk),
    };
  }

  /** Channel locations of a checkpoint (to inherit in its child), from this instance's cache or one GetItem. */
  private async readLocations(
    threadId: string,
    namespace: string,
    checkpointId: string,
  ): Promise<Record<string, string>> {
    const key = lineageKey(threadId, namespace, checkpointId);
    const cached = this.lineage.get(key) ?? (await this.locationsInFlight.get(key));
    if (cached) return cached;
    const response = await withThrottlingRetry(() =>
      this.client.send(
        new GetCommand({
          TableName: this.tableName,
          Key: {
            pk: buildPk(this.tenantId, threadId),
            sk: buildCheckpointSk(namespace, checkpointId),
          },
          ProjectionExpression: "loc, vals, big",
          ConsistentRead: true,
        }),
      ),
    );
    return response.Item ? locationsOf(response.Item as CheckpointItem, checkpointId) : {};
  }

  private announceLocations(threadId: string, namespace: string, checkpointId: string) {
    const key = lineageKey(threadId, namespace, checkpointId);
    let resolve!: (locations: Record<string, string> | undefined) => void;
    const promise = new Promise<Record<string, string> | undefined>((done) => (resolve = done));
    this.locationsInFlight.set(key, promise);
    return {
      resolve: (locations: Record<string, string>) => resolve(locations),
      settle: () => {
        resolve(undefined); // no-op once resolved
        if (this.locationsInFlight.get(key) === promise) this.locationsInFlight.delete(key);
      },
    };
  }

  private rememberLocations(
    threadId: string,
    namespace: string,
    checkpointId: string,
    locations: Record<string, string>,
  ): void {
    const key = lineageKey(threadId, namespace, checkpointId);
    this.lineage.delete(key);
    this.lineage.set(key, locations);
    if (this.lineage.size > LINEAGE_CACHE_SIZE) {
      const oldest = this.lineage.keys().next().value;
      if (oldest !== undefined) this.lineage.delete(oldest);
    }
  }

  // ---------------------------------------------------------------- tuple assembly

  /**
   * Turns checkpoint groups into tuples: values held by other (ancestor) checkpoint items and chunks not read
   * yet are fetched in one BatchGetItem for all groups; `known` groups already in memory are used first.
   */
  private async assembleTuples(
    threadId: string,
    groups: CheckpointGroup[],
    known: CheckpointGroup[] = groups,
  ): Promise<CheckpointTuple[]> {
    if (groups.length === 0) return [];
    const pk = buildPk(this.tenantId, threadId);
    const holders = new Map<string, CheckpointItem>();
    const chunkData = new Map<string, Uint8Array>();
    for (const group of known) {
      holders.set(group.item.sk, group.item);
      for (const chunk of group.chunks) chunkData.set(chunk.sk, chunk.d);
    }
    const decoded = await Promise.all(
      groups.map(async (group) => ({
        group,
        checkpoint: (await this.decode(group.item.cp)) as Checkpoint,
      })),
    );

    const missingHolders = new Set<string>();
    for (const { group, checkpoint } of decoded) {
      for (const channel of Object.keys(checkpoint.channel_versions)) {
        const holder = holderOf(group, channel);
        if (holder === undefined) continue;
        const holderSk = buildCheckpointSk(group.namespace, holder);
        if (!holders.has(holderSk)) missingHolders.add(holderSk);
      }
    }
    if (missingHolders.size > 0) {
      const fetched = await batchGetAll(
        this.client,
        this.tableName,
        [...missingHolders].map((sk) => ({ pk, sk })),
        { ProjectionExpression: "sk, g, vals, big" },
      );
      for (const item of fetched) holders.set(String(item.sk), item as unknown as CheckpointItem);
    }

    // Chunked values not read with their owner (older checkpoints' large values): one more BatchGetItem.
    const wantedChunks: string[] = [];
    const collectChunks = (ownerSk: string, part: string, count: number) => {
      for (let n = 0; n < count; n += 1) {
        const sk = buildChunkSk(ownerSk, part, n);
        if (!chunkData.has(sk)) wantedChunks.push(sk);
      }
    };
    for (const { group, checkpoint } of decoded) {
      for (const channel of Object.keys(checkpoint.channel_versions)) {
        const holder = holderOf(group, channel);
        if (holder === undefined) continue;
        const holderItem = holders.get(buildCheckpointSk(group.namespace, holder));
        const big = holderItem?.big?.[channel];
        if (holderItem && big) collectChunks(holderItem.sk, channel, big.n);
      }
      for (const writes of group.writes) {
        writes.ws.forEach((write, position) => {
          if (write.n !== undefined) collectChunks(writes.sk, String(position), write.n);
        });
      }
    }
    if (wantedChunks.length > 0) {
      const fetched = await batchGetAll(
        this.client,
        this.tableName,
        wantedChunks.map((sk) => ({ pk, sk })),
      );
      for (const item of fetched) chunkData.set(String(item.sk), item.d as Uint8Array);
    }

    return Promise.all(
      decoded.map(async ({ group, checkpoint }) => {
        const channelValues: Record<string, unknown> = {};
        for (const [channel, version] of Object.entries(checkpoint.channel_versions)) {
          const holder = holderOf(group, channel);
          if (holder === undefined) continue;
          const holderItem = holders.get(buildCheckpointSk(group.namespace, holder));
          if (!holderItem || holderItem.g !== group.item.g) continue;
          const inline: InlineValue | undefined = holderItem.vals?.[channel];
          const big: ChunkedValue | undefined = holderItem.big?.[channel];
          if (inline && inline.ver === String(version)) {
            this.rememberSmallValue(pk, group.namespace, channel, inline);
            channelValues[channel] = await this.decode(inline);
          } else if (big && big.ver === String(version)) {
            const bytes = joinChunks(holderItem.sk, channel, big.n, chunkData);
            channelValues[channel] = await this.decode({ t: big.t, z: big.z, v: bytes });
          }
        }
        checkpoint.channel_values = channelValues;
        const pendingWrites = await this.decodeWrites([group.item, ...group.writes], chunkData);
        const parentId = group.item.p;
        if (checkpoint.v < 4 && parentId !== undefined) {
          await this.migratePendingSends(threadId, group.namespace, parentId, checkpoint);
        }
        const tuple: CheckpointTuple = {
          config: {
            configurable: {
              thread_id: threadId,
              checkpoint_ns: group.namespace,
              checkpoint_id: group.checkpointId,
            },
          },
          checkpoint,
          metadata: (await this.decode(group.item.md)) as CheckpointMetadata,
          pendingWrites: pendingWrites.map(({ taskId, channel, value }) => [
            taskId,
            channel,
            value,
          ]),
        };
        if (parentId !== undefined) {
          tuple.parentConfig = {
            configurable: {
              thread_id: threadId,
              checkpoint_ns: group.namespace,
              checkpoint_id: parentId,
            },
          };
        }
        this.rememberLocations(
          threadId,
          group.namespace,
          group.checkpointId,
          locationsOf(group.item, group.checkpointId),
        );
        return tuple;
      }),
    );
  }

  /**
   * Pending writes in LangGraph's order. Every `putWrites` call keeps its own sequence, so a retried call cannot
   * overwrite: per (task, index) the first call wins for regular writes, the last for special channels.
   */
  private async decodeWrites(
    holders: Array<{ sk: string; ws?: StoredWrite[]; w?: StoredWrite[] }>,
    chunkData: Map<string, Uint8Array>,
  ): Promise<Array<{ taskId: string; channel: string; value: unknown }>> {
    const all = holders.flatMap((holder) =>
      (holder.ws ?? holder.w ?? []).map((write, position) => ({ holder, write, position })),
    );
    all.sort((a, b) => (a.write.q < b.write.q ? -1 : a.write.q > b.write.q ? 1 : 0));
    const chosen = new Map<string, (typeof all)[number]>();
    for (const candidate of all) {
      const key = `${candidate.write.k}\u0000${candidate.write.i}`;
      if (candidate.write.i >= 0 && chosen.has(key)) continue;
      chosen.set(key, candidate);
    }
    const entries = [...chosen.values()].sort((a, b) =>
      compareWritesSortKeys(
        writesSortKey(a.write.p ?? "", a.write.k, a.write.i),
        writesSortKey(b.write.p ?? "", b.write.k, b.write.i),
      ),
    );
    return Promise.all(
      entries.map(async ({ holder, write, position }) => ({
        taskId: write.k,
        channel: write.c,
        value: await this.decode({
          t: write.t,
          z: write.z,
          v:
            write.n !== undefined
              ? joinChunks(holder.sk, String(position), write.n, chunkData)
              : (write.v as Uint8Array),
        }),
      })),
    );
  }

  /** Checkpoints before format v4 kept pending sends as the parent's TASKS writes. */
  private async migratePendingSends(
    threadId: string,
    namespace: string,
    parentId: string,
    checkpoint: Checkpoint,
  ): Promise<void> {
    const items = (await this.queryAll({
      TableName: this.tableName,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: {
        ":pk": buildPk(this.tenantId, threadId),
        ":prefix": writesPrefix(namespace, parentId),
      },
      ConsistentRead: true,
    })) as unknown as StoredItem[];
    const parent = await this.readById(threadId, namespace, parentId);
    const writes = await this.decodeWrites(
      [
        ...(parent ? [parent.item] : []),
        ...items.filter((item): item is WritesItem => item.k === ITEM_KIND.writes),
      ],
      new Map(
        items
          .filter((item): item is ChunkItem => item.k === ITEM_KIND.chunk)
          .map((c) => [c.sk, c.d]),
      ),
    );
    checkpoint.channel_values[TASKS] = writes
      .filter((w) => w.channel === TASKS)
      .map((w) => w.value);
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] =
      versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }

  private async matchesFilter(
    item: CheckpointItem,
    filter: Record<string, unknown>,
  ): Promise<boolean> {
    const metadata = (await this.decode(item.md)) as Record<string, unknown>;
    return Object.entries(filter).every(([key, value]) => isDeepStrictEqual(metadata[key], value));
  }

  private decode(value: Pick<EncodedValue, "t" | "z" | "v">): Promise<unknown> {
    return this.serde.loadsTyped(value.t, decodeBytes(value));
  }

  // ---------------------------------------------------------------- plumbing

  private async *listThreadIds(): AsyncGenerator<string> {
    let startKey: Item | undefined;
    do {
      const page = await this.query({
        TableName: this.tableName,
        IndexName: THREADS_BY_TENANT_INDEX.name,
        KeyConditionExpression: "#tenant = :tenant",
        ExpressionAttributeNames: { "#tenant": THREADS_BY_TENANT_INDEX.partitionKey },
        ExpressionAttributeValues: { ":tenant": this.tenantId },
        ScanIndexForward: false,
        ExclusiveStartKey: startKey,
      });
      for (const item of page.Items ?? []) {
        const threadId = parsePk(this.tenantId, String(item.pk));
        if (threadId !== undefined) yield threadId;
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
  }

  private query(input: QueryCommandInput) {
    return withThrottlingRetry(() => this.client.send(new QueryCommand(input)));
  }

  private queryAll(input: QueryCommandInput): Promise<Item[]> {
    return queryAll(this.client, input);
  }

  /** Time-ordered, unique per process: orders the `putWrites` calls of one task. */
  private nextSequence(): string {
    this.sequence = (this.sequence + 1) % 0x10000;
    return `${this.now().toString(16).padStart(12, "0")}${this.sequence.toString(16).padStart(4, "0")}${randomBytes(3).toString("hex")}`;
  }
}

/** Where each channel's value lives: this checkpoint's own item for its inline or chunked values, else `loc`. */
function locationsOf(
  item: Pick<CheckpointItem, "loc" | "vals" | "big">,
  checkpointId: string,
): Record<string, string> {
  const locations: Record<string, string> = { ...item.loc };
  for (const channel of [...Object.keys(item.vals ?? {}), ...Object.keys(item.big ?? {})]) {
    locations[channel] = checkpointId;
  }
  return locations;
}

function holderOf(group: CheckpointGroup, channel: string): string | undefined {
  if (group.item.vals?.[channel] || group.item.big?.[channel]) return group.checkpointId;
  return group.item.loc?.[channel];
}

function smallValueKey(pk: string, namespace: string, channel: string, version: string): string {
  return `${pk}\u0000${namespace}\u0000${channel}\u0000${version}`;
}

interface CheckpointGroup {
  item: CheckpointItem;
  namespace: string;
  checkpointId: string;
  writes: WritesItem[];
  chunks: ChunkItem[];
}

function lineageKey(threadId: string, namespace: string, checkpointId: string): string {
  return `${threadId}\u0000${namespace}\u0000${checkpointId}`;
}

async function* singleton<T>(value: T): AsyncGenerator<T> {
  yield value;
}

function positiveInteger(option: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new InvalidConfigurationError(
      option,
      `expected a positive integer, got ${String(value)}`,
    );
  }
  return value;
}
