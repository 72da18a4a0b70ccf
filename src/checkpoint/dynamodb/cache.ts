import type { InlineValue, WriteRecord } from "../../table/checkpoint-items";

/** Checkpoints whose locations are kept (a child needs its parent's). */
const MAX_LOCATIONS = 128;
/** Checkpoints known to exist, with the writes stored inside their items. */
const MAX_KNOWN_CHECKPOINTS = 10_000;
/** Small values kept to copy into child checkpoints. */
const MAX_SMALL_VALUES = 10_000;
/** Values up to this size are copied into a child checkpoint, at most MAX_COPIED_BYTES of them per checkpoint. */
export const MAX_COPIED_VALUE_BYTES = 256;
export const MAX_COPIED_BYTES = 1024;

/** What one saver instance knows of a checkpoint item it wrote or read. */
export interface KnownCheckpoint {
  generation: string;
  /** The putWrites records stored inside the item (a rewrite of the checkpoint keeps them), when known. */
  writes?: WriteRecord[];
}

export interface CachedLocations {
  generation: string;
  locations: Record<string, string>;
}

/**
 * Everything a saver instance remembers between calls, bounded: what spares a request (a parent's locations,
 * checkpoints known to exist) or a read on resume (small values copied into children). Keys always include the
 * partition key, which starts with the tenant.
 */
export class SaverCache {
  private readonly locations = new Map<string, CachedLocations>();
  private readonly known = new Map<string, KnownCheckpoint>();
  private readonly smallValues = new Map<string, InlineValue>();
  /** Threads whose checkpoints this instance has read or written. */
  private readonly threads = new Set<string>();
  /** Puts in progress in this instance: a child waits for its parent's to be stored. */
  private readonly puts = new Map<string, Promise<void>>();

  locationsOf(pk: string, checkpointSk: string): CachedLocations | undefined {
    return this.locations.get(key(pk, checkpointSk));
  }

  rememberLocations(pk: string, checkpointSk: string, entry: CachedLocations): void {
    setBounded(this.locations, key(pk, checkpointSk), entry, MAX_LOCATIONS);
  }

  knownCheckpoint(pk: string, checkpointSk: string): KnownCheckpoint | undefined {
    return this.known.get(key(pk, checkpointSk));
  }

  rememberCheckpoint(pk: string, checkpointSk: string, entry: KnownCheckpoint): void {
    setBounded(this.known, key(pk, checkpointSk), entry, MAX_KNOWN_CHECKPOINTS);
  }

  smallValue(
    pk: string,
    namespace: string,
    channel: string,
    version: string,
  ): InlineValue | undefined {
    return this.smallValues.get(valueKey(pk, namespace, channel, version));
  }

  rememberSmallValue(pk: string, namespace: string, channel: string, value: InlineValue): void {
    if (value.v.byteLength > MAX_COPIED_VALUE_BYTES) return;
    setBounded(
      this.smallValues,
      valueKey(pk, namespace, channel, value.ver),
      value,
      MAX_SMALL_VALUES,
    );
  }

  /** This instance read or wrote the thread's checkpoints: it saw what was there at that moment. */
  rememberThread(pk: string): void {
    if (this.threads.size >= MAX_KNOWN_CHECKPOINTS) this.threads.clear();
    this.threads.add(pk);
  }

  knowsThread(pk: string): boolean {
    return this.threads.has(pk);
  }

  /** Registers a put in progress; the returned function marks it finished (stored or failed). */
  beginPut(pk: string, checkpointSk: string): () => void {
    const entry = key(pk, checkpointSk);
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    this.puts.set(entry, done);
    return () => {
      finish();
      if (this.puts.get(entry) === done) this.puts.delete(entry);
    };
  }

  /** Waits for a put of this checkpoint in progress in this instance, if any. */
  async putSettled(pk: string, checkpointSk: string): Promise<void> {
    await this.puts.get(key(pk, checkpointSk));
  }

  /** Forgets checkpoints that were deleted (a rollback): their locations, and that they exist. */
  forgetCheckpoints(pk: string, checkpointSks: Iterable<string>): void {
    for (const checkpointSk of checkpointSks) {
      this.locations.delete(key(pk, checkpointSk));
      this.known.delete(key(pk, checkpointSk));
    }
  }

  /** Forgets a thread (it was deleted). */
  forgetThread(pk: string): void {
    this.threads.delete(pk);
    const prefix = `${pk}\u0000`;
    for (const map of [this.locations, this.known, this.smallValues]) {
      for (const entry of map.keys()) if (entry.startsWith(prefix)) map.delete(entry);
    }
  }
}

function key(pk: string, sk: string): string {
  return `${pk}\u0000${sk}`;
}

function valueKey(pk: string, namespace: string, channel: string, version: string): string {
  return `${pk}\u0000${namespace}\u0000${channel}\u0000${version}`;
}

function setBounded<V>(map: Map<string, V>, entry: string, value: V, limit: number): void {
  map.delete(entry);
  map.set(entry, value);
  if (map.size > limit) {
    const oldest = map.keys().next().value;
    if (oldest !== undefined) map.delete(oldest);
  }
}
