import { randomBytes, randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { PutItemCommand, QueryCommand } from "@aws-sdk/client-dynamodb";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  emptyCheckpoint,
  uuid6,
  type CheckpointTuple,
  type PendingWrite,
} from "@langchain/langgraph-checkpoint";
import type { DynamoDBSaver } from "../../../src/checkpoint/dynamodb/saver";
import { supportsCheckpointRollback } from "../../../src/shared/checkpoint-rollback";
import { InvalidIdentifierError } from "../../../src/shared/errors";
import { runEventSortKey, runSortKey, threadPartitionKey } from "../../../src/table/keys";
import {
  allWritesBut,
  faultInjectingClient,
  firstWrites,
  type CrashPoint,
  type RequestRecord,
} from "../../support/fault-injection";
import { instrumentedClient, useSaverTable } from "./saver-fixtures";

// A rollback deletes the rolled-back run's checkpoints (LangGraph Server forgets them at once): every read must
// then see the thread as before the run. A process can die at any request of the deletion; DynamoDB Local cannot
// kill one on demand, so the death is injected with SDK middleware (test/support/fault-injection.ts) and a new
// saver on a fresh client (a new container) must find the thread readable, every checkpoint whole.

const table = useSaverTable("delete-after");
const TEST_TIMEOUT_MS = 60_000;

function incompressible(length: number): string {
  return randomBytes(Math.ceil((length * 3) / 4))
    .toString("base64")
    .slice(0, length);
}

type Values = Record<string, unknown>;

interface Put {
  name: string;
  namespace: string;
  id: string;
  values: Values;
  versions: Record<string, string | number>;
}

interface WriteCall {
  namespace: string;
  checkpointId: string;
  taskId: string;
  writes: PendingWrite[];
}

/** What the test wrote to one thread, to compare every read with. */
class Thread {
  readonly puts: Put[] = [];
  readonly writeCalls: WriteCall[] = [];

  constructor(readonly threadId: string) {}

  config(namespace: string, id?: string): RunnableConfig {
    return {
      configurable: { thread_id: this.threadId, checkpoint_ns: namespace, checkpoint_id: id },
    };
  }

  named(name: string): Put {
    return this.puts.find((put) => put.name === name)!;
  }

  async put(
    saver: DynamoDBSaver,
    name: string,
    namespace: string,
    parent: Put | undefined,
    changes: Values,
  ) {
    const versions = { ...parent?.versions };
    const newVersions: Record<string, number> = {};
    for (const channel of Object.keys(changes)) {
      newVersions[channel] = saver.getNextVersion(versions[channel] as number | undefined);
      versions[channel] = newVersions[channel]!;
    }
    const values = { ...parent?.values, ...changes };
    const checkpoint = {
      ...emptyCheckpoint(),
      id: uuid6(-3),
      channel_values: values,
      channel_versions: versions,
    };
    await saver.put(
      this.config(namespace, parent?.id),
      checkpoint,
      { source: "loop", step: this.puts.length, parents: {} },
      newVersions,
    );
    const put = { name, namespace, id: checkpoint.id, values, versions };
    this.puts.push(put);
    return put;
  }

  async putWrites(
    saver: DynamoDBSaver,
    namespace: string,
    checkpointId: string,
    taskId: string,
    writes: PendingWrite[],
  ) {
    await saver.putWrites(this.config(namespace, checkpointId), writes, taskId);
    this.writeCalls.push({ namespace, checkpointId, taskId, writes });
  }
}

/**
 * A thread of two root checkpoints and one subgraph checkpoint kept (B is the fork point, with writes), then what a
 * rolled-back run added: three root checkpoints (a value in chunks, a chunked putWrites call), two more checkpoints
 * of the subgraph namespace and one of a new one, writes for a checkpoint whose put never came.
 */
