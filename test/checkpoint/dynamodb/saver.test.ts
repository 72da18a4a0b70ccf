import { randomBytes, randomUUID } from "node:crypto";
import { DynamoDBClient, QueryCommand } from "@aws-sdk/client-dynamodb";
import { Annotation, Command, END, START, StateGraph } from "@langchain/langgraph";
import { emptyCheckpoint, uuid6, type Checkpoint } from "@langchain/langgraph-checkpoint";
import { DynamoDBSaver } from "../../../src/checkpoint/dynamodb/saver";
import { threadPartitionKey } from "../../../src/table/keys";
import { TableClient } from "../../../src/table/client";
import { ExpiryPolicy } from "../../../src/table/expiry";
import { removeThreadLeftovers } from "../../../src/table/thread-removal";
import { THREADS_BY_STATUS_INDEX } from "../../../src/table/definition";
import { CheckpointTooLargeError, InvalidIdentifierError } from "../../../src/shared/errors";
import { buildBookingGraph } from "../../../src/examples/booking";
import { createLocalClient, createTestTable, localEndpoint } from "../../support/dynamodb";
import { LOCAL_CLIENT_CONFIG } from "../../support/dynamodb-local";

// DynamoDBSaver against DynamoDB Local (integration). Faults DynamoDB Local cannot produce on demand
// (throttling, a process dying mid-put) are injected with AWS SDK middleware and named as such.

let client: DynamoDBClient;
let tableName: string;

beforeAll(async () => {
  client = createLocalClient();
  tableName = await createTestTable(client, "saver");
});
afterAll(() => client.destroy());

function newSaver(
  tenantId = `tenant-${randomUUID()}`,
  options: Partial<ConstructorParameters<typeof DynamoDBSaver>[0]> = {},
) {
  return new DynamoDBSaver({ tableName, client, tenantId, ...options });
}

/** A client whose requests are counted (and optionally tampered with by `intercept`). */
function instrumentedClient(
  intercept?: (command: string, input: Record<string, unknown>) => unknown,
): { client: DynamoDBClient; requests: string[] } {
  const requests: string[] = [];
  const instrumented = new DynamoDBClient({ ...LOCAL_CLIENT_CONFIG, endpoint: localEndpoint() });
  instrumented.middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName);
      requests.push(command);
      const replaced = intercept?.(command, args.input as Record<string, unknown>);
      if (replaced !== undefined) return replaced as Awaited<ReturnType<typeof next>>;
      return next(args);
    },
    { step: "initialize", name: "testInterceptor" },
  );
  return { client: instrumented, requests };
}

function checkpointWith(
  values: Record<string, unknown>,
  versions: Record<string, number>,
): Checkpoint {
  return {
    ...emptyCheckpoint(),
    id: uuid6(-3),
    channel_values: values,
    channel_versions: versions,
  };
}

const metadata = { source: "loop" as const, step: 0, parents: {} };

/** A moment just past the expiry of a thread last written at `writtenAt` (its TTL plus renewal headroom). */
function pastExpiry(ttlSeconds: number, writtenAt: number): number {
  return new ExpiryPolicy(ttlSeconds).renewedExpiry(writtenAt) * 1000 + 1000;
}

async function putValues(
  saver: DynamoDBSaver,
  threadId: string,
  values: Record<string, unknown>,
  parentId?: string,
) {
  const versions = Object.fromEntries(
    Object.keys(values).map((key) => [key, saver.getNextVersion(undefined)]),
  );
  const checkpoint = checkpointWith(values, versions);
  return saver.put(
    { configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: parentId } },
    checkpoint,
    metadata,
    versions,
  );
}

