import { compareCodePoints } from "../../shared/order";
import { CheckpointCapacityError, type CapacityLimit } from "../../shared/errors";
import type { ResolvedInMemoryCheckpointConfig } from "./in-memory-checkpoint-config";
import { findWrite } from "./pending-writes";
import {
  NamespaceRecord,
  StoredThread,
  compactPayload,
  serializedSize,
  storedSize,
  type SerializedValue,
  type StoredPayload,
  type StoredPendingWrite,
} from "./stored-records";

/** Limits that reject a write (the thread limit only ever evicts). */
export type RejectingLimit = Exclude<CapacityLimit, "maxThreads">;

export interface InMemorySaverStats {
  threads: number;
  namespaces: number;
  checkpoints: number;
  pendingWrites: number;
  /** Serialized bytes of every stored checkpoint, metadata, channel value and pending write. */
  totalBytes: number;
  /** Threads removed to make room, by the limit that needed the room. */
  evictions: { maxThreads: number; maxTotalBytes: number };
  /** Threads removed for being idle longer than the TTL. */
  expirations: number;
  /** Calls refused, by the limit they would have exceeded. */
  rejections: Record<RejectingLimit, number>;
}

export interface PurgeResult {
  threadIds: string[];
  checkpoints: number;
  pendingWrites: number;
  bytes: number;
}

export interface CheckpointCommit {
  threadId: string;
  namespace: string;
  checkpointId: string;
  parentId: string | undefined;
  formatVersion: number;
  checkpoint: SerializedValue;
  metadata: SerializedValue;
  newBlobs: ReadonlyArray<{ channel: string; version: string | number; value: SerializedValue }>;
  channelVersions: ReadonlyArray<readonly [string, string | number]>;
}

export interface WritesCommit {
  threadId: string;
  namespace: string;
  checkpointId: string;
  /** In call order; `(taskId, idx)` identifies a write within its checkpoint, `idx < 0` a special channel. */
  writes: readonly StoredPendingWrite[];
}

/**
 * The saver's storage and every guardrail on it. All methods are synchronous: a caller's check and mutation
 * cannot interleave with another in-flight call. Threads sit in a Map in least-recently-used order, so eviction
 * and idle expiry take threads from its front without scanning.
 */
export class BoundedThreadStore {
  private readonly threads = new Map<string, StoredThread>();
  /** The thread at the most-recently-used end of `threads`, if known. */
  private newest: StoredThread | undefined = undefined;
  private readonly idleTtlMs: number;
  private totalBytes = 0;
  private namespaceCount = 0;
  private checkpointCount = 0;
  private writeCount = 0;
  private readonly evictions = { maxThreads: 0, maxTotalBytes: 0 };
  private expirations = 0;
  private readonly rejections: Record<RejectingLimit, number> = {
    maxNamespacesPerThread: 0,
    maxCheckpointsPerThread: 0,
    maxCheckpointBytes: 0,
    maxPendingWriteBytes: 0,
    maxTotalBytes: 0,
    maxIdentifierLength: 0,
  };

  constructor(
    readonly limits: Readonly<ResolvedInMemoryCheckpointConfig>,
    private readonly now: () => number,
  ) {
    this.idleTtlMs = limits.idleTtlSeconds * 1000;
  }

  /** Counts the refusal and throws; nothing has been changed. */
  reject(limit: RejectingLimit, attempted: number): never {
    this.rejections[limit] += 1;
    throw new CheckpointCapacityError(limit, this.limits[limit], attempted);
  }

  /** A live thread for reading, marked as used; `undefined` if absent or expired. */
  readThread(threadId: string): StoredThread | undefined {
    const now = this.now();
    this.expireIdle(now);
    const thread = this.threads.get(threadId);
    if (thread !== undefined) this.touch(thread, now);
    return thread;
  }

  /** Every live thread, without marking them used (listing everything is not using a thread). */
  liveThreads(): StoredThread[] {
    this.expireIdle(this.now());
    return Array.from(this.threads.values());
  }

