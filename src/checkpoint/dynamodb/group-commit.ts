import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import {
  ITEM_BUDGET_BYTES,
  ITEM_KIND,
  estimateItemBytes,
  type CheckpointItem,
  type StoredWrite,
  type WritesItem,
} from "./items";
import { WriteBuffer } from "./write-buffer";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Item = Record<string, any>;

/** Idle time after a thread's last put before writes held for its next checkpoint go out on their own. */
const HOLD_WRITES_MS = 200;
const KNOWN_CHECKPOINTS_LIMIT = 10_000;

export interface PendingWrites {
  pk: string;
  checkpointSk: string;
  /** Key of the writes item if these writes are not committed inside their checkpoint item. */
  writesSk: string;
  generation: string;
  entries: StoredWrite[];
}

type PendingRecord =
  { kind: "checkpoint"; item: CheckpointItem } | ({ kind: "writes" } & PendingWrites);

interface HeldWrite {
  record: PendingRecord & { kind: "writes" };
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
  private readonly buffer: WriteBuffer<PendingRecord>;
  /** Checkpoints this instance wrote or read: writes for them go out at once. */
  private readonly knownCheckpoints = new Set<string>();
  private readonly heldWrites = new Map<string, HeldWrite[]>();
  private readonly holdTimers = new Map<string, NodeJS.Timeout>();
  private readonly putsInProgress = new Map<string, number>();

  constructor(client: DynamoDBDocumentClient, tableName: string) {
    this.buffer = new WriteBuffer(client, tableName, planItems);
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

  /** Commits a checkpoint item, with every write held for it inside. */
  submitCheckpoint(item: CheckpointItem): Promise<void> {
    const key = checkpointKey(item.pk, item.sk);
    this.markKnown(item.pk, item.sk);
    this.releaseHeldWrites(key);
    this.extendHold(item.pk);
    return this.buffer.submit({ kind: "checkpoint", item });
  }

  submitWrites(writes: PendingWrites): Promise<void> {
    const record = { kind: "writes" as const, ...writes };
    const key = checkpointKey(writes.pk, writes.checkpointSk);
    // Hold only while a put of this thread is on its way: otherwise no put may come, so waiting gains nothing.
    const putPending = (this.putsInProgress.get(writes.pk) ?? 0) > 0;
    if (this.knownCheckpoints.has(key) || !putPending) return this.buffer.submit(record);
    return new Promise<void>((resolve, reject) => {
      const held = this.heldWrites.get(key) ?? [];
      held.push({ record, resolve, reject });
      this.heldWrites.set(key, held);
      this.extendHold(writes.pk);
    });
  }

  /** The thread is being deleted: writes held for it fail rather than land after the deletion. */
  discardHeld(pk: string, reason: Error): void {
    const prefix = checkpointKey(pk, "");
    for (const [key, held] of [...this.heldWrites]) {
      if (!key.startsWith(prefix)) continue;
      this.heldWrites.delete(key);
      for (const { reject } of held) reject(reason);
    }
  }

  /** A checkpoint this instance read exists already: writes for it need not wait for a put. */
  markKnown(pk: string, sk: string): void {
    if (this.knownCheckpoints.size >= KNOWN_CHECKPOINTS_LIMIT) this.knownCheckpoints.clear();
    this.knownCheckpoints.add(checkpointKey(pk, sk));
  }

  private extendHold(pk: string): void {
    clearTimeout(this.holdTimers.get(pk));
    const prefix = checkpointKey(pk, "");
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

function checkpointKey(pk: string, sk: string): string {
  return `${pk}\u0000${sk}`;
}

/**
 * Plans one batch: pending writes whose checkpoint is committed in the same batch travel inside the checkpoint
 * item, the others share writes items per checkpoint; no item grows past ITEM_BUDGET_BYTES (a call's own writes
 * always fit one item, see the saver's inline limits).
 */
function planItems(records: PendingRecord[]): Item[] {
  const sized = new Map<object, number>();
  const sizeOf = (item: object) => sized.get(item) ?? estimateItemBytes(item);
  const grow = (item: object, bytes: number) => sized.set(item, sizeOf(item) + bytes);
  const checkpoints = new Map<string, CheckpointItem>();
  for (const record of records) {
    if (record.kind === "checkpoint") {
      checkpoints.set(checkpointKey(record.item.pk, record.item.sk), record.item);
    }
  }
  const writes = new Map<string, WritesItem>();
  const items: object[] = [...checkpoints.values()];
  for (const record of records) {
    if (record.kind !== "writes") continue;
    const bytes = estimateItemBytes(record.entries);
    const key = checkpointKey(record.pk, record.checkpointSk);
    const checkpoint = checkpoints.get(key);
    if (
      checkpoint &&
      checkpoint.g === record.generation &&
      sizeOf(checkpoint) + bytes <= ITEM_BUDGET_BYTES
    ) {
      (checkpoint.w ??= []).push(...record.entries);
      grow(checkpoint, bytes);
      continue;
    }
    const existing = writes.get(key);
    if (existing && sizeOf(existing) + bytes <= ITEM_BUDGET_BYTES) {
      existing.ws.push(...record.entries);
      grow(existing, bytes);
      continue;
    }
    const item: WritesItem = {
      pk: record.pk,
      sk: record.writesSk,
      k: ITEM_KIND.writes,
      g: record.generation,
      ws: [...record.entries],
    };
    writes.set(key, item);
    items.push(item);
  }
  return items as Item[];
}
