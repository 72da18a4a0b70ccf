import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { JsonPlusSerializer, type SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { BoundedInMemorySaver, InMemorySaver } from "../../../../src/checkpoint/memory";
import { DEFAULT_IN_MEMORY_CHECKPOINT_CONFIG } from "../../../../src/checkpoint/memory/in-memory-checkpoint-config";
import { InvalidConfigurationError } from "../../../../src/shared/errors";
import { METADATA, checkpointWith, putValues, text, threadConfig } from "./fixtures";

describe("BoundedInMemorySaver storage model", () => {
  it("stores a channel's value once per version: unchanged channels cost nothing", async () => {
    const saver = new BoundedInMemorySaver();
    const first = await putValues(saver, "t", { big: text(5_000), small: 1 });
    const afterFirst = saver.stats().totalBytes;
    const { checkpoint } = checkpointWith({ big: text(5_000), small: 2 });
    checkpoint.channel_versions = { big: 1, small: 2 };
    const second = await saver.put(first, checkpoint, METADATA, { small: 2 });

    expect(saver.stats().totalBytes - afterFirst).toBeLessThan(1_000);
    expect((await saver.getTuple(second))?.checkpoint.channel_values).toEqual({
      big: text(5_000),
      small: 2,
    });
    expect((await saver.getTuple(first))?.checkpoint.channel_values).toEqual({
      big: text(5_000),
      small: 1,
    });
  });

  it("keeps the serializer's type next to the bytes", async () => {
    const types: string[] = [];
    const inner = new JsonPlusSerializer();
    const serde: SerializerProtocol = {
      dumpsTyped: (value) => inner.dumpsTyped(value),
      loadsTyped: (type, data) => {
        types.push(type);
        return inner.loadsTyped(type, data);
      },
    };
    const saver = new BoundedInMemorySaver({ serde });
    const raw = new Uint8Array([1, 2, 3]);
    const config = await putValues(saver, "t", { raw, text: "hello" });
    await saver.putWrites(config, [["raw", new Uint8Array([4])]], "task");
    raw[0] = 9; // the caller's buffer changing later must not change what was stored

    const tuple = await saver.getTuple(config);
    expect(tuple?.checkpoint.channel_values.raw).toEqual(new Uint8Array([1, 2, 3]));
    expect(tuple?.pendingWrites).toEqual([["task", "raw", new Uint8Array([4])]]);
    expect(types.filter((type) => type === "bytes")).toHaveLength(2);
  });

  it("mints unique string versions, so branches forked from one checkpoint never share values", async () => {
    const saver = new BoundedInMemorySaver();
    const version = saver.getNextVersion(undefined) as unknown as string;
    expect(typeof version).toBe("string");
    expect(saver.getNextVersion(3) as unknown as string).toMatch(/^0*4\./);
    expect(saver.getNextVersion(undefined)).not.toBe(version);

    const State = Annotation.Root({ value: Annotation<string>() });
    const graph = new StateGraph(State)
      .addNode("step", (state) => ({ value: `${state.value}+step` }))
      .addEdge(START, "step")
      .addEdge("step", END)
      .compile({ checkpointer: saver });
    const config = { configurable: { thread_id: "fork" } };
    await graph.invoke({ value: "root" }, config);
    const history = [];
    for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot);
    const beforeStep = history.find((snapshot) => snapshot.next.includes("step"))!;

    // Two branches from the same checkpoint each write the channel once: same counter, different values.
    const branchA = await graph.updateState(beforeStep.config, { value: "A" });
    const branchB = await graph.updateState(beforeStep.config, { value: "B" });
    expect((await graph.getState(branchA)).values).toEqual({ value: "A" });
    expect((await graph.getState(branchB)).values).toEqual({ value: "B" });
  });

  it("answers undefined, not an error, for a getTuple without a thread id (null or missing)", async () => {
    const saver = new BoundedInMemorySaver();
    expect(await saver.getTuple({ configurable: { thread_id: null } })).toBeUndefined();
    expect(await saver.getTuple({ configurable: {} })).toBeUndefined();
  });

  it("is also exported as InMemorySaver", () => {
    expect(new InMemorySaver()).toBeInstanceOf(BoundedInMemorySaver);
  });
});

describe("InMemoryCheckpointConfig", () => {
  it("defaults every field", () => {
    const saver = new BoundedInMemorySaver({ config: {} });
    expect(saver.stats().totalBytes).toBe(0);
    expect(DEFAULT_IN_MEMORY_CHECKPOINT_CONFIG).toEqual({
      idleTtlSeconds: 14_400,
      maxThreads: 1_000,
      maxNamespacesPerThread: 16,
      maxCheckpointsPerThread: 1_000,
      maxCheckpointBytes: 1_048_576,
      maxPendingWriteBytes: 524_288,
      maxTotalBytes: 67_108_864,
      maxIdentifierLength: 256,
    });
  });

  it.each([
    ["maxThreads", 0, "0"],
    ["maxTotalBytes", -1, "-1"],
    ["idleTtlSeconds", 1.5, "1.5"],
    ["maxCheckpointBytes", Number.NaN, "NaN"],
    ["maxPendingWriteBytes", "1024", 'the string "1024"'],
    ["maxIdentifierLength", null, "null"],
  ])("rejects %s = %p at construction", (field, value, shown) => {
    expect(() => new BoundedInMemorySaver({ config: { [field]: value } })).toThrow(
      new InvalidConfigurationError(`config.${field}`, `expected a positive integer, got ${shown}`),
    );
  });

  it("rejects an unknown option instead of ignoring a typo", () => {
    expect(() => new BoundedInMemorySaver({ config: { maxThread: 5 } as never })).toThrow(
      InvalidConfigurationError,
    );
    expect(() => new BoundedInMemorySaver({ config: { maxThread: 5 } as never })).toThrow(
      /^Invalid config\.maxThread: expected one of idleTtlSeconds, /,
    );
  });

  it("applies the configured values", async () => {
    const saver = new BoundedInMemorySaver({ config: { maxThreads: 1 } });
    await putValues(saver, "a", { x: 1 });
    await putValues(saver, "b", { x: 1 });
    expect(saver.stats()).toMatchObject({ threads: 1, evictions: { maxThreads: 1 } });
    expect(await saver.getTuple(threadConfig("a"))).toBeUndefined();
  });
});
