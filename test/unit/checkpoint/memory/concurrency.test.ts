import { setImmediate as nextTurn } from "node:timers/promises";
import {
  INTERRUPT,
  JsonPlusSerializer,
  uuid6,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import { BoundedInMemorySaver } from "../../../../src/checkpoint/memory";
import { CheckpointCapacityError } from "../../../../src/shared/errors";
import { METADATA, checkpointWith, observe, putValues, text, threadConfig } from "./fixtures";

/**
 * The real serializer, finishing after a varying number of event-loop turns, so concurrent calls reach the
 * critical section in an order unrelated to their start order (as an async serializer or worker would).
 */
function staggeredSerializer(): SerializerProtocol {
  const inner = new JsonPlusSerializer();
  let calls = 0;
  return {
    async dumpsTyped(value: unknown) {
      const result = await inner.dumpsTyped(value);
      const turns = (calls++ * 7) % 5;
      for (let turn = 0; turn < turns; turn += 1) await nextTurn();
      return result;
    },
    loadsTyped: (type, data) => inner.loadsTyped(type, data),
  };
}

describe("BoundedInMemorySaver under concurrent calls", () => {
  it("keeps every write of parallel tasks on one checkpoint, in writesSortKey order", async () => {
    const saver = new BoundedInMemorySaver({ serde: staggeredSerializer() });
    const { checkpoint, newVersions } = checkpointWith({ messages: [] });
    const config = {
      configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: checkpoint.id },
    };
    const tasks = Array.from(
      { length: 24 },
      (_, index) => `task-${String(index).padStart(2, "0")}`,
    );
    // Writes may arrive before the put of their checkpoint: start them all together.
    await Promise.all([
      ...tasks.map((taskId, index) =>
        saver.putWrites(
          config,
          [
            ["messages", `${taskId}-a`],
            ["messages", `${taskId}-b`],
          ],
          taskId,
          `~__pregel_pull, node-${String(23 - index).padStart(2, "0")}`,
        ),
      ),
      saver.put(threadConfig("t"), checkpoint, METADATA, newVersions),
    ]);

    const tuple = await saver.getTuple(config);
    expect(tuple?.pendingWrites).toHaveLength(48);
    // Task paths sort in reverse task order here, so the order is by path, then index.
    const expected = [...tasks].reverse().flatMap((taskId) => [
      [taskId, "messages", `${taskId}-a`],
      [taskId, "messages", `${taskId}-b`],
    ]);
    expect(tuple?.pendingWrites).toEqual(expected);
    expect(saver.stats()).toMatchObject({ pendingWrites: 48, checkpoints: 1 });
  });

  it("keeps interleaved puts on different threads apart, each with its whole ancestry", async () => {
    const saver = new BoundedInMemorySaver({ serde: staggeredSerializer() });
    const threads = Array.from({ length: 20 }, (_, index) => `thread-${index}`);
    await Promise.all(
      threads.map(async (threadId) => {
        let config = threadConfig(threadId);
        for (let step = 0; step < 10; step += 1) {
          config = await putValues(
            saver,
            threadId,
            { owner: threadId, step },
            { parent: config, version: step + 1 },
          );
          await saver.putWrites(config, [["step", step + 1]], `task-${step}`);
        }
      }),
    );

    expect(saver.stats()).toMatchObject({ threads: 20, checkpoints: 200, pendingWrites: 200 });
    for (const threadId of threads) {
      const history = [];
      for await (const tuple of saver.list(threadConfig(threadId))) history.push(tuple);
      expect(history).toHaveLength(10);
      expect(history.map((tuple) => tuple.checkpoint.channel_values)).toEqual(
        Array.from({ length: 10 }, (_, index) => ({ owner: threadId, step: 9 - index })),
      );
      for (let index = 0; index < 9; index += 1) {
        expect(history[index]!.parentConfig?.configurable?.checkpoint_id).toBe(
          history[index + 1]!.checkpoint.id,
        );
      }
    }
  });

  it("decides each concurrent write against the byte budget atomically", async () => {
    const probe = new BoundedInMemorySaver();
    const payload = text(1_000);
    const config = {
      configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: uuid6(-1) },
    };
    await probe.putWrites(config, [["messages", payload]], "task-0");
    const size = probe.stats().totalBytes;

    const saver = new BoundedInMemorySaver({
      config: { maxTotalBytes: 3 * size },
      serde: staggeredSerializer(),
    });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, index) =>
        saver.putWrites(config, [["messages", payload]], `task-${index}`),
      ),
    );
    const rejected = outcomes.filter((outcome) => outcome.status === "rejected");
    expect(outcomes.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(3);
    expect(rejected).toHaveLength(5);
    for (const outcome of rejected) {
      expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(CheckpointCapacityError);
    }
    expect(saver.stats()).toMatchObject({ totalBytes: 3 * size, pendingWrites: 3 });
  });

  it("keeps the first write of a regular channel and replaces a special channel's write", async () => {
    const saver = new BoundedInMemorySaver();
    const config = await putValues(saver, "t", { messages: [] });
    await saver.putWrites(config, [["messages", "first"]], "task");
    await saver.putWrites(config, [["messages", text(500)]], "task"); // a retry: ignored
    const afterRetry = saver.stats().totalBytes;
    await saver.putWrites(config, [[INTERRUPT, text(100)]], "task");
    await saver.putWrites(config, [[INTERRUPT, "latest"]], "task");

    expect((await saver.getTuple(config))?.pendingWrites).toEqual([
      ["task", INTERRUPT, "latest"],
      ["task", "messages", "first"],
    ]);
    const { totalBytes, pendingWrites } = saver.stats();
    expect(pendingWrites).toBe(2);
    expect(totalBytes).toBe(afterRetry + new TextEncoder().encode('"latest"').byteLength);
    expect(totalBytes).toBe((await observe(saver)).totalBytes);
  });
});