async function buildThread(
  saver: DynamoDBSaver,
): Promise<{ thread: Thread; kept: string[]; doomed: string[] }> {
  const thread = new Thread(randomUUID());
  const a = await thread.put(saver, "A", "", undefined, {
    question: "q",
    notes: incompressible(90_000),
  });
  const s1 = await thread.put(saver, "S1", "child:1", undefined, { inner: 1 });
  const b = await thread.put(saver, "B", "", a, { answer: "first" });
  await thread.putWrites(saver, "", b.id, "task-b", [["answer", "pending"]]);
  const c = await thread.put(saver, "C", "", b, {
    answer: "second",
    draft: incompressible(150_000),
  });
  await thread.putWrites(saver, "", c.id, "task-c", [["answer", "third"]]);
  const s2 = await thread.put(saver, "S2", "child:1", s1, { inner: 2 });
  const d = await thread.put(saver, "D", "", c, { answer: "third" });
  await thread.putWrites(saver, "", d.id, "task-d", [
    ["attachment", incompressible(300_000)],
    ["answer", "fourth"],
  ]);
  await thread.put(saver, "S3", "child:1", s2, { inner: 3 });
  await thread.put(saver, "T1", "child:2", undefined, { other: incompressible(80_000) });
  await thread.put(saver, "E", "", d, { answer: "fourth" });
  // Writes for a checkpoint whose put never landed: nothing reads them, the rollback still removes them.
  await saver.putWrites(thread.config("", uuid6(-3)), [["answer", "lost"]], "task-lost");
  return { thread, kept: ["A", "S1", "B"], doomed: ["C", "S2", "D", "S3", "T1", "E"] };
}

async function listAll(saver: DynamoDBSaver, config: RunnableConfig): Promise<CheckpointTuple[]> {
  const tuples: CheckpointTuple[] = [];
  for await (const tuple of saver.list(config)) tuples.push(tuple);
  return tuples;
}

/** Everything a reader sees of the thread: the listing and the latest of each namespace, by checkpoint name. */
async function readThread(saver: DynamoDBSaver, thread: Thread) {
  const namespaces = [...new Set(thread.puts.map((put) => put.namespace))];
  const listed = await listAll(saver, { configurable: { thread_id: thread.threadId } });
  const latest = new Map<string, string | undefined>();
  for (const namespace of namespaces) {
    const tuple = await saver.getTuple(thread.config(namespace));
    latest.set(namespace, tuple && nameOf(thread, tuple));
  }
  const byId = new Map<string, CheckpointTuple | undefined>();
  for (const put of thread.puts)
    byId.set(put.name, await saver.getTuple(thread.config(put.namespace, put.id)));
  return { listed, latest, byId };
}

function nameOf(thread: Thread, tuple: CheckpointTuple): string {
  const id = tuple.checkpoint.id;
  return thread.puts.find((put) => put.id === id)?.name ?? `unknown ${id}`;
}

/** A tuple must be a checkpoint that was put, its values whole, each putWrites call's writes all there or none. */
function wholeness(thread: Thread, tuple: CheckpointTuple): string[] {
  const put = thread.puts.find((candidate) => candidate.id === tuple.checkpoint.id);
  if (!put) return [`read ${tuple.checkpoint.id}, never put`];
  const violations: string[] = [];
  if (!isDeepStrictEqual(tuple.checkpoint.channel_values, put.values))
    violations.push(`${put.name} has other values`);
  for (const call of thread.writeCalls.filter((candidate) => candidate.checkpointId === put.id)) {
    const found = (tuple.pendingWrites ?? []).filter(([taskId]) => taskId === call.taskId);
    const whole = call.writes.map(([channel, value]) => [call.taskId, channel, value]);
    if (found.length > 0 && !isDeepStrictEqual(found, whole))
      violations.push(`${put.name} has part of ${call.taskId}`);
  }
  return violations;
}

/** Sort keys stored in the thread's partition. */
async function partitionKeys(tenantId: string, threadId: string): Promise<string[]> {
  const { Items } = await table.client.send(
    new QueryCommand({
      TableName: table.tableName,
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": { S: threadPartitionKey(tenantId, threadId) } },
      ConsistentRead: true,
    }),
  );
  return (Items ?? []).map((item) => item.sk!.S!);
}

