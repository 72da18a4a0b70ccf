import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { BoundedInMemorySaver } from "../../../../src/checkpoint/memory";
import { supportsCheckpointRollback } from "../../../../src/shared/checkpoint-rollback";
import { InvalidIdentifierError } from "../../../../src/shared/errors";
import { observe, putValues, text, threadConfig } from "./fixtures";

// A rolled-back run must leave no trace: LangGraph Server deletes its checkpoints, so state, history and the
// next run see the thread as before it. Everything the saver holds is compared, its byte count included.
describe("BoundedInMemorySaver.deleteCheckpointsAfter", () => {
  const State = Annotation.Root({
    n: Annotation<number>(),
    log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  });
  const child = new StateGraph(State)
    .addNode("increment", (state) => ({ n: state.n + 1, log: [`child saw ${state.n}`] }))
    .addEdge(START, "increment")
    .addEdge("increment", END)
    .compile();

  function graphOn(saver: BoundedInMemorySaver) {
    return new StateGraph(State)
      .addNode("child", child)
      .addNode("double", (state) => ({ n: state.n * 2, log: [text(2_000)] }))
      .addEdge(START, "child")
      .addEdge("child", "double")
      .addEdge("double", END)
      .compile({ checkpointer: saver });
  }

  it("declares the capability", () => {
    expect(supportsCheckpointRollback(new BoundedInMemorySaver())).toBe(true);
    expect(supportsCheckpointRollback({})).toBe(false);
  });

  /** What a thread reads as: its tuples in every namespace, newest first. */
  async function history(saver: BoundedInMemorySaver, threadId: string) {
    const tuples = [];
    for await (const tuple of saver.list({ configurable: { thread_id: threadId } }))
      tuples.push(tuple);
    return tuples;
  }

  it("takes a thread back to before a run: its tuples, namespaces and counts exactly as they were", async () => {
    const saver = new BoundedInMemorySaver();
    const graph = graphOn(saver);
    const config = { configurable: { thread_id: "t" } };
    await graph.invoke({ n: 1 }, config);
    await graphOn(saver).invoke({ n: 7 }, { configurable: { thread_id: "other" } });
    const before = { t: await history(saver, "t"), other: await history(saver, "other") };
    const stats = saver.stats();
    const forkPoint = (await saver.getTuple(config))!.checkpoint.id;

    const second = await graph.invoke({ n: 10 }, config);
    expect(saver.stats().namespaces).toBe(stats.namespaces + 1); // the subgraph's new one

    await saver.deleteCheckpointsAfter("t", forkPoint);
    expect({ t: await history(saver, "t"), other: await history(saver, "other") }).toEqual(before);
    const { totalBytes, ...counts } = saver.stats();
    const { totalBytes: bytesBefore, ...countsBefore } = stats;
    expect(counts).toEqual(countsBefore);
    // Blobs are matched to the checkpoints holding them by identity or, for JSON, equal text: the run's blobs
    // whose text equals an older version's (a `null` branch marker) are kept, a few bytes each.
    expect(totalBytes - bytesBefore).toBeGreaterThanOrEqual(0);
    expect(totalBytes - bytesBefore).toBeLessThan(64);
    expect((await graph.getState(config)).values.n).toBe(4);
    // The next run starts from the fork point, as if the rolled-back run had never been.
    expect(await graph.invoke({ n: 10 }, config)).toEqual(second);
  });

  it("is a no-op for the latest checkpoint and for an unknown thread", async () => {
    const saver = new BoundedInMemorySaver();
    await putValues(saver, "t", { inner: 1 }, { checkpointNs: "child:1" });
    const latest = await putValues(saver, "t", { a: 1 });
    const before = await observe(saver);

    await saver.deleteCheckpointsAfter(
      "t",
      (await saver.getTuple(threadConfig("t")))!.checkpoint.id,
    );
    await saver.deleteCheckpointsAfter("unknown", undefined);
    expect(await observe(saver)).toEqual(before);
    expect(await saver.getTuple(threadConfig("t"))).toMatchObject({ config: latest });
  });

  it("deletes writes stored for a newer checkpoint before its put, and keeps the fork point's writes", async () => {
    const saver = new BoundedInMemorySaver();
    const fork = await putValues(saver, "t", { a: 1 });
    await saver.putWrites(fork, [["a", 2]], "task-fork");
    const orphan = { configurable: { ...fork.configurable, checkpoint_id: "zzzz-newer" } };
    await saver.putWrites(orphan, [["a", 3]], "task-orphan");
    expect(saver.stats().pendingWrites).toBe(2);

    await saver.deleteCheckpointsAfter("t", String(fork.configurable?.checkpoint_id));
    expect(saver.stats().pendingWrites).toBe(1);
    expect((await saver.getTuple(fork))?.pendingWrites).toEqual([["task-fork", "a", 2]]);
  });

  it("frees a newer checkpoint's blobs but keeps those an older checkpoint still holds", async () => {
    const saver = new BoundedInMemorySaver();
    const first = await putValues(saver, "t", { kept: text(1_000), changed: "old" });
    const afterFirst = saver.stats().totalBytes;
    const tuple = (await saver.getTuple(first))!;
    const checkpoint = {
      ...tuple.checkpoint,
      id: "zzzz-newer",
      channel_values: { kept: text(1_000), changed: text(3_000) },
      channel_versions: { ...tuple.checkpoint.channel_versions, changed: 2 },
    };
    await saver.put(first, checkpoint, tuple.metadata!, { changed: 2 });
    expect(saver.stats().totalBytes).toBeGreaterThan(afterFirst + 3_000);

    await saver.deleteCheckpointsAfter("t", String(first.configurable?.checkpoint_id));
    expect(saver.stats().totalBytes).toBe(afterFirst);
    expect((await saver.getTuple(threadConfig("t")))?.checkpoint.channel_values).toEqual({
      kept: text(1_000),
      changed: "old",
    });
  });

  it("deletes every checkpoint of the thread for undefined, and no other thread's", async () => {
    const saver = new BoundedInMemorySaver();
    await putValues(saver, "other", { b: 1 });
    const others = await observe(saver);
    const root = await putValues(saver, "t", { a: 1 });
    await putValues(saver, "t", { inner: 1 }, { checkpointNs: "child:1" });
    await saver.putWrites(root, [["a", 2]], "task");

    await saver.deleteCheckpointsAfter("t", undefined);
    expect(await saver.getTuple(threadConfig("t"))).toBeUndefined();
    expect(await observe(saver)).toEqual(others);
    // The thread can start again.
    await putValues(saver, "t", { a: 5 });
    expect((await saver.getTuple(threadConfig("t")))?.checkpoint.channel_values).toEqual({ a: 5 });
  });

  it("refuses invalid ids before changing anything", async () => {
    const saver = new BoundedInMemorySaver();
    await putValues(saver, "t", { a: 1 });
    const before = await observe(saver);
    await expect(saver.deleteCheckpointsAfter("", undefined)).rejects.toThrow(
      InvalidIdentifierError,
    );
    await expect(saver.deleteCheckpointsAfter("t", "")).rejects.toThrow(InvalidIdentifierError);
    expect(await observe(saver)).toEqual(before);
  });
});
