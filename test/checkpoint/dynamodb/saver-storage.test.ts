import { randomBytes, randomUUID } from "node:crypto";
import { QueryCommand } from "@aws-sdk/client-dynamodb";
import { Annotation, Command, END, START, StateGraph } from "@langchain/langgraph";
import { DynamoDBSaver } from "../../../src/checkpoint/dynamodb/saver";
import { threadPartitionKey } from "../../../src/table/keys";
import { TableClient } from "../../../src/table/client";
import { removeThreadLeftovers } from "../../../src/table/thread-removal";
import { CheckpointTooLargeError, InvalidIdentifierError } from "../../../src/shared/errors";
import { buildBookingGraph } from "../../../src/examples/booking";
import {
  checkpointWith,
  instrumentedClient,
  metadata,
  pastExpiry,
  putValues,
  useSaverTable,
} from "./saver-fixtures";

// How DynamoDBSaver stores and reads checkpoints (chunking, faults, paging, listing), on DynamoDB Local.
const table = useSaverTable("saver-storage");
const { newSaver } = table;

describe("DynamoDBSaver storage (integration)", () => {
  it("gives three branches forked from one checkpoint their own values", async () => {
    const saver = newSaver();
    const threadId = randomUUID();
    const root = await putValues(saver, threadId, { choice: "root", untouched: "kept" });
    const rootId = root.configurable!.checkpoint_id as string;
    const rootTuple = await saver.getTuple(root);
    const branches = [];
    for (const choice of ["left", "middle", "right"]) {
      const version = saver.getNextVersion(rootTuple!.checkpoint.channel_versions.choice as number);
      const checkpoint = checkpointWith(
        { choice, untouched: "kept" },
        { ...(rootTuple!.checkpoint.channel_versions as Record<string, number>), choice: version },
      );
      branches.push(
        await saver.put(
          { configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: rootId } },
          checkpoint,
          metadata,
          { choice: version },
        ),
      );
    }
    const fresh = newSaver(saver.tenantId);
    const values = await Promise.all(
      branches.map(async (config) => (await fresh.getTuple(config))!.checkpoint.channel_values),
    );
    expect(values).toEqual([
      { choice: "left", untouched: "kept" },
      { choice: "middle", untouched: "kept" },
      { choice: "right", untouched: "kept" },
    ]);
  });

  it("round-trips a 1.5 MB channel value and a 1.5 MB pending write (chunked)", async () => {
    const saver = newSaver();
    const threadId = randomUUID();
    const large = randomBytes(1.5 * 1024 * 1024 * 0.75).toString("base64"); // 1.5 MB, incompressible
    const config = await putValues(saver, threadId, { document: large, small: 1 });
    await saver.putWrites(config, [["document", large]], "task-1");
    const tuple = await newSaver(saver.tenantId).getTuple({
      configurable: { thread_id: threadId },
    });
    expect(tuple!.checkpoint.channel_values.document).toBe(large);
    expect(tuple!.checkpoint.channel_values.small).toBe(1);
    expect(tuple!.pendingWrites).toEqual([["task-1", "document", large]]);
  });

  it("rejects an over-cap checkpoint before writing anything and leaves the thread as it was", async () => {
    const { client: counted, requests } = instrumentedClient();
    const saver = new DynamoDBSaver({
      tableName: table.tableName,
      client: counted,
      tenantId: `t-${randomUUID()}`,
      maxCheckpointBytes: 64 * 1024,
    });
    const threadId = randomUUID();
    const first = await putValues(saver, threadId, { value: "small" });
    const before = await saver.getTuple({ configurable: { thread_id: threadId } });
    requests.length = 0;
    await expect(
      putValues(
        saver,
        threadId,
        { value: "x".repeat(65 * 1024) },
        first.configurable!.checkpoint_id as string,
      ),
    ).rejects.toThrow(CheckpointTooLargeError);
    expect(requests).toEqual([]);
    const after = await saver.getTuple({ configurable: { thread_id: threadId } });
    expect(after).toEqual(before);
    counted.destroy();
  });

  it("keeps the latest checkpoint readable when the process dies between chunk and checkpoint writes (injected by middleware)", async () => {
    const tenantId = `t-${randomUUID()}`;
    const threadId = randomUUID();
    const healthy = newSaver(tenantId);
    const first = await putValues(healthy, threadId, { state: "committed" });
    let chunkBatches = 0;
    const { client: dying } = instrumentedClient((command, input) => {
      if (command !== "BatchWriteItemCommand") return undefined;
      const requests = Object.values(
        input.RequestItems as Record<
          string,
          Array<{ PutRequest?: { Item: { k?: string | { S?: string } } } }>
        >,
      )[0]!;
      const hasCheckpoint = requests.some((request) =>
        [
          request.PutRequest?.Item.k,
          (request.PutRequest?.Item.k as { S?: string } | undefined)?.S,
        ].includes("c"),
      );
      if (!hasCheckpoint) {
        chunkBatches += 1;
        return undefined; // chunks land
      }
      throw Object.assign(new Error("process died before the checkpoint write"), {
        name: "ProcessDied",
      });
    });
    const doomed = new DynamoDBSaver({ tableName: table.tableName, client: dying, tenantId });
    await expect(
      putValues(
        doomed,
        threadId,
        { state: randomBytes(300_000).toString("base64") },
        first.configurable!.checkpoint_id as string,
      ),
    ).rejects.toThrow("process died");
    expect(chunkBatches).toBeGreaterThan(0);
    const latest = await newSaver(tenantId).getTuple({ configurable: { thread_id: threadId } });
    expect(latest!.config.configurable!.checkpoint_id).toBe(first.configurable!.checkpoint_id);
    expect(latest!.checkpoint.channel_values).toEqual({ state: "committed" });
    dying.destroy();
  });

  it("loses nothing under injected throttling and unprocessed batch items (injected by middleware)", async () => {
    let throttled = 0;
    let trimmed = 0;
    const { client: flaky } = instrumentedClient((command, input) => {
      if (throttled < 3 && command === "QueryCommand") {
        throttled += 1;
        throw Object.assign(new Error("Rate exceeded"), {
          name: "ProvisionedThroughputExceededException",
          $retryable: { throttling: true },
        });
      }
      if (trimmed < 5 && command === "BatchWriteItemCommand") {
        const [table, requests] = Object.entries(
          input.RequestItems as Record<string, unknown[]>,
        )[0]!;
        if (requests.length > 1) {
          trimmed += 1;
          // Pretend DynamoDB processed nothing: every request comes back unprocessed.
          return {
            output: { UnprocessedItems: { [table]: requests }, $metadata: {} },
            response: {},
          };
        }
      }
      return undefined;
    });
    const saver = new DynamoDBSaver({
      tableName: table.tableName,
      client: flaky,
      tenantId: `t-${randomUUID()}`,
    });
    const graph = buildBookingGraph({ checkpointer: saver });
    const config = { configurable: { thread_id: randomUUID() } };
    await graph.invoke({ request: "x" }, config);
    const done = await graph.invoke(new Command({ resume: { approve: true } }), config);
    expect(done.booked).toBe(true);
    expect(throttled).toBe(3);
    expect(trimmed).toBeGreaterThan(0);
    const history = [];
    for await (const tuple of newSaver(saver.tenantId).list(config)) history.push(tuple);
    expect(history.map((tuple) => tuple.metadata?.step)).toEqual([3, 2, 1, 0, -1]);
    flaky.destroy();
  });

  it("reads through unprocessed BatchGetItem keys and throttled record updates (injected by middleware)", async () => {
    const tenantId = `t-${randomUUID()}`;
    const threadId = randomUUID();
    const writer = newSaver(tenantId);
    const large = randomBytes(1_500).toString("base64"); // incompressible: too large to copy
    // A value over the copy limit stays in its ancestor item, so reading the child needs a BatchGetItem.
    const first = await putValues(writer, threadId, { large: large });
    const childVersions = { other: writer.getNextVersion(undefined) };
    const firstTuple = await writer.getTuple(first);
    const child = checkpointWith(
      { large: large, other: 1 },
      { ...(firstTuple!.checkpoint.channel_versions as Record<string, number>), ...childVersions },
    );
    const childConfig = await writer.put(first, child, metadata, childVersions);
    let unprocessed = 0;
    let throttledUpdates = 0;
    const { client: flaky, requests } = instrumentedClient((command, input) => {
      if (command === "BatchGetItemCommand" && unprocessed < 2) {
        unprocessed += 1;
        return {
          output: { Responses: {}, UnprocessedKeys: input.RequestItems, $metadata: {} },
          response: {},
        };
      }
      if (command === "UpdateItemCommand" && throttledUpdates < 2) {
        throttledUpdates += 1;
        throw Object.assign(new Error("Rate exceeded"), { name: "ThrottlingException" });
      }
      return undefined;
    });
    const reader = new DynamoDBSaver({ tableName: table.tableName, client: flaky, tenantId });
    const read = await reader.getTuple(childConfig);
    expect(read?.checkpoint.channel_values).toEqual({ large: large, other: 1 });
    expect(requests.filter((command) => command === "BatchGetItemCommand").length).toBe(3);
    await reader.markStatus(childConfig, "COMPLETED");
    expect(throttledUpdates).toBe(2);
    flaky.destroy();
  });

  it("deletes every item of a thread with 150 checkpoints (1.2 MB, more than one Query page)", async () => {
    const saver = newSaver();
    const threadId = randomUUID();
    let parent: string | undefined;
    for (let i = 0; i < 150; i += 1) {
      // ~8 KB per checkpoint: 1.2 MB in all, so the deletion pages past one Query.
      const config = await putValues(
        saver,
        threadId,
        { i, pad: randomBytes(6_000).toString("base64") },
        parent,
      );
      await saver.putWrites(config, [["i", i]], `task-${i}`);
      parent = config.configurable!.checkpoint_id as string;
    }
    await saver.deleteThread(threadId);
    const remaining = await table.client.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": { S: threadPartitionKey(saver.tenantId, threadId) } },
        ConsistentRead: true,
      }),
    );
    expect(remaining.Count).toBe(0);
    expect(await saver.getTuple({ configurable: { thread_id: threadId } })).toBeUndefined();
  });

  it("lists newest first across more than 1 MB of checkpoints, with before, filter and limit", async () => {
    const saver = newSaver();
    const threadId = randomUUID();
    const ids: string[] = [];
    let parent: string | undefined;
    for (let i = 0; i < 40; i += 1) {
      const versions = { blob: saver.getNextVersion(undefined) };
      const checkpoint = checkpointWith({ blob: randomBytes(30_000).toString("base64") }, versions);
      const config = await saver.put(
        { configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: parent } },
        checkpoint,
        {
          source: "loop",
          step: i,
          parents: {},
          parity: i % 2 === 0 ? "even" : "odd",
        } as typeof metadata,
        versions,
      );
      parent = config.configurable!.checkpoint_id as string;
      ids.push(parent);
    }
    const all = [];
    const { client: counted, requests } = instrumentedClient();
    const reader = new DynamoDBSaver({
      tableName: table.tableName,
      client: counted,
      tenantId: saver.tenantId,
    });
    for await (const tuple of reader.list({ configurable: { thread_id: threadId } }))
      all.push(tuple);
    counted.destroy();
    // 40 checkpoints of ~30 KB each: more than DynamoDB's 1 MB Query page, so the listing paged.
    expect(requests.filter((command) => command === "QueryCommand").length).toBeGreaterThan(1);
    expect(requests).not.toContain("ScanCommand");
    expect(all.map((tuple) => tuple.checkpoint.id)).toEqual([...ids].reverse());
    expect(
      all.every((tuple) => (tuple.checkpoint.channel_values.blob as string).length === 40_000),
    ).toBe(true);

    const filtered = [];
    for await (const tuple of saver.list(
      { configurable: { thread_id: threadId } },
      { before: { configurable: { checkpoint_id: ids[20] } }, filter: { parity: "odd" }, limit: 3 },
    )) {
      filtered.push(tuple.metadata?.step);
    }
    expect(filtered).toEqual([19, 17, 15]);

    const { client: tenantCounted, requests: tenantRequests } = instrumentedClient();
    const tenantWide = new DynamoDBSaver({
      tableName: table.tableName,
      client: tenantCounted,
      tenantId: saver.tenantId,
    });
    let listedWithoutThread = 0;
    for await (const _tuple of tenantWide.list({}, { limit: 5 })) listedWithoutThread += 1;
    tenantCounted.destroy();
    expect(listedWithoutThread).toBe(5);
    expect(tenantRequests).not.toContain("ScanCommand");
  });
});