describe("DynamoDBSaver.deleteCheckpointsAfter on DynamoDB Local", () => {
  it("declares the capability", () => {
    expect(supportsCheckpointRollback(table.newSaver())).toBe(true);
  });

  it("reads the thread exactly as before the rolled-back checkpoints, in every namespace, with one Query and a step per checkpoint", async () => {
    const tenantId = `t-${randomUUID()}`;
    const writer = table.newSaver(tenantId);
    const { thread, doomed } = await buildThread(writer);
    const fork = thread.named("B");
    const reader = table.newSaver(tenantId);
    const all = await readThread(reader, thread);
    expect(all.latest.get("")).toBe("E");
    expect(all.listed).toHaveLength(9);

    const counted = instrumentedClient();
    await table
      .newSaver(tenantId, { client: counted.client })
      .deleteCheckpointsAfter(thread.threadId, fork.id);
    // The longest namespace lost three checkpoints: three steps, and one for the last one's writes and chunks.
    expect(counted.requests).toEqual(["QueryCommand", ...Array(4).fill("BatchWriteItemCommand")]);
    counted.client.destroy();

    const after = await readThread(table.newSaver(tenantId), thread);
    expect(after.listed.map((tuple) => nameOf(thread, tuple))).toEqual(["B", "S1", "A"]);
    expect(Object.fromEntries(after.latest)).toEqual({
      "": "B",
      "child:1": "S1",
      "child:2": undefined,
    });
    for (const name of doomed) expect(after.byId.get(name)).toBeUndefined();
    // What stays is what was there: the same tuples as before, the fork point's pending writes included.
    for (const tuple of after.listed) {
      expect(tuple).toEqual(
        all.listed.find((before) => before.checkpoint.id === tuple.checkpoint.id),
      );
      expect(wholeness(thread, tuple)).toEqual([]);
    }
    expect(after.byId.get("B")?.pendingWrites).toEqual([["task-b", "answer", "pending"]]);
    // No item of a deleted checkpoint is left behind (writes without a checkpoint included).
    const left = await partitionKeys(tenantId, thread.threadId);
    expect(left.filter((sk) => sk !== "m" && !sk.startsWith("c#") && !sk.startsWith("n#"))).toEqual(
      [],
    );
    expect(left.length).toBeLessThan(10);
  });

  it("given the latest checkpoint, removes only writes newer than it, then is a no-op: one keys-only Query", async () => {
    const tenantId = `t-${randomUUID()}`;
    const writer = table.newSaver(tenantId);
    const { thread } = await buildThread(writer);
    const latest = thread.named("E");
    const before = await partitionKeys(tenantId, thread.threadId);
    const counted = instrumentedClient();
    await table
      .newSaver(tenantId, { client: counted.client })
      .deleteCheckpointsAfter(thread.threadId, latest.id);
    counted.client.destroy();
    // Only the writes whose put never landed are newer than E.
    expect(counted.requests).toEqual(["QueryCommand", "BatchWriteItemCommand"]);
    expect((await partitionKeys(tenantId, thread.threadId)).length).toBe(before.length - 1);
    const counted2 = instrumentedClient();
    await table
      .newSaver(tenantId, { client: counted2.client })
      .deleteCheckpointsAfter(thread.threadId, latest.id);
    counted2.client.destroy();
    expect(counted2.requests).toEqual(["QueryCommand"]);
    expect((await table.newSaver(tenantId).getTuple(thread.config("")))?.checkpoint.id).toBe(
      latest.id,
    );
  });

  it("deletes every checkpoint for undefined but keeps the thread record, its runs and their events", async () => {
    const tenantId = `t-${randomUUID()}`;
    const saver = table.newSaver(tenantId);
    const { thread } = await buildThread(saver);
    const pk = threadPartitionKey(tenantId, thread.threadId);
    const runId = randomUUID();
    for (const sk of [runSortKey(runId), runEventSortKey(runId, 0, 0)]) {
      await table.client.send(
        new PutItemCommand({
          TableName: table.tableName,
          Item: { pk: { S: pk }, sk: { S: sk }, k: { S: "r" } },
        }),
      );
    }

    await saver.deleteCheckpointsAfter(thread.threadId, undefined);
    expect(await partitionKeys(tenantId, thread.threadId)).toEqual([
      "m",
      runSortKey(runId),
      runEventSortKey(runId, 0, 0),
    ]);
    expect(await saver.getTuple(thread.config(""))).toBeUndefined();
    expect(await listAll(saver, { configurable: { thread_id: thread.threadId } })).toEqual([]);
    // The thread lives on: the next checkpoint is stored and read back whole.
    const next = await thread.put(saver, "next", "", undefined, { answer: "again" });
    expect(
      (await table.newSaver(tenantId).getTuple(thread.config("")))?.checkpoint.channel_values,
    ).toEqual(next.values);
  });

  it("forgets what its cache knew of the deleted checkpoints: a put on a deleted parent stores every value", async () => {
    const tenantId = `t-${randomUUID()}`;
    const saver = table.newSaver(tenantId);
    const { thread } = await buildThread(saver);
    await saver.deleteCheckpointsAfter(thread.threadId, thread.named("B").id);
    // LangGraph never does this, but a stale cache would make the child refer to C's and D's values, now gone.
    const orphan = await thread.put(saver, "orphan", "", thread.named("E"), { answer: "late" });
    const read = await table.newSaver(tenantId).getTuple(thread.config("", orphan.id));
    expect(read?.checkpoint.channel_values).toEqual(orphan.values);
  });

  it("takes a graph with a subgraph back to before its second run: state, history and the next run", async () => {
    const State = Annotation.Root({ n: Annotation<number>(), note: Annotation<string>() });
    const child = new StateGraph(State)
      .addNode("increment", (state) => ({ n: state.n + 1 }))
      .addEdge(START, "increment")
      .addEdge("increment", END)
      .compile();
    const saver = table.newSaver();
    const graph = new StateGraph(State)
      .addNode("child", child)
      .addNode("annotate", (state) => ({ note: `saw ${state.n}` }))
      .addEdge(START, "child")
      .addEdge("child", "annotate")
      .addEdge("annotate", END)
      .compile({ checkpointer: saver });
    const config = { configurable: { thread_id: randomUUID() } };
    await graph.invoke({ n: 1 }, config);
    const history = async () => {
      const states = [];
      for await (const state of graph.getStateHistory(config)) states.push(state);
      return states;
    };
    const before = { state: await graph.getState(config), history: await history() };
    const everything = await listAll(saver, {
      configurable: { thread_id: config.configurable.thread_id },
    });

    const second = await graph.invoke({ n: 10 }, config);
    await saver.deleteCheckpointsAfter(
      config.configurable.thread_id,
      before.state.config.configurable!.checkpoint_id as string,
    );
    expect({ state: await graph.getState(config), history: await history() }).toEqual(before);
    expect(
      await listAll(saver, { configurable: { thread_id: config.configurable.thread_id } }),
    ).toEqual(everything);
    expect(await graph.invoke({ n: 10 }, config)).toEqual(second);
  });

  it("refuses invalid ids before sending anything", async () => {
    const counted = instrumentedClient();
    const saver = table.newSaver(undefined, { client: counted.client });
    await expect(saver.deleteCheckpointsAfter("", undefined)).rejects.toThrow(
      InvalidIdentifierError,
    );
    await expect(saver.deleteCheckpointsAfter("t", "")).rejects.toThrow(InvalidIdentifierError);
    expect(counted.requests).toEqual([]);
    counted.client.destroy();
  });
});

