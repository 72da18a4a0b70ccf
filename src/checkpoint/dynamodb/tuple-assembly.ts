import type { RunnableConfig } from "@langchain/core/runnables";
import {
  TASKS,
  compareWritesSortKeys,
  maxChannelVersion,
  writesSortKey,
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointTuple,
} from "@langchain/langgraph-checkpoint";
import { IncompleteCheckpointError } from "../../shared/errors";
import {
  HOLDER_ATTRIBUTES,
  chunkKeys,
  joinChunks,
  type CheckpointItem,
  type EncodedPayload,
  type InlineValue,
  type WriteRecord,
} from "../../table/checkpoint-items";
import type { CheckpointItems } from "../../table/checkpoint-items";
import type { ItemKey } from "../../table/client";
import { checkpointSortKey } from "../../table/keys";
import { nextChannelVersion } from "../versions";
import type { SaverCache } from "./cache";
import type { PayloadSerializer } from "./serializer";
import type { CheckpointGroup } from "./queries";
import { decodeLocations, decodePackParts, decodeWritesPack } from "./write-planner";

/** The part of a checkpoint item that holds values: enough to read a value a descendant refers to. */
type Holder = Pick<CheckpointItem, "sk" | "g" | "q" | "vals" | "sp">;

/** A pending write as stored, with what orders it. */
interface StoredPendingWrite {
  taskId: string;
  taskPath: string;
  sequence: string;
  channel: string;
  index: number;
  payload: EncodedPayload;
}

/**
 * Turns checkpoint groups into tuples. Values held by other (ancestor) checkpoint items, and chunks not read yet,
 * are fetched with as few BatchGetItem requests as the dependencies allow (groups already read come first). A
 * checkpoint is returned whole or not at all: a missing part is an IncompleteCheckpointError.
 */
export class TupleAssembler {
  constructor(
    private readonly payloads: PayloadSerializer,
    private readonly checkpoints: CheckpointItems,
    private readonly cache: SaverCache,
    private readonly readParent: (
      threadId: string,
      namespace: string,
      checkpointId: string,
    ) => Promise<CheckpointGroup | undefined>,
  ) {}