describe("DynamoDBSaver edge cases (integration)", () => {
  it("keeps every item under DynamoDB's 400 KB when parallel tasks write large values at once", async () => {
    const big = () => randomBytes(63_000).toString("base64");
    const State = Annotation.Root(
      Object.fromEntries([..."abcdefghi"].map((key) => [key, Annotation<string>()])) as Record<
        string,
        ReturnType<typeof Annotation<string>>
      >,
    );
    const graph = new StateGraph(State)
      .addNode("n1", () => ({ a: big(), b: big(), c: big() }))
      .addNode("n2", () => ({ d: big(), e: big(), f: big() }))
      .addNode("n3", () => ({ g: big(), h: big(), i: big() }))
      .addEdge(START, "n1")
      .addEdge(START, "n2")
      .addEdge(START, "n3")
      .addEdge("n1", END)
      .addEdge("n2", END)
      .addEdge("n3", END)
      .compile({ checkpointer: newSaver() });
    const config = { configurable: { thread_id: randomUUID() } };
    const result = await graph.invoke({}, config);
    expect(Object.keys(result).sort()).toEqual([..."abcdefghi"]);
    const state = await graph.getState(config);
    expect(state.values).toEqual(result);
  });

  it("renews the thread's expiry on every write, so an active thread does not expire", async () => {
    let now = Date.UTC(2026, 0, 1);
    const tenantId = `t-${randomUUID()}`;
    const saver = newSaver(tenantId, { ttlSeconds: 100, now: () => now });
    const threadId = randomUUID();
    let parent: string | undefined;
    for (let write = 0; write < 4; write += 1) {
      parent = (await putValues(saver, threadId, { write }, parent)).configurable!
        .checkpoint_id as string;
      now += 30_000;
    }
    now += 30_000; // 60 s after the last write, 150 s after the first: alive only if writes renewed it
    const reader = newSaver(tenantId, { ttlSeconds: 100, now: () => now });
    const tuple = await reader.getTuple({ configurable: { thread_id: threadId } });
    expect(tuple?.checkpoint.channel_values).toEqual({ write: 3 });
  });

  it("gives a child put issued while its parent's put is in flight the parent's values", async () => {
    const saver = newSaver();
    const threadId = randomUUID();
    await putValues(saver, threadId, { seed: 1 });
    const parentVersions = { keep: saver.getNextVersion(undefined) };
    const parent = checkpointWith({ keep: "kept" }, parentVersions);
    const childVersions = { ...parentVersions, other: saver.getNextVersion(undefined) };
    const child = checkpointWith({ keep: "kept", other: 1 }, childVersions);
    const base = { thread_id: threadId, checkpoint_ns: "" };
    await Promise.all([
      saver.put({ configurable: base }, parent, metadata, parentVersions),
      saver.put({ configurable: { ...base, checkpoint_id: parent.id } }, child, metadata, {
        other: childVersions.other,
      }),
    ]);
    const read = await newSaver(saver.tenantId).getTuple({
      configurable: { ...base, checkpoint_id: child.id },
    });
    expect(read?.checkpoint.channel_values).toEqual({ keep: "kept", other: 1 });
  });

  it("writes at once when no put of the thread is on its way (no hold for a checkpoint put elsewhere)", async () => {
    const writer = newSaver();
    const threadId = randomUUID();
    const config = await putValues(writer, threadId, { a: 1 });
    const other = newSaver(writer.tenantId);
    // A held write goes out only when its hold timer fires. With timers frozen (a controlled clock: requests,
    // setImmediate and the real time still run), a write that is not held is stored all the same, and a held
    // one never is: the guard, a real timer 50 times the hold, only keeps such a failure from hanging.
    const realSetTimeout = global.setTimeout;
    let guard: NodeJS.Timeout | undefined;
    jest.useFakeTimers({
      doNotFake: ["setImmediate", "clearImmediate", "nextTick", "queueMicrotask"],
    });
    try {
      const held = new Promise<"held">((resolve) => {
        guard = realSetTimeout(() => resolve("held"), 10_000);
      });
      const written = other.putWrites(config, [["a", 2]], "task-1").then(() => "written" as const);
      expect(await Promise.race([written, held])).toBe("written");
    } finally {
      clearTimeout(guard);
      jest.useRealTimers();
    }
    const tuple = await newSaver(writer.tenantId).getTuple(config);
    expect(tuple?.pendingWrites).toEqual([["task-1", "a", 2]]);
  });

  it("lists only the checkpoint named by checkpoint_id in the config", async () => {
    const saver = newSaver();
    const threadId = randomUUID();
    const first = await putValues(saver, threadId, { n: 1 });
    await putValues(saver, threadId, { n: 2 }, first.configurable!.checkpoint_id as string);
    const listed = [];
    for await (const tuple of saver.list(first)) listed.push(tuple.checkpoint.id);
    expect(listed).toEqual([first.configurable!.checkpoint_id]);
  });

  it("validates each part of a nested namespace and the escaped whole against the sort-key limit", async () => {
    const saver = newSaver();
    const part = (name: string) => `${name.repeat(110)}:${randomUUID()}`;
    const nested = `${part("a")}|${part("b")}`;
    const config = { configurable: { thread_id: randomUUID(), checkpoint_ns: nested } };
    const versions = { x: saver.getNextVersion(undefined) };
    const stored = await saver.put(config, checkpointWith({ x: 1 }, versions), metadata, versions);
    expect((await saver.getTuple(stored))?.checkpoint.channel_values).toEqual({ x: 1 });
    const tooLong = {
      configurable: { thread_id: randomUUID(), checkpoint_ns: `${part("c")}|${"d".repeat(300)}` },
    };
    await expect(saver.put(tooLong, checkpointWith({}, {}), metadata, {})).rejects.toThrow(
      InvalidIdentifierError,
    );
  });

  it("never removes a live thread's record or items in the cleaner, even when it restarted meanwhile", async () => {
    let now = Date.UTC(2026, 0, 1);
    const tenantId = `t-${randomUUID()}`;
    const threadId = randomUUID();
    await putValues(newSaver(tenantId, { ttlSeconds: 60, now: () => now }), threadId, { old: 1 });
    now = pastExpiry(60, now);
    // The thread starts again (a new generation) after the record expired, before the cleaner runs.
    await putValues(newSaver(tenantId, { ttlSeconds: 60, now: () => now }), threadId, { fresh: 1 });
    await removeThreadLeftovers(
      new TableClient(table.client, table.tableName),
      threadPartitionKey(tenantId, threadId),
      () => now,
    );
    const tuple = await newSaver(tenantId, { ttlSeconds: 60, now: () => now }).getTuple({
      configurable: { thread_id: threadId },
    });
    expect(tuple?.checkpoint.channel_values).toEqual({ fresh: 1 });
  });
});