  commitCheckpoint(commit: CheckpointCommit): void {
    const now = this.now();
    this.expireIdle(now);
    const thread = this.threads.get(commit.threadId);
    const namespace = thread?.namespaces.get(commit.namespace);
    this.assertNamespaceRoom(thread, namespace);
    const existing = namespace?.checkpoints.get(commit.checkpointId);
    const checkpointCount = thread?.checkpointCount ?? 0;
    if (existing === undefined && checkpointCount >= this.limits.maxCheckpointsPerThread) {
      this.reject("maxCheckpointsPerThread", checkpointCount + 1);
    }
    const ownBytes = serializedSize(commit.checkpoint) + serializedSize(commit.metadata);
    // A blob already stored for this (channel, version) is kept: first writer wins, as in the SQL savers.
    const freshBlobs = commit.newBlobs.filter(
      (blob) => namespace?.blobs.get(blob.channel)?.has(blob.version) !== true,
    );
    let delta = ownBytes - (existing?.bytes ?? 0);
    for (const blob of freshBlobs) delta += serializedSize(blob.value);
    this.assertTotalRoom(thread, delta);

    // Nothing below throws: the checks above are the only way out without a change.
    const target = this.claimThread(thread, commit.threadId, now, delta);
    const record = namespace ?? this.addNamespace(target, commit.namespace);
    for (const blob of freshBlobs) {
      let versions = record.blobs.get(blob.channel);
      if (versions === undefined) record.blobs.set(blob.channel, (versions = new Map()));
      versions.set(blob.version, compactPayload(blob.value));
    }
    const values: StoredPayload[] = [];
    for (const [channel, version] of commit.channelVersions) {
      const value = record.blobs.get(channel)?.get(version);
      if (value !== undefined) values.push(channel, value);
    }
    record.checkpoints.set(commit.checkpointId, {
      checkpoint: compactPayload(commit.checkpoint),
      metadata: compactPayload(commit.metadata),
      parentId: commit.parentId,
      formatVersion: commit.formatVersion,
      values,
      bytes: ownBytes,
    });
    if (
      record.latestId === undefined ||
      compareCodePoints(commit.checkpointId, record.latestId) > 0
    ) {
      record.latestId = commit.checkpointId;
    }
    if (existing === undefined) {
      target.checkpointCount += 1;
      this.checkpointCount += 1;
    }
    target.bytes += delta;
    this.totalBytes += delta;
  }

  commitWrites(commit: WritesCommit): void {
    const now = this.now();
    this.expireIdle(now);
    const thread = this.threads.get(commit.threadId);
    const namespace = thread?.namespaces.get(commit.namespace);
    this.assertNamespaceRoom(thread, namespace);
    const stored = namespace?.writes.get(commit.checkpointId);

    // Within the batch a special write replaces an earlier one with the same key, a regular one does not.
    const batch: StoredPendingWrite[] = [];
    for (const write of commit.writes) {
      const index = findWrite(batch, write.taskId, write.idx);
      if (index < 0) batch.push(write);
      else if (write.idx < 0) batch[index] = write;
    }
    const accepted: Array<{ write: StoredPendingWrite; replaces: number }> = [];
    let delta = 0;
    let added = 0;
    for (const write of batch) {
      const replaces = stored === undefined ? -1 : findWrite(stored, write.taskId, write.idx);
      if (replaces >= 0 && write.idx >= 0) continue; // a retry: first writer wins
      delta += write.size - (replaces >= 0 ? stored![replaces]!.size : 0);
      if (replaces < 0) added += 1;
      accepted.push({ write, replaces });
    }
    if (accepted.length === 0) {
      if (thread !== undefined) this.touch(thread, now);
      return;
    }
    this.assertTotalRoom(thread, delta);

    const target = this.claimThread(thread, commit.threadId, now, delta);
    const record = namespace ?? this.addNamespace(target, commit.namespace);
    if (stored === undefined) {
      // Sized to fit: an empty array that is pushed to reserves room for 17.
      record.writes.set(
        commit.checkpointId,
        accepted.map(({ write }) => write),
      );
    } else {
      for (const { write, replaces } of accepted) {
        if (replaces >= 0) stored[replaces] = write;
        else stored.push(write);
      }
    }
    target.writeCount += added;
    this.writeCount += added;
    target.bytes += delta;
    this.totalBytes += delta;
  }

  /**
   * Deletes every checkpoint of the thread newer than `afterId` (all of them when undefined) in every namespace,
   * with the pending writes of those ids and the blobs no remaining checkpoint holds; namespaces left empty go,
   * and so does the thread once it holds nothing. Synchronous, so no reader sees it half done.
   */
  deleteCheckpointsAfter(threadId: string, afterId: string | undefined): void {
    this.expireIdle(this.now());
    const thread = this.threads.get(threadId);
    if (thread === undefined) return;
    const doomed = (id: string) => afterId === undefined || compareCodePoints(id, afterId) > 0;
    let bytes = 0;
    let checkpoints = 0;
    let writes = 0;
    for (const [name, record] of thread.namespaces) {
      let changed = false;
      for (const [id, stored] of record.checkpoints) {
        if (!doomed(id)) continue;
        record.checkpoints.delete(id);
        bytes += stored.bytes;
        checkpoints += 1;
        changed = true;
      }
      for (const [id, stored] of record.writes) {
        if (!doomed(id)) continue;
        record.writes.delete(id);
        for (const write of stored) bytes += write.size;
        writes += stored.length;
      }
      if (changed) {
        record.latestId = latestOf(record.checkpoints.keys());
        bytes += dropUnheldBlobs(record);
      }
      if (record.checkpoints.size === 0 && record.writes.size === 0) {
        thread.namespaces.delete(name);
        this.namespaceCount -= 1;
      }
    }
    thread.bytes -= bytes;
    thread.checkpointCount -= checkpoints;
    thread.writeCount -= writes;
    this.totalBytes -= bytes;
    this.checkpointCount -= checkpoints;
    this.writeCount -= writes;
    if (thread.namespaces.size === 0) this.remove(thread);
  }

  deleteThread(threadId: string): boolean {
    const thread = this.threads.get(threadId);
    if (thread === undefined) return false;
    this.remove(thread);
    return true;
  }

