import { uuid6 } from "@langchain/langgraph-checkpoint";
import { BoundedInMemorySaver } from "../../../../src/checkpoint/memory";
import { CheckpointCapacityError, InvalidIdentifierError } from "../../../../src/shared/errors";
import {
  METADATA,
  checkpointWith,
  manualClock,
  observe,
  putValues,
  text,
  threadConfig,
} from "./fixtures";

/** Asserts a capacity rejection carrying the limit, its configured value and the attempted value. */
async function expectCapacityError(
  promise: Promise<unknown>,
  limit: string,
  configured: number,
  attempted: number,
): Promise<void> {
  const error: unknown = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(CheckpointCapacityError);
  expect(error).toMatchObject({ limit, configured, attempted });
}

/** Bytes a fresh saver accounts for after `write` (all payload new, so this is the write's serialized size). */
async function measure(write: (saver: BoundedInMemorySaver) => Promise<unknown>): Promise<number> {
  const probe = new BoundedInMemorySaver();
  await write(probe);
  return probe.stats().totalBytes;
}

describe("BoundedInMemorySaver limits", () => {
  describe("idle thread TTL", () => {
    it("keeps a thread idle just under the TTL and removes it whole once idle the full TTL", async () => {
      const clock = manualClock();
      const saver = new BoundedInMemorySaver({ config: { idleTtlSeconds: 60 }, now: clock.now });
      const idle = await putValues(saver, "idle", { a: 1 });
      await saver.putWrites(idle, [["a", 2]], "task");
      await putValues(saver, "idle", { b: 1 }, { checkpointNs: "sub" });

      clock.advance(59_999);
      await putValues(saver, "other", { a: 1 });
      expect(await saver.getTuple(threadConfig("idle"))).toBeDefined();
      expect(saver.stats().expirations).toBe(0);

      // The read above refreshed "idle": a full TTL from that read is needed now.
      clock.advance(59_999);
      await saver.getTuple(threadConfig("other"));
      expect(saver.stats().threads).toBe(2);
      clock.advance(1);
      await saver.getTuple(threadConfig("other"));
      const stats = saver.stats();
      expect(stats.expirations).toBe(1);
      expect(stats).toMatchObject({ threads: 1, namespaces: 1, checkpoints: 1, pendingWrites: 0 });
      expect(await saver.getTuple(threadConfig("idle"))).toBeUndefined();
      expect(await saver.getTuple(threadConfig("idle", "sub"))).toBeUndefined();
      expect(stats.totalBytes).toBe((await observe(saver)).totalBytes);
      expect(stats.totalBytes).toBe(await measure((probe) => putValues(probe, "x", { a: 1 })));
    });

    it("purgeExpired() removes idle threads now and reports what it removed", async () => {
      const clock = manualClock();
      const saver = new BoundedInMemorySaver({ config: { idleTtlSeconds: 10 }, now: clock.now });
      const first = await putValues(saver, "first", { a: 1 });
      await saver.putWrites(first, [["a", 2]], "task");
      await putValues(saver, "second", { a: 1 });
      clock.advance(5_000);
      await putValues(saver, "fresh", { a: 1 });
      const bytesBefore = saver.stats().totalBytes;
      clock.advance(5_000);

      const purged = saver.purgeExpired();
      expect(purged.threadIds.sort()).toEqual(["first", "second"]);
      expect(purged.checkpoints).toBe(2);
      expect(purged.pendingWrites).toBe(1);
      expect(saver.stats().totalBytes).toBe(bytesBefore - purged.bytes);
      expect(saver.stats()).toMatchObject({ threads: 1, expirations: 2 });
      expect(saver.purgeExpired().threadIds).toEqual([]);
    });
  });

  describe("thread limit", () => {
    it("holds the limit, and a new thread beyond it evicts the least-recently-used thread whole", async () => {
      const saver = new BoundedInMemorySaver({ config: { maxThreads: 3 } });
      for (const threadId of ["t1", "t2", "t3"]) {
        const config = await putValues(saver, threadId, { a: threadId });
        await saver.putWrites(config, [["a", "w"]], "task");
        await putValues(saver, threadId, { b: 1 }, { checkpointNs: "child" });
      }
      expect(saver.stats()).toMatchObject({ threads: 3, evictions: { maxThreads: 0 } });
      await saver.getTuple(threadConfig("t1")); // t1 is now more recent than t2

      await putValues(saver, "t4", { a: "t4" });
      const stats = saver.stats();
      expect(stats).toMatchObject({ threads: 3, namespaces: 5, checkpoints: 5, pendingWrites: 2 });
      expect(stats.evictions).toEqual({ maxThreads: 1, maxTotalBytes: 0 });
      expect(await saver.getTuple(threadConfig("t2"))).toBeUndefined();
      expect(await saver.getTuple(threadConfig("t2", "child"))).toBeUndefined();
      for (const threadId of ["t1", "t3", "t4"]) {
        expect(await saver.getTuple(threadConfig(threadId))).toBeDefined();
      }
      expect(stats.totalBytes).toBe((await observe(saver)).totalBytes);
    });

    it("writes to existing threads at the limit evict nothing", async () => {
      const saver = new BoundedInMemorySaver({ config: { maxThreads: 2 } });
      const first = await putValues(saver, "t1", { a: 1 });
      await putValues(saver, "t2", { a: 1 });
      await putValues(saver, "t1", { a: 2 }, { parent: first });
      await saver.putWrites(first, [["a", 3]], "task");
      expect(saver.stats()).toMatchObject({ threads: 2, evictions: { maxThreads: 0 } });
    });
  });

  describe("namespaces per thread", () => {
    it("accepts the limit and rejects one more namespace, leaving the store unchanged", async () => {
      const saver = new BoundedInMemorySaver({ config: { maxNamespacesPerThread: 2 } });
      const root = await putValues(saver, "t", { a: 1 });
      await saver.putWrites(root, [["a", 2]], "task");
      await putValues(saver, "t", { a: 1 }, { checkpointNs: "child" });
      await putValues(saver, "t", { a: 2 }, { checkpointNs: "child" }); // existing namespace: fine
      const before = await observe(saver);

      await expectCapacityError(
        putValues(saver, "t", { a: 1 }, { checkpointNs: "third" }),
        "maxNamespacesPerThread",
        2,
        3,
      );
      await expectCapacityError(
        saver.putWrites(
          { configurable: { thread_id: "t", checkpoint_ns: "third", checkpoint_id: uuid6(-1) } },
          [["a", 1]],
          "task",
        ),
        "maxNamespacesPerThread",
        2,
        3,
      );
      expect(await observe(saver)).toEqual(before);
      expect(saver.stats().rejections.maxNamespacesPerThread).toBe(2);
      // The limit is per thread: another thread has its own namespaces.
      await putValues(saver, "u", { a: 1 }, { checkpointNs: "third" });
    });
  });

  describe("checkpoints per thread", () => {
    it("accepts the limit across namespaces and rejects one more, leaving the store unchanged", async () => {
      const saver = new BoundedInMemorySaver({ config: { maxCheckpointsPerThread: 3 } });
      const first = await putValues(saver, "t", { a: 1 });
      await saver.putWrites(first, [["a", 2]], "task");
      const second = await putValues(saver, "t", { a: 2 }, { parent: first });
      await putValues(saver, "t", { a: 1 }, { checkpointNs: "child" });
      const before = await observe(saver);

      await expectCapacityError(
        putValues(saver, "t", { a: 3 }, { parent: second }),
        "maxCheckpointsPerThread",
        3,
        4,
      );
      expect(await observe(saver)).toEqual(before);
      expect(saver.stats().rejections.maxCheckpointsPerThread).toBe(1);

      // Writing an existing checkpoint again is not an additional checkpoint.
      const again = await saver.getTuple(second);
      await saver.put(first, again!.checkpoint, METADATA, {});
      expect(saver.stats().checkpoints).toBe(3);
    });
  });

  describe("checkpoint payload", () => {
    it("accepts a checkpoint of exactly the limit and rejects one byte more before any mutation", async () => {
      const id = uuid6(-1);
      const values = { messages: text(2_000), step: 1 };
      const size = await measure((probe) => putValues(probe, "t", values, { id }));

      const atLimit = new BoundedInMemorySaver({ config: { maxCheckpointBytes: size } });
      await putValues(atLimit, "t", values, { id });
      expect(atLimit.stats().totalBytes).toBe(size);

      const belowLimit = new BoundedInMemorySaver({ config: { maxCheckpointBytes: size - 1 } });
      const existing = await putValues(belowLimit, "t", { small: 1 });
      await belowLimit.putWrites(existing, [["small", 2]], "task");
      const before = await observe(belowLimit);
      await expectCapacityError(
        putValues(belowLimit, "t", values, { id, parent: existing }),
        "maxCheckpointBytes",
        size - 1,
        size,
      );
      await expectCapacityError(
        putValues(belowLimit, "new-thread", values, { id }),
        "maxCheckpointBytes",
        size - 1,
        size,
      );
      expect(await observe(belowLimit)).toEqual(before);
      expect(belowLimit.stats().rejections.maxCheckpointBytes).toBe(2);
    });
  });

  describe("pending-write batch", () => {
    it("accepts a batch of exactly the limit and rejects one byte more before any mutation", async () => {
      const writes: Array<[string, unknown]> = [
        ["messages", text(1_000)],
        ["step", 2],
        ["__interrupt__", [{ id: "i", value: text(100) }]],
      ];
      const checkpointId = uuid6(-1);
      const config = {
        configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: checkpointId },
      };
      const size = await measure((probe) => probe.putWrites(config, writes, "task"));

      const atLimit = new BoundedInMemorySaver({ config: { maxPendingWriteBytes: size } });
      await atLimit.putWrites(config, writes, "task");
      expect(atLimit.stats()).toMatchObject({ totalBytes: size, pendingWrites: 3 });

      const belowLimit = new BoundedInMemorySaver({ config: { maxPendingWriteBytes: size - 1 } });
      const existing = await putValues(belowLimit, "t", { a: 1 }, { id: checkpointId });
      await belowLimit.putWrites(existing, [["a", 2]], "earlier");
      const before = await observe(belowLimit);
      await expectCapacityError(
        belowLimit.putWrites(config, writes, "task"),
        "maxPendingWriteBytes",
        size - 1,
        size,
      );
      expect(await observe(belowLimit)).toEqual(before);
      expect(belowLimit.stats().rejections.maxPendingWriteBytes).toBe(1);
    });
  });

  describe("total serialized payload", () => {
    const values = { messages: text(1_000) };

    it("fills to exactly the budget, then evicts the least-recently-used other threads", async () => {
      const size = await measure((probe) => putValues(probe, "t", values));
      const saver = new BoundedInMemorySaver({ config: { maxTotalBytes: 3 * size } });
      for (const threadId of ["a", "b", "c"]) await putValues(saver, threadId, values);
      expect(saver.stats()).toMatchObject({ totalBytes: 3 * size, threads: 3 });
      await saver.getTuple(threadConfig("a")); // b is now the least recently used

      await putValues(saver, "d", values);
      expect(saver.stats()).toMatchObject({
        totalBytes: 3 * size,
        threads: 3,
        evictions: { maxThreads: 0, maxTotalBytes: 1 },
      });
      expect(await saver.getTuple(threadConfig("b"))).toBeUndefined();

      // Growing the protected thread by two checkpoints' worth evicts the two other threads, not itself.
      const parent = await saver.getTuple(threadConfig("d"));
      await putValues(saver, "d", values, { parent: parent!.config, version: 2 });
      await putValues(saver, "d", values, { parent: parent!.config, version: 3 });
      expect(saver.stats()).toMatchObject({
        totalBytes: 3 * size,
        threads: 1,
        evictions: { maxTotalBytes: 3 },
      });
      expect(saver.stats().checkpoints).toBe(3);
    });

    it("rejects a write the protected thread cannot fit even alone, evicting nothing", async () => {
      const size = await measure((probe) => putValues(probe, "t", values));
      const saver = new BoundedInMemorySaver({ config: { maxTotalBytes: 2 * size } });
      const own = await putValues(saver, "own", values);
      await putValues(saver, "other", values);
      const before = await observe(saver);

      await expectCapacityError(
        putValues(saver, "own", { messages: text(3_000) }, { parent: own, version: 2 }),
        "maxTotalBytes",
        2 * size,
        expect.any(Number) as unknown as number,
      );
      const bigWrite = text(2 * size);
      await expectCapacityError(
        saver.putWrites(own, [["messages", bigWrite]], "task"),
        "maxTotalBytes",
        2 * size,
        expect.any(Number) as unknown as number,
      );
      expect(await observe(saver)).toEqual(before);
      expect(saver.stats()).toMatchObject({
        evictions: { maxTotalBytes: 0 },
        rejections: { maxTotalBytes: 2 },
      });
    });

    it("reports the bytes the protected thread would need as the attempted value", async () => {
      const size = await measure((probe) => putValues(probe, "t", values));
      const saver = new BoundedInMemorySaver({ config: { maxTotalBytes: size } });
      const own = await putValues(saver, "own", values);
      const { checkpoint, newVersions } = checkpointWith({ messages: text(1_000) }, uuid6(-1), 2);
      const second = await measure((probe) => probe.put(own, checkpoint, METADATA, newVersions));
      await expectCapacityError(
        saver.put(own, checkpoint, METADATA, newVersions),
        "maxTotalBytes",
        size,
        size + second,
      );
    });
  });

  describe("identifier length", () => {
    const saver = () => new BoundedInMemorySaver({ config: { maxIdentifierLength: 8 } });

    it("accepts identifiers of exactly the limit", async () => {
      const store = saver();
      const config = await putValues(
        store,
        "12345678",
        { a: 1 },
        { checkpointNs: "ns-45678", id: "cp-45678" },
      );
      await store.putWrites(config, [["a", 2]], "task5678");
      const tuple = await store.getTuple(config);
      expect(tuple?.pendingWrites).toEqual([["task5678", "a", 2]]);
    });

    it("rejects thread ids, namespaces, checkpoint ids and task ids one character longer", async () => {
      const store = saver();
      const valid = await putValues(store, "thread-1", { a: 1 }, { id: "cp-1" });
      const before = await observe(store);
      const tooLong = "123456789";
      await expectCapacityError(
        putValues(store, tooLong, { a: 1 }, { id: "cp-2" }),
        "maxIdentifierLength",
        8,
        9,
      );
      await expectCapacityError(
        putValues(store, "thread-1", { a: 1 }, { id: "cp-2", checkpointNs: tooLong }),
        "maxIdentifierLength",
        8,
        9,
      );
      await expectCapacityError(
        putValues(store, "thread-1", { a: 1 }, { id: tooLong }),
        "maxIdentifierLength",
        8,
        9,
      );
      await expectCapacityError(
        store.putWrites(valid, [["a", 1]], tooLong),
        "maxIdentifierLength",
        8,
        9,
      );
      await expectCapacityError(store.getTuple(threadConfig(tooLong)), "maxIdentifierLength", 8, 9);
      await expectCapacityError(store.deleteThread(tooLong), "maxIdentifierLength", 8, 9);
      expect(await observe(store)).toEqual(before);
      expect(store.stats().rejections.maxIdentifierLength).toBe(6);
    });

    it("rejects invalid identifiers with InvalidIdentifierError before any mutation", async () => {
      const store = saver();
      const valid = await putValues(store, "thread-1", { a: 1 }, { id: "cp-1" });
      const before = await observe(store);
      const { checkpoint, newVersions } = checkpointWith({ a: 1 }, "cp-2");
      for (const threadId of ["", "a\u0000b", 42, null]) {
        await expect(
          store.put({ configurable: { thread_id: threadId } }, checkpoint, METADATA, newVersions),
        ).rejects.toThrow(InvalidIdentifierError);
      }
      await expect(store.put({}, checkpoint, METADATA, newVersions)).rejects.toThrow(
        /^Invalid thread_id: expected a string/,
      );
      await expect(store.putWrites(threadConfig("thread-1"), [["a", 1]], "task")).rejects.toThrow(
        InvalidIdentifierError,
      );
      await expect(store.putWrites(valid, [["a", 1]], "")).rejects.toThrow(
        "Invalid task_id: expected a non-empty string, got an empty string",
      );
      expect(await observe(store)).toEqual(before);
    });
  });
});
