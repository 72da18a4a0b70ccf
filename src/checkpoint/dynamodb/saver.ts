import { randomBytes } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  WRITES_IDX_MAP,
  getCheckpointId,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
} from "@langchain/langgraph-checkpoint";
import {
  CheckpointStoreError,
  CheckpointTooLargeError,
  IncompleteCheckpointError,
  InvalidIdentifierError,
} from "../../shared/errors";
import { assertIdentifier } from "../../shared/identifiers";
import { compareCodePoints } from "../../shared/order";
import type { CheckpointRollback } from "../../shared/checkpoint-rollback";
import type { EmptyThreadHint } from "../../shared/empty-thread-hint";
import { BOUND_TENANT, type TenantBound } from "../../shared/tenant-scope";
import { isThreadStatus, THREAD_STATUSES, type ThreadStatus } from "../../shared/threads";
import type { TableContext } from "../../table/context";
import {
  assertCheckpointId,
  assertCheckpointKey,
  assertNamespace,
  assertThreadId,
  checkpointSortKey,
} from "../../table/keys";
import { nextChannelVersion } from "../versions";
import { SaverCache } from "./cache";
import { GroupCommit } from "./group-commit";
import { CheckpointLineage } from "./lineage";
import { PayloadSerializer } from "./serializer";
import { resolveSaverOptions, type DynamoDBSaverOptions } from "./options";
import { CheckpointQueries, type CheckpointGroup } from "./queries";
import { planRollback } from "./rollback-plan";
import { TupleAssembler } from "./tuple-assembly";
import { planCheckpoint, planWriteRecord } from "./write-planner";

/**
 * A LangGraph checkpoint saver on one DynamoDB table, bound to one tenant. This class orchestrates; each part
 * does one job: options.ts checks the options, serializer.ts turns values into payloads, lineage.ts finds what a
 * new checkpoint refers to, write-planner.ts decides what items a write becomes, group-commit.ts batches them,
 * queries.ts reads them, tuple-assembly.ts turns them back into tuples, cache.ts remembers what spares requests,
 * and the table layer (src/table) owns the keys, the thread record and every request.
 *
 * - Delta storage: a checkpoint item holds the checkpoint without channel values plus the values new in it;
 *   unchanged channels point at the ancestor item holding their version.
 * - Crash safety: an item is written only after everything it refers to (its chunks, its parent) is stored,
 *   and a deletion removes the thread record first, so a process dying at any moment leaves every thread whole.
 * - Reads are consistent; the latest root checkpoint with its pending writes and the thread record is one Query.
 * - Threads expire whole: an expired thread reads as absent and its items are never referred to again.
 */