describe("DynamoDBSaver tenancy (integration)", () => {
  it("keeps tenants apart: B cannot read, list, resume or delete A's thread with the same thread id", async () => {
    const threadId = "shared-thread";
    const tenantA = newSaver();
    const tenantB = newSaver();
    await putValues(tenantA, threadId, { secret: "of A" });

    expect(await tenantB.getTuple({ configurable: { thread_id: threadId } })).toBeUndefined();
    const listed = [];
    for await (const tuple of tenantB.list({ configurable: { thread_id: threadId } }))
      listed.push(tuple);
    for await (const tuple of tenantB.list({})) listed.push(tuple);
    expect(listed).toHaveLength(0);

    const graphB = buildBookingGraph({ checkpointer: tenantB });
    const resumed = await graphB.getState({ configurable: { thread_id: threadId } });
    expect(resumed.values).toEqual({});

    await tenantB.deleteThread(threadId);
    const stillThere = await tenantA.getTuple({ configurable: { thread_id: threadId } });
    expect(stillThere?.checkpoint.channel_values).toEqual({ secret: "of A" });
  });

  it.each([
    ["a tenant id with #", () => newSaver("acme#evil")],
    ["an empty tenant id", () => newSaver("")],
  ])("rejects %s at construction", (_name, build) => {
    expect(build).toThrow(InvalidIdentifierError);
  });

  it("escapes # in thread ids so no two (tenant, thread) pairs share a partition key", () => {
    expect(threadPartitionKey("a", "b#c")).not.toBe(threadPartitionKey("a", "b%23c"));
    expect(threadPartitionKey("a", "b#c")).not.toBe(threadPartitionKey("a", "b") + "#c");
  });

  it.each([
    ["an empty thread id", ""],
    ["a thread id with a control character", "bad\u0000id"],
    ["a thread id over 256 characters", "x".repeat(257)],
  ])("rejects %s before any request", async (_name, threadId) => {
    const { client: counted, requests } = instrumentedClient();
    const saver = new DynamoDBSaver({ tableName, client: counted, tenantId: "t1" });
    await expect(saver.getTuple({ configurable: { thread_id: threadId } })).rejects.toThrow(
      InvalidIdentifierError,
    );
    await expect(putValues(saver, threadId, { a: 1 })).rejects.toThrow(InvalidIdentifierError);
    expect(requests).toEqual([]);
    counted.destroy();
  });
});

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
      tableName,
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
    const doomed = new DynamoDBSaver({ tableName, client: dying, tenantId });
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
    const saver = new DynamoDBSaver({ tableName, client: flaky, tenantId: `t-${randomUUID()}` });
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
    const reader = new DynamoDBSaver({ tableName, client: flaky, tenantId });
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
    const remaining = await client.send(
      new QueryCommand({
        TableName: tableName,
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
    const reader = new DynamoDBSaver({ tableName, client: counted, tenantId: saver.tenantId });
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
      tableName,
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

describe("DynamoDBSaver expiry (integration)", () => {
  it("reads an expired thread as absent at once and never revives its items", async () => {
    let now = Date.UTC(2026, 0, 1);
    const tenantId = `t-${randomUUID()}`;
    const saver = newSaver(tenantId, { ttlSeconds: 3600, now: () => now });
    const threadId = randomUUID();
    await putValues(saver, threadId, { old: "state" });
    now = pastExpiry(3600, now);
    const later = newSaver(tenantId, { ttlSeconds: 3600, now: () => now });
    expect(await later.getTuple({ configurable: { thread_id: threadId } })).toBeUndefined();
    const listed = [];
    for await (const tuple of later.list({ configurable: { thread_id: threadId } }))
      listed.push(tuple);
    expect(listed).toEqual([]);

    await putValues(later, threadId, { fresh: "start" });
    const history = [];
    for await (const tuple of later.list({ configurable: { thread_id: threadId } }))
      history.push(tuple);
    expect(history.map((tuple) => tuple.checkpoint.channel_values)).toEqual([{ fresh: "start" }]);
  });

  it("removes an expired thread's items with the cleaner and keeps a live one", async () => {
    let now = Date.UTC(2026, 0, 1);
    const tenantId = `t-${randomUUID()}`;
    const saver = newSaver(tenantId, { ttlSeconds: 60, now: () => now });
    const expired = randomUUID();
    const live = randomUUID();
    await putValues(saver, expired, { a: 1 });
    now = pastExpiry(60, now);
    await putValues(newSaver(tenantId, { ttlSeconds: 60, now: () => now }), live, { b: 2 });
    expect(
      await removeThreadLeftovers(
        new TableClient(client, tableName),
        threadPartitionKey(tenantId, expired),
        () => now,
      ),
    ).toBe(1); // its checkpoint; the record is DynamoDB TTL's to remove
    expect(
      await removeThreadLeftovers(
        new TableClient(client, tableName),
        threadPartitionKey(tenantId, live),
        () => now,
      ),
    ).toBe(0);
    const reader = newSaver(tenantId, { ttlSeconds: 60, now: () => now });
    expect(
      (await reader.getTuple({ configurable: { thread_id: live } }))!.checkpoint.channel_values,
    ).toEqual({ b: 2 });
  });
});

describe("DynamoDBSaver with a real graph (integration)", () => {
  it("pauses with one saver instance and resumes with a new one, as a second Lambda container would", async () => {
    const tenantId = `t-${randomUUID()}`;
    const config = { configurable: { thread_id: randomUUID() } };
    const booked: unknown[] = [];
    const first = buildBookingGraph({
      checkpointer: newSaver(tenantId),
      onBooked: (state) => void booked.push(state.slot),
    });
    const paused = await first.invoke({ request: "move my booking" }, config);
    expect(
      (paused as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__?.[0]?.value,
    ).toEqual({
      question: "Override the customer's slot to this time?",
      slot: "2026-09-10T14:00",
    });

    const secondSaver = newSaver(tenantId);
    const second = buildBookingGraph({
      checkpointer: secondSaver,
      onBooked: (state) => void booked.push(state.slot),
    });
    const state = await second.getState(config);
    expect(state.next).toEqual(["human_approval"]);
    const done = await second.invoke(new Command({ resume: { approve: true } }), config);
    expect(done).toEqual({
      request: "move my booking",
      slot: "2026-09-10T14:00",
      approved: true,
      booked: true,
    });
    expect(booked).toEqual(["2026-09-10T14:00"]);
  });

  it("records the status and next node on the thread record, and the inbox index finds paused threads", async () => {
    const saver = newSaver();
    const threadId = randomUUID();
    await putValues(saver, threadId, { a: 1 });
    await saver.markStatus(
      { configurable: { thread_id: threadId } },
      "PAUSED_FOR_HUMAN",
      "human_approval",
    );
    const inbox = await client.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: THREADS_BY_STATUS_INDEX.name,
        KeyConditionExpression: "tenant_status = :key",
        ExpressionAttributeValues: { ":key": { S: `${saver.tenantId}#PAUSED_FOR_HUMAN` } },
      }),
    );
    expect(inbox.Items?.map((item) => [item.thread_id?.S, item.next_node?.S])).toEqual([
      [threadId, "human_approval"],
    ]);
    await expect(
      saver.markStatus({ configurable: { thread_id: threadId } }, "SLEEPING" as never),
    ).rejects.toThrow(InvalidIdentifierError);
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
    const started = Date.now();
    await other.putWrites(config, [["a", 2]], "task-1");
    // The hold lasts 200 ms when it applies; a direct write takes a few ms on DynamoDB Local.
    expect(Date.now() - started).toBeLessThan(150);
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
      new TableClient(client, tableName),
      threadPartitionKey(tenantId, threadId),
      () => now,
    );
    const tuple = await newSaver(tenantId, { ttlSeconds: 60, now: () => now }).getTuple({
      configurable: { thread_id: threadId },
    });
    expect(tuple?.checkpoint.channel_values).toEqual({ fresh: 1 });
  });
});
