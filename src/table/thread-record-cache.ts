import type { Item } from "./client";
import { THREAD_ATTRIBUTES as A } from "./definition";
import { isExpired } from "./expiry";

/** What a writer needs of a live thread: the generation its items carry, and until when the thread lives. */
export interface ThreadLife {
  generation: string;
  /** Epoch seconds. */
  expiry: number;
}

interface CachedLife extends ThreadLife {
  /** Epoch milliseconds at which this container last read or wrote the record. */
  confirmedAt: number;
}

// How long what this container last saw of a record is trusted: another process may delete the thread, and a
// write must not go out under a generation that no longer has a record. (The HTTP runtime's lease excludes
// that race; long-lived processes, such as a dev server, rely on this bound.)
const CONFIRMATION_MS = 10_000;
const MAX_CACHED_LIVES = 10_000;

/**
 * What this container last saw of each thread record (ThreadRecords' one cache, shared by the saver and the
 * runtime): the life a write goes out under, and the whole record a rule decides on first.
 */
export class ThreadRecordCache {
  private readonly lives = new Map<string, CachedLife>();
  /** The records this container last wrote or read for a rule, with when (a rule's first guess). */
  private readonly records = new Map<string, { item: Item; at: number }>();
  /** Records this container deleted, and has not seen or written since. */
  private readonly removed = new Set<string>();

  constructor(private readonly now: () => number) {}

  /** Takes note of a record read along with other items (or of its absence); returns the life if it is live. */
  observe(pk: string, record: Item | undefined): ThreadLife | undefined {
    this.removed.delete(pk);
    if (!record) {
      this.forget(pk);
      return undefined;
    }
    this.seen(pk, record);
    const life = this.remember(pk, String(record[A.generation]), Number(record[A.ttl]));
    return isExpired(life.expiry, this.now()) ? undefined : life;
  }

  /** This container's copy of a record it wrote or read recently (what a rule decides on first). */
  lastSeen(pk: string): Item | undefined {
    const known = this.records.get(pk);
    if (!known || this.now() - known.at >= CONFIRMATION_MS) return undefined;
    return known.item;
  }

  trusted(pk: string): ThreadLife | undefined {
    const known = this.lives.get(pk);
    return known && this.now() - known.confirmedAt < CONFIRMATION_MS ? known : undefined;
  }

  forget(pk: string): void {
    this.lives.delete(pk);
    this.records.delete(pk);
  }

  /** Takes note that this container just deleted the record (a thread's deletion removes it first). */
  noteRemoved(pk: string): void {
    this.forget(pk);
    this.removed.add(pk);
    if (this.removed.size > MAX_CACHED_LIVES) {
      const oldest = this.removed.values().next().value;
      if (oldest !== undefined) this.removed.delete(oldest);
    }
  }

  /**
   * Whether this container deleted the record after it last saw or wrote it (and forgets that it did). Any
   * observation of the record since, such as a deletion's own lock, clears it.
   */
  takeRemoved(pk: string): boolean {
    return this.removed.delete(pk);
  }

  private seen(pk: string, item: Item | undefined): void {
    this.records.delete(pk);
    if (!item) return;
    this.records.set(pk, { item, at: this.now() });
    if (this.records.size > MAX_CACHED_LIVES) {
      const oldest = this.records.keys().next().value;
      if (oldest !== undefined) this.records.delete(oldest);
    }
  }

  private remember(pk: string, generation: string, expiry: number): CachedLife {
    const life = { generation, expiry, confirmedAt: this.now() };
    this.lives.delete(pk);
    this.lives.set(pk, life);
    if (this.lives.size > MAX_CACHED_LIVES) {
      const oldest = this.lives.keys().next().value;
      if (oldest !== undefined) this.lives.delete(oldest);
    }
    return life;
  }
}
