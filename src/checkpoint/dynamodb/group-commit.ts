import type { CheckpointItem, CheckpointItems, WritesItem } from "../../table/checkpoint-items";
import type { SaverCache } from "./cache";
import { WriteBuffer } from "./write-buffer";
import { planCommitBatch, type CommitRecord } from "./write-planner";

/** Idle time after a thread's last put before writes held for its next checkpoint go out on their own. */
const HOLD_WRITES_MS = 200;
const MAX_SUBMITTED = 10_000;

export type PendingWriteRecord = CommitRecord & { kind: "writes" };

interface HeldWrite {
  record: PendingWriteRecord;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit of checkpoints and pending writes, with one saving that matters most for cost:
 *
 * LangGraph runs a step's tasks while the `put` of their checkpoint still waits behind earlier puts, so their
 * writes usually arrive first. Writes for a checkpoint this instance has not seen are held until its `put` and
 * stored inside the checkpoint item: one item instead of two. Every promise settles only once its data is stored;
 * held writes go out on their own once the thread's puts stop coming (HOLD_WRITES_MS after the last one ends).
 */
export class GroupCommit {
  private readonly buffer: WriteBuffer<CommitRecord, CheckpointItem | WritesItem>;
  private readonly heldWrites = new Map<string, HeldWrite[]>();
  private readonly holdTimers = new Map<string, NodeJS.Timeout>();
  private readonly putsInProgress = new Map<string, number>();
  /** Checkpoints whose item is queued or stored: writes for them need no holding. */
  private readonly submitted = new Set<string>();
  /** putWrites calls on their way (serializing, renewing) to a checkpoint, and who waits for them. */
  private readonly arriving = new Map<string, { count: number; settled: Array<() => void> }>();

  constructor(
    checkpoints: CheckpointItems,
    private readonly cache: SaverCache,
  ) {
    this.buffer = new WriteBuffer(planCommitBatch, (items) => checkpoints.write(items));
  }

  /** A put of this thread has started: writes held for its checkpoints keep waiting. */
  beginPut(pk: string): void {
    this.putsInProgress.set(pk, (this.putsInProgress.get(pk) ?? 0) + 1);
    this.extendHold(pk);
  }

  endPut(pk: string): void {
    const remaining = (this.putsInProgress.get(pk) ?? 1) - 1;
    if (remaining > 0) this.putsInProgress.set(pk, remaining);
    else this.putsInProgress.delete(pk);
  }

  /**
   * A putWrites call for this checkpoint has started: the checkpoint's commit waits until the call has handed its
   * record over (a moment: serialization, no request in the common case), so the two land as one item. The
   * returned function marks the hand-over (or the call's failure).
   */
  announceWrites(pk: string, checkpointSk: string): () => void {
    const key = heldKey(pk, checkpointSk);
    const entry = this.arriving.get(key) ?? { count: 0, settled: [] };
    entry.count += 1;
    this.arriving.set(key, entry);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      entry.count -= 1;
      if (entry.count > 0) return;
      this.arriving.delete(key);
      for (const resume of entry.settled) resume();
    };
  }

  /** Commits a checkpoint item, with every write held for it inside when it fits. */
  async submitCheckpoint(item: CheckpointItem): Promise<void> {
    const key = heldKey(item.pk, item.sk);
    const arriving = this.arriving.get(key);
    if (arriving) await new Promise<void>((resume) => arriving.settled.push(resume));
    if (this.submitted.size >= MAX_SUBMITTED) this.submitted.clear();
    this.submitted.add(key);
    this.releaseHeldWrites(key);
    this.extendHold(item.pk);
    return this.buffer.submit({ kind: "checkpoint", item });
  }

  submitWrites(record: PendingWriteRecord): Promise<void> {
    const key = heldKey(record.pk, record.checkpointSk);
    // Hold only while a put of this thread is on its way: otherwise no put may come, so waiting gains nothing.
    const putPending = (this.putsInProgress.get(record.pk) ?? 0) > 0;
    // A checkpoint queued in this turn takes the writes into its item; a stored one needs no waiting for.
    const known =
      this.submitted.has(key) ||
      this.cache.knownCheckpoint(record.pk, record.checkpointSk) !== undefined;
    if (known || !putPending) return this.buffer.submit(record);
    return new Promise<void>((resolve, reject) => {
      const held = this.heldWrites.get(key) ?? [];
      held.push({ record, resolve, reject });
      this.heldWrites.set(key, held);
      this.extendHold(record.pk);
    });
  }

  /** The thread is being deleted: writes held for it fail rather than land after the deletion. */
  discardHeld(pk: string, reason: Error): void {
    const prefix = heldKey(pk, "");
    for (const [key, held] of [...this.heldWrites]) {
      if (!key.startsWith(prefix)) continue;
      this.heldWrites.delete(key);
      for (const { reject } of held) reject(reason);
    }
  }

  private extendHold(pk: string): void {
    clearTimeout(this.holdTimers.get(pk));
    const prefix = heldKey(pk, "");
    const hasHeld = [...this.heldWrites.keys()].some((key) => key.startsWith(prefix));
    if (!hasHeld) {
      this.holdTimers.delete(pk);
      return;
    }
    this.holdTimers.set(
      pk,
      setTimeout(() => {
        this.holdTimers.delete(pk);
        // A put of this thread still on its way (a slow first request): its writes keep waiting for it.
        if ((this.putsInProgress.get(pk) ?? 0) > 0) return this.extendHold(pk);
        for (const key of [...this.heldWrites.keys()]) {
          if (key.startsWith(prefix)) this.releaseHeldWrites(key);
        }
      }, HOLD_WRITES_MS),
    );
  }

  private releaseHeldWrites(key: string): void {
    const held = this.heldWrites.get(key);
    if (!held) return;
    this.heldWrites.delete(key);
    for (const { record, resolve, reject } of held) {
      this.buffer.submit(record).then(resolve, reject);
    }
  }
}

function heldKey(pk: string, sk: string): string {
  return `${pk}\u0000${sk}`;
}
