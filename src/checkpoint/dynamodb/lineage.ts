import type { ChannelVersions, Checkpoint } from "@langchain/langgraph-checkpoint";
import {
  INHERITANCE_ATTRIBUTES,
  chunkKeys,
  joinChunks,
  type EncodedPayload,
  type WriteRecord,
} from "../../table/checkpoint-items";
import type { TableContext } from "../../table/context";
import { checkpointSortKey } from "../../table/keys";
import { MAX_COPIED_BYTES, type SaverCache } from "./cache";
import { checkpointIdMintedAt } from "./checkpoint-ids";
import { decodeLocations, decodePackParts, type NewValue } from "./write-planner";

/**
 * What a new checkpoint refers to: its parent's locations (from the cache, or one read), the small unchanged
 * values it copies instead, and the writes already stored in its item when a put rewrites it.
 */
export class CheckpointLineage {
  constructor(
    private readonly table: TableContext,
    private readonly cache: SaverCache,
    /** When the saver was created (epoch ms): ids minted then or later came from its own graph runs. */
    private readonly createdAt: number,
  ) {}

  /** The locations of a parent of this life of the thread, or undefined when it is not part of it. */
  async parentLocations(
    pk: string,
    namespace: string,
    parentId: string,
    generation: string,
  ): Promise<Record<string, string> | undefined> {
    const parentSk = checkpointSortKey(namespace, parentId);
    const cached = this.cache.locationsOf(pk, parentSk);
    if (cached) return cached.generation === generation ? cached.locations : undefined;
    const item = await this.table.checkpoints.readItem(pk, parentSk, INHERITANCE_ATTRIBUTES);
    if (!item || item.g !== generation) return undefined;
    let stored: string | Uint8Array | EncodedPayload | undefined = item.lc;
    if (stored === undefined && item.sp && item.q) {
      const chunks = await this.table.checkpoints.readChunks(
        chunkKeys(pk, parentSk, item.q, item.sp),
      );
      const bytes = joinChunks(parentSk, item.q, item.sp, chunks);
      stored = bytes && decodePackParts(bytes).get("lc")?.payload;
    }
    const locations = decodeLocations(stored, parentId, Object.keys(item.vals ?? {}));
    this.cache.rememberLocations(pk, parentSk, { generation, locations });
    return locations;
  }

  /**
   * Unchanged channels keep pointing at the ancestors that hold their values, except small ones this instance
   * holds already: those are copied into the new checkpoint (added to `values`), so reading it (a resume) needs
   * no fetch of the ancestor item.
   */
  inheritUnchanged(
    pk: string,
    namespace: string,
    checkpoint: Checkpoint,
    newVersions: ChannelVersions,
    parentLocations: Record<string, string>,
    values: NewValue[],
  ): Record<string, string> {
    const inherited: Record<string, string> = {};
    // Every channel with a new version, with a value or not: a channel emptied at this step has none to inherit.
    const changedSet = new Set(Object.keys(newVersions ?? {}));
    let copiedBytes = 0;
    for (const [channel, version] of Object.entries(checkpoint.channel_versions ?? {})) {
      const holder = parentLocations[channel];
      if (changedSet.has(channel) || holder === undefined) continue;
      const small = this.cache.smallValue(pk, namespace, channel, String(version));
      if (small && copiedBytes + small.v.byteLength <= MAX_COPIED_BYTES) {
        copiedBytes += small.v.byteLength;
        values.push({
          channel,
          version: small.ver,
          payload: { t: small.t, z: small.z, v: small.v },
        });
      } else {
        inherited[channel] = holder;
      }
    }
    return inherited;
  }

  /**
   * The putWrites records stored inside a checkpoint's item, which a rewrite of that checkpoint must keep.
   * Known items answer from the cache. Otherwise a read, unless the id is one a graph run of this instance just
   * minted: LangGraph mints every new checkpoint id as a UUIDv6 at its step, after reading the thread, so an id
   * minted after this instance existed, on a thread it has read or written, names no stored checkpoint it has
   * not seen. Re-puts (LangGraph re-puts only ids it read) and foreign ids pay the read.
   */
  async storedWritesOf(
    pk: string,
    sk: string,
    checkpointId: string,
    generation: string,
  ): Promise<WriteRecord[]> {
    const known = this.cache.knownCheckpoint(pk, sk);
    if (known) return known.generation === generation ? (known.writes ?? []) : [];
    const mintedAt = checkpointIdMintedAt(checkpointId);
    // At or after: uuid6 and the saver's clock both count whole milliseconds, so an id LangGraph mints in the
    // millisecond the saver was created (a run's first checkpoint, when the saver is made for the run) reads the
    // same as that moment. Strictly later would read back such a first checkpoint one run in ten.
    if (mintedAt !== undefined && mintedAt >= this.createdAt && this.cache.knowsThread(pk))
      return [];
    const item = await this.table.checkpoints.readItem(pk, sk, ["sk", "g", "w"]);
    return item && item.g === generation ? ((item.w as WriteRecord[] | undefined) ?? []) : [];
  }
}