// ---------------------------------------------------------------- crashes

/** A crash after each request, and inside each BatchWriteItem with the first j, or all but one, processed. */
function crashPoints(requests: readonly RequestRecord[]): Array<CrashPoint & { label: string }> {
  const points: Array<CrashPoint & { label: string }> = [];
  for (let after = 0; after <= requests.length; after += 1) {
    points.push({ after, label: `crash after ${after} of ${requests.length} requests` });
  }
  requests.forEach((request, index) => {
    const size = request.writeRequests ?? 0;
    for (let count = 1; count < size; count += 1) {
      points.push({
        after: index,
        processed: firstWrites(count),
        label: `crash in request ${index + 1} with its first ${count} of ${size} processed`,
      });
    }
    for (let skipped = 0; skipped < size - 1; skipped += 1) {
      points.push({
        after: index,
        processed: allWritesBut(skipped),
        label: `crash in request ${index + 1} with all but write ${skipped + 1} of ${size} processed`,
      });
    }
  });
  return points;
}

/** What a new container must find after a rollback died: see the checks below. */
async function violationsAfterCrash(tenantId: string, point: CrashPoint): Promise<string[]> {
  const { thread, kept, doomed } = await buildThread(table.newSaver(tenantId));
  const fork = thread.named("B");
  const faults = faultInjectingClient();
  faults.crashAt(point);
  const violations: string[] = [];
  await table
    .newSaver(tenantId, { client: faults.client })
    .deleteCheckpointsAfter(thread.threadId, fork.id)
    .catch((error: unknown) => {
      if (!faults.crashed) violations.push(`the rollback failed: ${String(error)}`);
    });
  faults.crash();
  await faults.quiesce();
  faults.destroy();

  let seen: Awaited<ReturnType<typeof readThread>>;
  try {
    seen = await readThread(table.newSaver(tenantId), thread);
  } catch (error) {
    return [`a read threw ${String(error)}`];
  }
  const readable = thread.puts
    .filter((put) => seen.byId.get(put.name) !== undefined)
    .map((put) => put.name);
  for (const tuple of [
    ...seen.listed,
    ...[...seen.byId.values()].filter((tuple) => tuple !== undefined),
  ]) {
    violations.push(...wholeness(thread, tuple));
  }
  for (const name of kept)
    if (!readable.includes(name)) violations.push(`${name} is gone, it was to stay`);
  if (seen.byId.get("B")?.pendingWrites?.length !== 1)
    violations.push("the fork point lost its writes");
  const listedNames = seen.listed.map((tuple) => nameOf(thread, tuple)).sort();
  if (!isDeepStrictEqual(listedNames, [...readable].sort()))
    violations.push(`list gives ${listedNames}, getTuple ${readable}`);
  for (const namespace of new Set(thread.puts.map((put) => put.namespace))) {
    const inNamespace = thread.puts.filter((put) => put.namespace === namespace);
    // Newest first: what is left of the rolled-back checkpoints of a namespace is its oldest ones.
    const left = inNamespace.filter(
      (put) => doomed.includes(put.name) && readable.includes(put.name),
    );
    const oldest = inNamespace.filter((put) => doomed.includes(put.name)).slice(0, left.length);
    if (!isDeepStrictEqual(left, oldest))
      violations.push(
        `"${namespace}" kept ${left.map((put) => put.name)} of its deleted checkpoints, not the oldest`,
      );
    const newest = inNamespace.filter((put) => readable.includes(put.name)).at(-1)?.name;
    if (seen.latest.get(namespace) !== newest)
      violations.push(`latest of "${namespace}" is ${seen.latest.get(namespace)}, not ${newest}`);
  }
  // Running the rollback again (the run machinery retries) finishes it.
  await table.newSaver(tenantId).deleteCheckpointsAfter(thread.threadId, fork.id);
  const finished = await readThread(table.newSaver(tenantId), thread);
  const finishedNames = finished.listed.map((tuple) => nameOf(thread, tuple));
  if (!isDeepStrictEqual(finishedNames, ["B", "S1", "A"]))
    violations.push(`after a retry the thread lists ${finishedNames}`);
  return violations.map(
    (violation) =>
      `${JSON.stringify(point.after)}${point.processed ? "+partial" : ""}: ${violation}`,
  );
}