export class DynamoDBSaver
  extends BaseCheckpointSaver
  implements TenantBound, CheckpointRollback, EmptyThreadHint
{
  readonly tenantId: string;
  readonly table: TableContext;
  readonly maxCheckpointBytes: number;
  readonly maxWritesBytes: number;
  private readonly cache = new SaverCache();
  private readonly payloads: PayloadSerializer;
  private readonly lineage: CheckpointLineage;
  private readonly queries: CheckpointQueries;
  private readonly assembler: TupleAssembler;
  private readonly commits: GroupCommit;
  private sequence = 0;

  constructor(options: DynamoDBSaverOptions) {
    const resolved = resolveSaverOptions(options);
    super(options.serde);
    this.tenantId = resolved.tenantId;
    this.table = resolved.table;
    this.maxCheckpointBytes = resolved.maxCheckpointBytes;
    this.maxWritesBytes = resolved.maxWritesBytes;
    this.payloads = new PayloadSerializer(this.serde, resolved.compression);
    this.lineage = new CheckpointLineage(this.table, this.cache, this.table.now());
    this.queries = new CheckpointQueries(this.table, this.tenantId);
    this.assembler = new TupleAssembler(
      this.payloads,
      this.table.checkpoints,
      this.cache,
      (thread, ns, id) => this.queries.byId(thread, ns, id),
    );
    this.commits = new GroupCommit(this.table.checkpoints, this.cache);
  }

  /** Keys are this tenant's: the handler passes the client's thread ids as they are. */
  get [BOUND_TENANT](): string {
    return this.tenantId;
  }

  get tableName(): string {
    return this.table.tableName;
  }

  get ttlSeconds(): number {
    return this.table.expiry.ttlSeconds;
  }

  // LangGraph types channel versions as numbers by default but compares them as strings or numbers alike;
  // string versions keep forks apart (see versions.ts), the cast keeps the saver assignable where graphs expect one.
  override getNextVersion(current: number | undefined): number {
    return nextChannelVersion(current) as unknown as number;
  }

  // ---------------------------------------------------------------- reads

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const rawThreadId: unknown = config.configurable?.thread_id;
    if (rawThreadId === undefined || rawThreadId === null) return undefined;
    const threadId = assertThreadId(rawThreadId);
    const namespace = assertNamespace(config.configurable?.checkpoint_ns ?? "");
    const checkpointId = getCheckpointId(config) || undefined;
    if (checkpointId !== undefined) assertCheckpointId(checkpointId);
    assertCheckpointKey(namespace, checkpointId ?? "");

    const group =
      checkpointId === undefined
        ? await this.queries.latest(threadId, namespace)
        : await this.queries.byId(threadId, namespace, checkpointId);
    if (checkpointId === undefined) this.cache.rememberThread(this.queries.pk(threadId));
    if (!group) return undefined;
    const tuples = await this.assembleOrAbsent(threadId, [group]);
    return tuples?.[0];
  }

  /**
   * The runtime's word that `threadId` has no checkpoint (a run created it and holds it): this instance knows
   * the thread as if it had read it, so the run's first checkpoints are written without reading what they
   * replace (there is nothing). See EmptyThreadHint.
   */
  assumeEmptyThread(threadId: string): void {
    this.cache.rememberThread(this.queries.pk(assertThreadId(threadId)));
  }

  override async *list(
    config: RunnableConfig,
    options: CheckpointListOptions = {},
  ): AsyncGenerator<CheckpointTuple> {
    const { filter } = options;
    let remaining = options.limit ?? Number.POSITIVE_INFINITY;
    const rawBefore = options.before ? getCheckpointId(options.before) || undefined : undefined;
    const beforeId = rawBefore === undefined ? undefined : assertCheckpointId(rawBefore);
    const rawNamespace: unknown = config.configurable?.checkpoint_ns;
    const namespace = rawNamespace === undefined ? undefined : assertNamespace(rawNamespace);
    const rawThreadId: unknown = config.configurable?.thread_id;
    const checkpointId = getCheckpointId(config) || undefined;
    if (checkpointId !== undefined) assertCheckpointId(checkpointId);
    const threadIds =
      rawThreadId === undefined || rawThreadId === null
        ? this.queries.threadIds()
        : singleton(assertThreadId(rawThreadId));

    for await (const threadId of threadIds) {
      if (remaining <= 0) return;
      const groups = await this.queries.all(threadId, namespace);
      if (namespace === undefined && checkpointId === undefined) {
        this.cache.rememberThread(this.queries.pk(threadId));
      }
      const selected: CheckpointGroup[] = [];
      for (const group of groups) {
        if (remaining - selected.length <= 0) break;
        // A checkpoint id in the config narrows the listing to that checkpoint (as LangGraph's savers do).
        if (checkpointId !== undefined && group.checkpointId !== checkpointId) continue;
        if (beforeId !== undefined && compareCodePoints(group.checkpointId, beforeId) >= 0)
          continue;
        if (filter && !(await this.matchesFilter(threadId, group, groups, filter))) continue;
        selected.push(group);
      }
      const tuples = await this.assembleOrAbsent(threadId, selected, groups);
      if (!tuples) continue;
      remaining -= tuples.length;
      yield* tuples;
    }
  }

  // ---------------------------------------------------------------- writes

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const rawThreadId: unknown = config.configurable?.thread_id;
    if (rawThreadId === undefined || rawThreadId === null) {
      throw new Error(
        'Failed to put checkpoint. The passed RunnableConfig is missing a required "thread_id" field in its "configurable" property.',
      );
    }
    const threadId = assertThreadId(rawThreadId);
    const namespace = assertNamespace(config.configurable?.checkpoint_ns ?? "");
    const checkpointId = assertCheckpointId(checkpoint?.id);
    assertCheckpointKey(namespace, checkpointId);
    const rawParentId: unknown = config.configurable?.checkpoint_id;
    const parentId = rawParentId ? assertCheckpointId(rawParentId) : undefined;
    if (parentId !== undefined) assertCheckpointKey(namespace, parentId);

    // Serialize everything before the first request: an oversized checkpoint is refused with nothing written.
    const { channel_values: rawValues, ...body } = checkpoint;
    const channelValues = (rawValues ?? {}) as Record<string, unknown>;
    const cp = await this.payloads.encode({ ...body, channel_values: {} });
    const md = await this.payloads.encode(metadata);
    const changed = Object.keys(newVersions ?? {}).filter((channel) =>
      Object.hasOwn(channelValues, channel),
    );
    const newValues = await this.payloads.encodeValues(channelValues, changed, newVersions);
    this.assertCheckpointSize(cp.raw + md.raw + newValues.raw);

    const pk = this.queries.pk(threadId);
    const sk = checkpointSortKey(namespace, checkpointId);
    const finish = this.cache.beginPut(pk, sk);
    this.commits.beginPut(pk);
    try {
      // A child refers to its parent's values: the parent's item must be stored before the child's.
      if (parentId !== undefined)
        await this.cache.putSettled(pk, checkpointSortKey(namespace, parentId));
      const life = await this.table.threads.ensureWritable(this.tenantId, threadId);
      let values = newValues.values;
      let inherited: Record<string, string> = {};
      if (parentId !== undefined) {
        const parentLocations = await this.lineage.parentLocations(
          pk,
          namespace,
          parentId,
          life.generation,
        );
        if (parentLocations === undefined) {
          // The parent is not part of this life of the thread (it expired, or was never stored): refer to
          // nothing, store every value the checkpoint has.
          const all = Object.keys(checkpoint.channel_versions ?? {}).filter((channel) =>
            Object.hasOwn(channelValues, channel),
          );
          const full = await this.payloads.encodeValues(
            channelValues,
            all,
            checkpoint.channel_versions,
          );
          this.assertCheckpointSize(cp.raw + md.raw + full.raw);
          values = full.values;
        } else {
          inherited = this.lineage.inheritUnchanged(
            pk,
            namespace,
            checkpoint,
            newVersions,
            parentLocations,
            values,
          );
        }
      }
      const plan = planCheckpoint({
        pk,
        sk,
        checkpointId,
        generation: life.generation,
        sequence: this.nextSequence(),
        parentId,
        checkpoint: cp.payload,
        metadata: md.payload,
        inherited,
        values,
        carriedWrites: await this.lineage.storedWritesOf(pk, sk, checkpointId, life.generation),
        compression: this.payloads.compression,
      });
      // Chunks first, then the checkpoint item that refers to them: the commit point.
      if (plan.chunks.length > 0) await this.table.checkpoints.write(plan.chunks);
      await this.commits.submitCheckpoint(plan.item);
      this.cache.rememberThread(pk);
      this.cache.rememberLocations(pk, sk, {
        generation: life.generation,
        locations: plan.locations,
      });
      this.cache.rememberCheckpoint(pk, sk, {
        generation: life.generation,
        writes: plan.item.w ?? [],
      });
      for (const value of values) {
        const inline = plan.item.vals[value.channel];
        if (inline) this.cache.rememberSmallValue(pk, namespace, value.channel, inline);
      }
    } finally {
      this.commits.endPut(pk);
      finish();
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
    const rawThreadId: unknown = config.configurable?.thread_id;
    const rawCheckpointId: unknown = config.configurable?.checkpoint_id;
    if (rawThreadId === undefined || rawThreadId === null) {
      throw new Error(
        'Failed to put writes. The passed RunnableConfig is missing a required "thread_id" field in its "configurable" property',
      );
    }
    if (rawCheckpointId === undefined || rawCheckpointId === null) {
      throw new Error(
        'Failed to put writes. The passed RunnableConfig is missing a required "checkpoint_id" field in its "configurable" property.',
      );
    }
    const threadId = assertThreadId(rawThreadId);
    const checkpointId = assertCheckpointId(rawCheckpointId);
    const namespace = assertNamespace(config.configurable?.checkpoint_ns ?? "");
    assertCheckpointKey(namespace, checkpointId);
    assertIdentifier("task id", taskId);
    if (typeof taskPath !== "string") {
      throw new InvalidIdentifierError("task path", `expected a string, got a ${typeof taskPath}`);
    }
    if (!Array.isArray(writes)) {
      throw new CheckpointStoreError(`Invalid writes: expected an array, got a ${typeof writes}`);
    }
    if (writes.length === 0) return;

    const pk = this.queries.pk(threadId);
    const checkpointSk = checkpointSortKey(namespace, checkpointId);
    // Announced before the first await: a put of this checkpoint now waits for this call's record.
    const handedOver = this.commits.announceWrites(pk, checkpointSk);
    let stored: Promise<void>;
    try {
      let raw = 0;
      const payloads = await Promise.all(
        writes.map(async (write, position) => {
          const channel: unknown = Array.isArray(write) ? write[0] : undefined;
          if (typeof channel !== "string") {
            throw new InvalidIdentifierError(`writes[${position}] channel`, "expected a string");
          }
          const encoded = await this.payloads.encode(write[1]);
          raw += encoded.raw;
          return { channel, index: WRITES_IDX_MAP[channel] ?? position, payload: encoded.payload };
        }),
      );
      if (raw > this.maxWritesBytes) {
        throw new CheckpointTooLargeError(this.maxWritesBytes, raw, "putWrites call");
      }
      const life = await this.table.threads.ensureWritable(this.tenantId, threadId);
      const { record, chunks } = planWriteRecord({
        pk,
        checkpointSk,
        generation: life.generation,
        sequence: this.nextSequence(),
        taskId,
        taskPath,
        writes: payloads,
      });
      // Chunks first: the record that refers to them is the commit point of the call.
      if (chunks.length > 0) await this.table.checkpoints.write(chunks);
      stored = this.commits.submitWrites({
        kind: "writes",
        pk,
        checkpointSk,
        generation: life.generation,
        record,
      });
    } finally {
      handedOver();
    }
    await stored;
  }

  /** Deletes the thread: absent from the first request on, its items removed after. */
  override async deleteThread(threadId: string): Promise<void> {
    assertThreadId(threadId);
    const pk = this.queries.pk(threadId);
    this.commits.discardHeld(
      pk,
      new CheckpointStoreError(`Thread ${threadId} was deleted before these writes were stored`),
    );
    this.cache.forgetThread(pk);
    await this.table.threads.remove(this.tenantId, threadId);
  }

  /**
   * Takes the thread back to `checkpointId` (see CheckpointRollback): deletes every checkpoint newer than it in
   * every namespace, with its pending writes and chunks, or every checkpoint for `undefined`. The thread record,
   * its run records and events stay, and so does the thread's expiry. Values live in the checkpoint items that
   * introduced them and only newer checkpoints refer to them, so nothing older loses a value.
   *
   * One keys-only Query, then one BatchWriteItem step per checkpoint of the longest namespace, plus one (see
   * rollback-plan.ts for the order). A process dying at any request leaves every remaining checkpoint whole and
   * the latest one of each namespace one that was there before; calling it again finishes the job. Call it only
   * while nothing writes to the thread (its lease held): a put landing meanwhile is kept.
   */
  async deleteCheckpointsAfter(threadId: string, checkpointId: string | undefined): Promise<void> {
    assertThreadId(threadId);
    const afterId = checkpointId === undefined ? undefined : assertCheckpointId(checkpointId);
    const pk = this.queries.pk(threadId);
    const plan = planRollback(await this.table.checkpoints.readSortKeys(pk), afterId);
    // A put in this instance must not take a deleted parent's locations from the cache.
    this.cache.forgetCheckpoints(pk, plan.checkpoints);
    for (const step of plan.steps) await this.table.checkpoints.remove(pk, step);
    this.cache.forgetCheckpoints(pk, plan.checkpoints);
  }

  /**
   * Sets the thread's operational status (and next node, for paused threads) on its record, renewing its expiry.
   * `config` needs only `thread_id`.
   */
  async markStatus(config: RunnableConfig, status: ThreadStatus, nextNode?: string): Promise<void> {
    const threadId = assertThreadId(config.configurable?.thread_id);
    await this.table.threads.setStatus(this.tenantId, threadId, assertStatus(status), nextNode);
  }

  // ---------------------------------------------------------------- plumbing

  /**
   * Assembles tuples; when a part is missing because the thread was deleted (or expired) meanwhile, the thread is
   * absent (undefined) rather than half-read. A missing part of a live thread is an error.
   */
  private async assembleOrAbsent(
    threadId: string,
    groups: CheckpointGroup[],
    known: CheckpointGroup[] = groups,
  ): Promise<CheckpointTuple[] | undefined> {
    try {
      return await this.assembler.assemble(this.queries.pk(threadId), threadId, groups, known);
    } catch (error) {
      if (!(error instanceof IncompleteCheckpointError)) throw error;
      const life = await this.queries.confirmLife(threadId);
      if (!life || groups.some((group) => group.item.g !== life.generation)) return undefined;
      throw error;
    }
  }

  private async matchesFilter(
    threadId: string,
    group: CheckpointGroup,
    known: CheckpointGroup[],
    filter: Record<string, unknown>,
  ): Promise<boolean> {
    const metadata = group.item.md
      ? ((await this.payloads.decode(group.item.md)) as Record<string, unknown>)
      : ((await this.assembleOrAbsent(threadId, [group], known))?.[0]?.metadata as
          Record<string, unknown> | undefined);
    if (!metadata) return false;
    return Object.entries(filter).every(([key, value]) => isDeepStrictEqual(metadata[key], value));
  }

  private assertCheckpointSize(bytes: number): void {
    if (bytes > this.maxCheckpointBytes)
      throw new CheckpointTooLargeError(this.maxCheckpointBytes, bytes);
  }

  /** Time-ordered, unique: orders the writes of one task across calls, and names each write's chunks. */
  private nextSequence(): string {
    this.sequence = (this.sequence + 1) % 0x10000;
    return `${Date.now().toString(16).padStart(12, "0")}${this.sequence.toString(16).padStart(4, "0")}${randomBytes(3).toString("hex")}`;
  }
}

function assertStatus(status: unknown): ThreadStatus {
  if (isThreadStatus(status)) return status;
  throw new InvalidIdentifierError(
    "status",
    `expected one of ${THREAD_STATUSES.join(", ")}, got ${JSON.stringify(status)}`,
  );
}

async function* singleton<T>(value: T): AsyncGenerator<T> {
  yield value;
}
