import { compareCodePoints } from "../../shared/order";
import {
  ITEM_KIND,
  type CheckpointFamilyItem,
  type CheckpointItem,
  type WritesItem,
} from "../../table/checkpoint-items";
import type { Item } from "../../table/client";
import type { TableContext } from "../../table/context";
import {
  checkpointSortKey,
  parseSortKey,
  threadPartitionKey,
  THREAD_RECORD_SK,
} from "../../table/keys";
import type { ThreadLife } from "../../table/thread-record-cache";

/** A checkpoint item with the items of its own read along with it (writes items, chunks). */
export interface CheckpointGroup {
  item: CheckpointItem;
  namespace: string;
  checkpointId: string;
  writeItems: WritesItem[];
  /** Chunk bytes by sort key: the checkpoint's pack and its writes' packs, as far as they were read. */
  chunks: Map<string, Uint8Array>;
}

/**
 * What the saver reads, as few requests as possible: the latest checkpoint of a namespace (with the thread
 * record, for the root namespace, in the same Query), one checkpoint by id, or every checkpoint of a thread.
 * Only items of the thread's live generation are returned: an expired or deleted thread reads as absent.
 */
export class CheckpointQueries {
  constructor(
    private readonly table: TableContext,
    private readonly tenantId: string,
  ) {}

  pk(threadId: string): string {
    return threadPartitionKey(this.tenantId, threadId);
  }

  async latest(threadId: string, namespace: string): Promise<CheckpointGroup | undefined> {
    const pk = this.pk(threadId);
    const root = namespace === "";
    // The root Query starts at the thread record; a namespace's does not reach it, so it is read alongside.
    const lifeRead = root ? undefined : this.table.threads.readLife(this.tenantId, threadId);
    let life: ThreadLife | undefined;
    let lifeKnown = false;
    const pending: Item[] = [];
    for await (const page of this.table.checkpoints.latestPages(pk, namespace)) {
      for (const item of page) {
        if (item.sk === THREAD_RECORD_SK) {
          life = this.table.threads.observe(pk, item);
          lifeKnown = true;
          if (!life) return undefined;
          continue;
        }
        if (root && !lifeKnown) return this.absent(pk);
        if (item.k !== ITEM_KIND.checkpoint) {
          pending.push(item);
          continue;
        }
        if (!lifeKnown) {
          life = await lifeRead;
          lifeKnown = true;
        }
        if (!life) return undefined;
        if (item.g !== life.generation) continue;
        return groupItems([item, ...pending], life.generation)[0];
      }
      if (root && !lifeKnown) return this.absent(pk);
    }
    return undefined;
  }

  async byId(
    threadId: string,
    namespace: string,
    checkpointId: string,
  ): Promise<CheckpointGroup | undefined> {
    const pk = this.pk(threadId);
    const [life, items] = await Promise.all([
      this.table.threads.readLife(this.tenantId, threadId),
      this.table.checkpoints.readCheckpoint(pk, checkpointSortKey(namespace, checkpointId)),
    ]);
    return life ? groupItems(items, life.generation)[0] : undefined;
  }

  /** Every live checkpoint of a thread (one namespace, or all), newest first. */
  async all(threadId: string, namespace: string | undefined): Promise<CheckpointGroup[]> {
    const pk = this.pk(threadId);
    const [life, items] = await Promise.all([
      this.table.threads.readLife(this.tenantId, threadId),
      this.table.checkpoints.readNamespace(pk, namespace),
    ]);
    if (!life) return [];
    return groupItems(items, life.generation).sort(
      (a, b) =>
        compareCodePoints(b.checkpointId, a.checkpointId) ||
        compareCodePoints(b.namespace, a.namespace),
    );
  }

  /** The thread's life, read now (not from the cache): whether it still exists, and in which generation. */
  async confirmLife(threadId: string): Promise<ThreadLife | undefined> {
    const pk = this.pk(threadId);
    const record = await this.table.client.get({ pk, sk: THREAD_RECORD_SK });
    return this.table.threads.observe(pk, record);
  }

  /** The tenant's thread ids, newest thread first. */
  threadIds(): AsyncGenerator<string> {
    return this.table.threads.threadIds(this.tenantId);
  }

  /** A read found no thread record: the thread is absent (and forgotten by the cache). */
  private absent(pk: string): undefined {
    this.table.threads.observe(pk, undefined);
    return undefined;
  }
}

/**
 * Groups items of the given generation by checkpoint; checkpoints without their checkpoint item (writes stored
 * before a put that never landed) are left out.
 */
export function groupItems(items: Item[], generation: string): CheckpointGroup[] {
  const groups = new Map<
    string,
    {
      item?: CheckpointItem;
      related: CheckpointFamilyItem[];
      namespace: string;
      checkpointId: string;
    }
  >();
  for (const raw of items) {
    if (raw.sk === THREAD_RECORD_SK) continue;
    const item = raw as CheckpointFamilyItem;
    if (item.g !== generation) continue;
    const parsed = parseSortKey(item.sk);
    if (parsed.kind === "record") continue;
    const entry = groups.get(parsed.checkpointSk) ?? {
      related: [],
      namespace: parsed.namespace,
      checkpointId: parsed.checkpointId,
    };
    if (parsed.kind === "checkpoint" && item.k === ITEM_KIND.checkpoint) entry.item = item;
    else entry.related.push(item);
    groups.set(parsed.checkpointSk, entry);
  }
  const result: CheckpointGroup[] = [];
  for (const entry of groups.values()) {
    if (!entry.item) continue;
    const chunks = new Map<string, Uint8Array>();
    const writeItems: WritesItem[] = [];
    for (const other of entry.related) {
      if (other.k === ITEM_KIND.chunk) chunks.set(other.sk, other.d);
      else if (other.k === ITEM_KIND.writes) writeItems.push(other);
    }
    result.push({
      item: entry.item,
      namespace: entry.namespace,
      checkpointId: entry.checkpointId,
      writeItems,
      chunks,
    });
  }
  return result;
}