describe("DynamoDBSaver.deleteCheckpointsAfter after a crash (process death injected with SDK middleware)", () => {
  it(
    "leaves every checkpoint whole, the newest of each namespace gone first, when the rollback dies after any request or inside a batch",
    async () => {
      const tenantId = `t-${randomUUID()}`;
      const { thread } = await buildThread(table.newSaver(tenantId));
      const counting = faultInjectingClient();
      await table
        .newSaver(tenantId, { client: counting.client })
        .deleteCheckpointsAfter(thread.threadId, thread.named("B").id);
      const requests = [...counting.requests];
      counting.destroy();
      expect(requests.map((request) => request.command)).toEqual([
        "Query",
        ...Array(4).fill("BatchWriteItem"),
      ]);

      const violations: string[] = [];
      const points = crashPoints(requests);
      for (let index = 0; index < points.length; index += 3) {
        const found = await Promise.all(
          points
            .slice(index, index + 3)
            .map(async (point) =>
              (await violationsAfterCrash(tenantId, point)).map(
                (violation) => `${point.label}: ${violation}`,
              ),
            ),
        );
        violations.push(...found.flat());
      }
      expect(points.length).toBeGreaterThan(10);
      expect(violations).toEqual([]);
    },
    TEST_TIMEOUT_MS * 3,
  );
});