  /** Removes every thread idle longer than the TTL now; scans all threads, so a clock step back is harmless. */
  purgeExpired(): PurgeResult {
    const now = this.now();
    const result: PurgeResult = { threadIds: [], checkpoints: 0, pendingWrites: 0, bytes: 0 };
    for (const thread of this.threads.values()) {
      if (now - thread.lastUsedAt < this.idleTtlMs) continue;
      result.threadIds.push(thread.threadId);
      result.checkpoints += thread.checkpointCount;
      result.pendingWrites += thread.writeCount;
      result.bytes += thread.bytes;
      this.remove(thread);
      this.expirations += 1;
    }
    return result;
  }

  stats(): InMemorySaverStats {
    return {
      threads: this.threads.size,
      namespaces: this.namespaceCount,
      checkpoints: this.checkpointCount,
      pendingWrites: this.writeCount,
      totalBytes: this.totalBytes,
      evictions: { ...this.evictions },
      expirations: this.expirations,
      rejections: { ...this.rejections },
    };
  }

  /** Idle threads sit at the front of the LRU order: stop at the first one still fresh (amortized O(1)). */
  private expireIdle(now: number): void {
    for (const thread of this.threads.values()) {
      if (now - thread.lastUsedAt < this.idleTtlMs) return;
      this.remove(thread);
      this.expirations += 1;
    }
  }

  private assertNamespaceRoom(
    thread: StoredThread | undefined,
    namespace: NamespaceRecord | undefined,
  ): void {
    const count = thread?.namespaces.size ?? 0;
    if (namespace === undefined && count >= this.limits.maxNamespacesPerThread) {
      this.reject("maxNamespacesPerThread", count + 1);
    }
  }

  /** Feasible iff evicting every other thread would make room: then eviction is sure to succeed. */
  private assertTotalRoom(thread: StoredThread | undefined, delta: number): void {
    const needed = (thread?.bytes ?? 0) + delta;
    if (needed > this.limits.maxTotalBytes) this.reject("maxTotalBytes", needed);
  }

  /** The written thread, created if new, moved to the most-recent end, with room made around it. */
  private claimThread(
    existing: StoredThread | undefined,
    threadId: string,
    now: number,
    delta: number,
  ): StoredThread {
    let thread = existing;
    if (thread === undefined) {
      for (const victim of this.threads.values()) {
        if (this.threads.size < this.limits.maxThreads) break;
        this.remove(victim);
        this.evictions.maxThreads += 1;
      }
      thread = new StoredThread(threadId, now);
      this.threads.set(threadId, thread);
      this.newest = thread;
    } else {
      this.touch(thread, now);
    }
    for (const victim of this.threads.values()) {
      if (this.totalBytes + delta <= this.limits.maxTotalBytes) break;
      if (victim === thread) continue;
      this.remove(victim);
      this.evictions.maxTotalBytes += 1;
    }
    return thread;
  }

  private addNamespace(thread: StoredThread, namespace: string): NamespaceRecord {
    const record = new NamespaceRecord();
    thread.namespaces.set(namespace, record);
    this.namespaceCount += 1;
    return record;
  }

  private touch(thread: StoredThread, now: number): void {
    thread.lastUsedAt = now;
    if (thread === this.newest) return; // already at the end: a run's put, writes and reads hit one thread
    // Re-inserting moves the thread to the most-recently-used end of the Map's order.
    this.threads.delete(thread.threadId);
    this.threads.set(thread.threadId, thread);
    this.newest = thread;
  }

  private remove(thread: StoredThread): void {
    if (thread === this.newest) this.newest = undefined;
    this.threads.delete(thread.threadId);
    this.totalBytes -= thread.bytes;
    this.namespaceCount -= thread.namespaces.size;
    this.checkpointCount -= thread.checkpointCount;
    this.writeCount -= thread.writeCount;
  }
}

function latestOf(ids: Iterable<string>): string | undefined {
  let latest: string | undefined;
  for (const id of ids) if (latest === undefined || compareCodePoints(id, latest) > 0) latest = id;
  return latest;
}

/**
 * Removes the blobs no checkpoint of the namespace holds any more and returns their bytes. A checkpoint holds the
 * very blob of each of its versions (resolved at its put), so a blob is matched by identity, or by equal text
 * for JSON: two versions with equal text are both kept, which wastes bytes but never loses a value.
 */
function dropUnheldBlobs(record: NamespaceRecord): number {
  const held = new Map<string, Set<StoredPayload>>();
  for (const stored of record.checkpoints.values()) {
    for (let index = 0; index < stored.values.length; index += 2) {
      const channel = stored.values[index] as string;
      let payloads = held.get(channel);
      if (payloads === undefined) held.set(channel, (payloads = new Set()));
      payloads.add(stored.values[index + 1]!);
    }
  }
  let bytes = 0;
  for (const [channel, versions] of record.blobs) {
    const payloads = held.get(channel);
    for (const [version, payload] of versions) {
      if (payloads?.has(payload)) continue;
      versions.delete(version);
      bytes += storedSize(payload);
    }
    if (versions.size === 0) record.blobs.delete(channel);
  }
  return bytes;
}