  async assemble(
    pk: string,
    threadId: string,
    groups: CheckpointGroup[],
    known: CheckpointGroup[] = groups,
  ): Promise<CheckpointTuple[]> {
    if (groups.length === 0) return [];
    const reads = new AssemblyReads(pk, this.checkpoints);
    for (const group of known) reads.addGroup(group);

    // Round 1: each group's own packs and its writes' chunks, when they were not read along.
    await reads.fetchChunks(groups.flatMap((group) => ownChunkKeys(pk, group)));
    const decoded = await Promise.all(
      groups.map(async (group) => {
        const own = reads.ownParts(group, threadId);
        const checkpoint = (await this.decode(own.cp)) as Checkpoint;
        const metadata = (await this.decode(own.md)) as CheckpointMetadata;
        const locations = decodeLocations(
          own.lc,
          group.checkpointId,
          Object.keys(group.item.vals ?? {}),
        );
        return { group, checkpoint, metadata, locations };
      }),
    );

    // Round 2: checkpoint items holding values of older versions.
    const holderKeys = new Set<string>();
    for (const { group, checkpoint, locations } of decoded) {
      for (const channel of Object.keys(checkpoint.channel_versions)) {
        const holder = locations[channel];
        if (holder !== undefined) holderKeys.add(checkpointSortKey(group.namespace, holder));
      }
    }
    await reads.fetchHolders(holderKeys);
    // Round 3: the packs of holders whose values did not fit inline.
    await reads.fetchChunks(
      [...holderKeys].flatMap((sk) => {
        const holder = reads.holder(sk);
        return holder?.sp && holder.q && !reads.hasPack(sk)
          ? chunkKeys(pk, sk, holder.q, holder.sp)
          : [];
      }),
    );

    return Promise.all(
      decoded.map(async ({ group, checkpoint, metadata, locations }) => {
        const channelValues: Record<string, unknown> = {};
        for (const [channel, version] of Object.entries(checkpoint.channel_versions)) {
          const holderId = locations[channel];
          if (holderId === undefined) continue;
          const value = reads.value(group, holderId, channel, String(version));
          if (!value) {
            throw new IncompleteCheckpointError(
              threadId,
              group.checkpointId,
              `the value of channel ${JSON.stringify(channel)} (in checkpoint ${holderId}) is missing`,
            );
          }
          if ("ver" in value) this.cache.rememberSmallValue(pk, group.namespace, channel, value);
          // Own properties: a channel named like an Object.prototype member is just a channel.
          Object.defineProperty(channelValues, channel, {
            value: await this.decode(value),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
        checkpoint.channel_values = channelValues;
        const writes = reads.pendingWrites(group, threadId);
        const parentId = group.item.p;
        if (checkpoint.v < 4 && parentId !== undefined) {
          await this.migratePendingSends(pk, threadId, group.namespace, parentId, checkpoint);
        }
        const tuple: CheckpointTuple = {
          config: configOf(threadId, group.namespace, group.checkpointId),
          checkpoint,
          metadata,
          pendingWrites: await Promise.all(
            orderPendingWrites(writes).map(
              async (write) =>
                [write.taskId, write.channel, await this.decode(write.payload)] as [
                  string,
                  string,
                  unknown,
                ],
            ),
          ),
        };
        if (parentId !== undefined)
          tuple.parentConfig = configOf(threadId, group.namespace, parentId);
        this.cache.rememberLocations(pk, group.item.sk, { generation: group.item.g, locations });
        this.cache.rememberCheckpoint(pk, group.item.sk, {
          generation: group.item.g,
          writes: group.item.w ?? [],
        });
        return tuple;
      }),
    );
  }

  /** Pending writes of a checkpoint's parent, in LangGraph's order (pending sends of pre-v4 checkpoints). */
  private async migratePendingSends(
    pk: string,
    threadId: string,
    namespace: string,
    parentId: string,
    checkpoint: Checkpoint,
  ): Promise<void> {
    const parent = await this.readParent(threadId, namespace, parentId);
    let sends: unknown[] = [];
    if (parent) {
      const reads = new AssemblyReads(pk, this.checkpoints);
      reads.addGroup(parent);
      await reads.fetchChunks(ownChunkKeys(pk, parent));
      const writes = orderPendingWrites(reads.pendingWrites(parent, threadId));
      sends = await Promise.all(
        writes
          .filter((write) => write.channel === TASKS)
          .map((write) => this.decode(write.payload)),
      );
    }
    checkpoint.channel_values[TASKS] = sends;
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] =
      versions.length > 0 ? maxChannelVersion(...versions) : nextChannelVersion(undefined);
  }

  private decode(value: Pick<EncodedPayload, "t" | "z" | "v">): Promise<unknown> {
    return this.payloads.decode(value);
  }
}

/** What one assembly has read: holder items, chunk bytes, and packs decoded from them. */
class AssemblyReads {
  private readonly holders = new Map<string, Holder>();
  private readonly chunks = new Map<string, Uint8Array>();
  private readonly packs = new Map<
    string,
    Map<string, { payload: EncodedPayload; version?: string }>
  >();

  constructor(
    private readonly pk: string,
    private readonly checkpoints: CheckpointItems,
  ) {}

  addGroup(group: CheckpointGroup): void {
    this.holders.set(group.item.sk, group.item);
    for (const [sk, bytes] of group.chunks) this.chunks.set(sk, bytes);
  }

  holder(sk: string): Holder | undefined {
    return this.holders.get(sk);
  }

  hasPack(sk: string): boolean {
    return this.packs.has(sk);
  }

  async fetchHolders(sortKeys: Iterable<string>): Promise<void> {
    const missing = [...sortKeys].filter((sk) => !this.holders.has(sk));
    for (const item of await this.checkpoints.readItems(this.pk, missing, HOLDER_ATTRIBUTES)) {
      this.holders.set(String(item.sk), item as Holder);
    }
  }

  async fetchChunks(keys: ItemKey[]): Promise<void> {
    const missing = keys.filter((key) => !this.chunks.has(key.sk));
    for (const [sk, bytes] of await this.checkpoints.readChunks(missing))
      this.chunks.set(sk, bytes);
  }

  /** The checkpoint body, metadata and locations of a group's own item, inline or from its pack. */
  ownParts(
    group: CheckpointGroup,
    threadId: string,
  ): {
    cp: EncodedPayload;
    md: EncodedPayload;
    lc: string | Uint8Array | EncodedPayload | undefined;
  } {
    const item = group.item;
    const pack =
      item.sp && (!item.cp || !item.md || item.lc === undefined) ? this.pack(item) : undefined;
    if (item.sp && !pack && (!item.cp || !item.md || item.lc === undefined)) {
      throw new IncompleteCheckpointError(
        threadId,
        group.checkpointId,
        "chunks of its pack are missing",
      );
    }
    const part = (name: "cp" | "md", inline: EncodedPayload | undefined): EncodedPayload => {
      const found = inline ?? pack?.get(name)?.payload;
      if (!found) {
        throw new IncompleteCheckpointError(
          threadId,
          group.checkpointId,
          `its ${name} part is missing`,
        );
      }
      return found;
    };
    // Absent locations (not inline, not packed) mean the checkpoint refers to no other and spilled nothing.
    return {
      cp: part("cp", item.cp),
      md: part("md", item.md),
      lc: item.lc ?? pack?.get("lc")?.payload,
    };
  }

  /** A channel's value at `version`, held by checkpoint `holderId` of the group's namespace. */
  value(
    group: CheckpointGroup,
    holderId: string,
    channel: string,
    version: string,
  ): InlineValue | EncodedPayload | undefined {
    const holder = this.holders.get(checkpointSortKey(group.namespace, holderId));
    // Items of another life of the thread are never read as this one's.
    if (!holder || holder.g !== group.item.g) return undefined;
    const inline = Object.hasOwn(holder.vals ?? {}, channel) ? holder.vals[channel] : undefined;
    if (inline && inline.ver === version) return inline;
    const packed = this.pack(holder)?.get(`v:${channel}`);
    return packed && packed.version === version ? packed.payload : undefined;
  }

  /** The writes of every putWrites record of a group (in its item and its writes items). */
  pendingWrites(group: CheckpointGroup, threadId: string): StoredPendingWrite[] {
    const records: WriteRecord[] = [
      ...(group.item.w ?? []),
      ...group.writeItems.flatMap((item) => item.ws ?? []),
    ];
    return records.flatMap((record) => {
      const bytes =
        record.v ??
        (record.n === undefined
          ? undefined
          : joinChunks(group.item.sk, record.q, record.n, this.chunks));
      if (!bytes) {
        throw new IncompleteCheckpointError(
          threadId,
          group.checkpointId,
          `the chunks of its pending writes ${record.q} are missing`,
        );
      }
      const { taskId, taskPath, writes } = decodeWritesPack(bytes);
      return writes.map((write) => ({ taskId, taskPath, sequence: record.q, ...write }));
    });
  }

  /** The decoded pack of a checkpoint item whose parts did not all fit inline, when its chunks were read. */
  private pack(
    holder: Holder,
  ): Map<string, { payload: EncodedPayload; version?: string }> | undefined {
    if (!holder.sp || !holder.q) return undefined;
    const cached = this.packs.get(holder.sk);
    if (cached) return cached;
    const bytes = joinChunks(holder.sk, holder.q, holder.sp, this.chunks);
    if (!bytes) return undefined;
    const parts = decodePackParts(bytes);
    this.packs.set(holder.sk, parts);
    return parts;
  }
}

/** Chunks a group needs of its own: its pack (when a part is not inline) and its writes' packs. */
function ownChunkKeys(pk: string, group: CheckpointGroup): ItemKey[] {
  const keys: ItemKey[] = [];
  const item = group.item;
  if (item.sp && item.q && (!item.cp || !item.md || item.lc === undefined)) {
    keys.push(...chunkKeys(pk, item.sk, item.q, item.sp));
  }
  for (const record of [...(item.w ?? []), ...group.writeItems.flatMap((w) => w.ws ?? [])]) {
    if (record.n !== undefined) keys.push(...chunkKeys(pk, item.sk, record.q, record.n));
  }
  return keys;
}

/**
 * Pending writes in LangGraph's order. Every putWrites call has its own sequence, so a retried call cannot
 * overwrite: per (task, index) the first call wins for regular writes, the last for special channels.
 */
function orderPendingWrites(writes: StoredPendingWrite[]): StoredPendingWrite[] {
  const bySequence = [...writes].sort((a, b) =>
    a.sequence < b.sequence ? -1 : a.sequence > b.sequence ? 1 : 0,
  );
  const chosen = new Map<string, StoredPendingWrite>();
  for (const write of bySequence) {
    const key = `${write.taskId}\u0000${write.index}`;
    if (write.index >= 0 && chosen.has(key)) continue;
    chosen.set(key, write);
  }
  return [...chosen.values()].sort((a, b) =>
    compareWritesSortKeys(
      writesSortKey(a.taskPath, a.taskId, a.index),
      writesSortKey(b.taskPath, b.taskId, b.index),
    ),
  );
}

function configOf(threadId: string, namespace: string, checkpointId: string): RunnableConfig {
  return {
    configurable: { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: checkpointId },
  };
}
