import { createHash, randomBytes, randomUUID } from "node:crypto";
import {
  emptyCheckpoint,
  uuid6,
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
} from "@langchain/langgraph-checkpoint";
import { DynamoDBSaver } from "../../../src";
import { useSaverTable } from "./saver-fixtures";

// Promise: any input within the documented limits (identifiers of at most 256 characters, a checkpoint with its
// new channel values of at most maxCheckpointBytes) is stored, however its values are sized and however many
// there are. DynamoDB's 400 KB item limit is the saver's to respect: a raw ValidationException never reaches
// the caller. DynamoDB Local enforces that limit as DynamoDB does.

const table = useSaverTable("item-limits");

const { newSaver } = table;

/**
 * A random base64 string of `length` characters. The saver brotli-compresses values; random base64 shrinks to
 * about three quarters at best (6 bits of entropy a character), so sizes below are chosen with that in mind.
 */
function incompressible(length: number): string {
  return randomBytes(Math.ceil((length * 3) / 4))
    .toString("base64")
    .slice(0, length);
}

const baseMetadata: CheckpointMetadata = { source: "loop", step: 0, parents: {} };

/**
 * The next checkpoint of a thread as LangGraph builds it: every channel's value and version, with `changed`
 * getting fresh versions (returned as `newVersions`, the only values a put has to store).
 */
function nextCheckpoint(
  saver: DynamoDBSaver,
  previous: Checkpoint | undefined,
  changed: Record<string, unknown>,
): { checkpoint: Checkpoint; newVersions: Record<string, number> } {
  const newVersions = Object.fromEntries(
    Object.keys(changed).map((channel) => [
      channel,
      saver.getNextVersion(previous?.channel_versions[channel] as number | undefined),
    ]),
  );
  return {
    checkpoint: {
      ...emptyCheckpoint(),
      id: uuid6(-3),
      channel_values: { ...previous?.channel_values, ...changed },
      channel_versions: { ...previous?.channel_versions, ...newVersions },
    },
    newVersions,
  };
}

/** Awaits a saver call; DynamoDB's own refusal of an item escaping it fails the test by name and message. */
async function withoutValidationException<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    const { name, message } = error as Error;
    expect({ name, message }).not.toMatchObject({ name: "ValidationException" });
    throw error;
  }
}

async function putNext(
  saver: DynamoDBSaver,
  threadId: string,
  previous: Checkpoint | undefined,
  changed: Record<string, unknown>,
  metadata: CheckpointMetadata = baseMetadata,
): Promise<Checkpoint> {
  const { checkpoint, newVersions } = nextCheckpoint(saver, previous, changed);
  await withoutValidationException(
    saver.put(
      { configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: previous?.id } },
      checkpoint,
      metadata,
      newVersions,
    ),
  );
  return checkpoint;
}

/** A short, diffable stand-in for a large value: a failure names the channel instead of printing megabytes. */
function fingerprint(value: unknown): string {
  const json = JSON.stringify(value) ?? "undefined";
  return `${json.length}:${createHash("sha256").update(json).digest("hex").slice(0, 16)}`;
}

function fingerprints(values: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values).map(([key, value]) => [key, fingerprint(value)]),
  );
}

function summary(tuple: CheckpointTuple | undefined) {
  if (!tuple) return undefined;
  const { channel_values: values, ...rest } = tuple.checkpoint;
  return {
    checkpoint: rest,
    values: fingerprints(values),
    metadata: fingerprints((tuple.metadata ?? {}) as Record<string, unknown>),
    pendingWrites: (tuple.pendingWrites ?? []).map(([taskId, channel, value]) => [
      taskId,
      channel,
      fingerprint(value),
    ]),
  };
}

/**
 * Reads the checkpoint back with saver instances that share nothing with the writer (getTuple, then list) and
 * expects exactly what was put, with `pendingWrites` in LangGraph's order.
 */
async function expectRoundTrip(
  tenantId: string,
  threadId: string,
  checkpoint: Checkpoint,
  metadata: CheckpointMetadata,
  pendingWrites: Array<[string, string, unknown]> = [],
): Promise<void> {
  const config = {
    configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: checkpoint.id },
  };
  const read = await withoutValidationException(newSaver(tenantId).getTuple(config));
  const { channel_values: values, ...rest } = checkpoint;
  expect(summary(read)).toEqual({
    checkpoint: rest,
    values: fingerprints(values),
    metadata: fingerprints(metadata as Record<string, unknown>),
    pendingWrites: pendingWrites.map(([taskId, channel, value]) => [
      taskId,
      channel,
      fingerprint(value),
    ]),
  });
  const listed: CheckpointTuple[] = [];
  for await (const tuple of newSaver(tenantId).list(config)) listed.push(tuple);
  expect(listed.map(summary)).toEqual([summary(read)]);
}

function asPendingWrites(taskId: string, writes: PendingWrite[]): Array<[string, string, unknown]> {
  return writes.map(([channel, value]) => [taskId, channel, value]);
}

describe("DynamoDBSaver stores checkpoints of any shape within the documented limits (integration)", () => {
  it("stores one put with 40 changed channels of about 60 KB each (2.4 MB in all)", async () => {
    const saver = newSaver();
    const threadId = randomUUID();
    const changed = Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [`channel_${i}`, incompressible(60_000)]),
    );
    const checkpoint = await putNext(saver, threadId, undefined, changed);
    await expectRoundTrip(saver.tenantId, threadId, checkpoint, baseMetadata);
  });

  it("stores one put mixing 200 small values, five of 100 KB and one of 1.5 MB", async () => {
    const saver = newSaver();
    const threadId = randomUUID();
    const changed: Record<string, unknown> = {};
    for (let i = 0; i < 200; i += 1) changed[`small_${i}`] = { step: i, note: `value ${i}` };
    for (let i = 0; i < 5; i += 1) changed[`medium_${i}`] = incompressible(100_000);
    changed.document = incompressible(1_500_000);
    const checkpoint = await putNext(saver, threadId, undefined, changed);
    await expectRoundTrip(saver.tenantId, threadId, checkpoint, baseMetadata);
  });

  it("stores a checkpoint whose metadata is about 500 KB (user data, within maxCheckpointBytes)", async () => {
    const saver = newSaver();
    const threadId = randomUUID();
    const metadata = {
      ...baseMetadata,
      transcript: incompressible(500_000),
    } as CheckpointMetadata;
    const checkpoint = await putNext(saver, threadId, undefined, { answer: 42 }, metadata);
    await expectRoundTrip(saver.tenantId, threadId, checkpoint, metadata);
  });

  it("stores a checkpoint of 3,000 channels whose unchanged values live in its parent", async () => {
    const saver = newSaver();
    const threadId = randomUUID();
    // LangGraph names channels after nodes (`branch:to:<node>`): names of a few dozen characters are usual.
    const channel = (i: number) => `branch:to:extract_entities_from_document_${i}`;
    const initial = Object.fromEntries(
      Array.from({ length: 3_000 }, (_, i) => [channel(i), { step: i, note: incompressible(150) }]),
    );
    const parent = await putNext(saver, threadId, undefined, initial);
    const changed = Object.fromEntries(
      Array.from({ length: 30 }, (_, i) => [channel(i * 100), { step: i, changed: true }]),
    );
    const child = await putNext(saver, threadId, parent, changed, { ...baseMetadata, step: 1 });
    await expectRoundTrip(saver.tenantId, threadId, parent, baseMetadata);
    await expectRoundTrip(saver.tenantId, threadId, child, { ...baseMetadata, step: 1 });
  }, 45_000);
});

describe("DynamoDBSaver stores pending writes of any shape within the documented limits (integration)", () => {
  it("stores one putWrites call of ten 60 KB writes and one of 100 KB", async () => {
    const saver = newSaver();
    const threadId = randomUUID();
    const checkpoint = await putNext(saver, threadId, undefined, { seed: 1 });
    const config = {
      configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: checkpoint.id },
    };
    const writes: PendingWrite[] = [
      ...Array.from({ length: 10 }, (_, i): PendingWrite => [`part_${i}`, incompressible(60_000)]),
      ["summary", incompressible(100_000)],
    ];
    const taskId = randomUUID();
    await withoutValidationException(saver.putWrites(config, writes, taskId));
    await expectRoundTrip(
      saver.tenantId,
      threadId,
      checkpoint,
      baseMetadata,
      asPendingWrites(taskId, writes),
    );
  });

  it("stores one putWrites call of 5,000 tiny writes", async () => {
    const saver = newSaver();
    const threadId = randomUUID();
    const checkpoint = await putNext(saver, threadId, undefined, { seed: 1 });
    const config = {
      configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: checkpoint.id },
    };
    const writes = Array.from({ length: 5_000 }, (_, i): PendingWrite => [`item_${i}`, i]);
    // LangGraph's task ids are uuids.
    const taskId = randomUUID();
    await withoutValidationException(saver.putWrites(config, writes, taskId));
    await expectRoundTrip(
      saver.tenantId,
      threadId,
      checkpoint,
      baseMetadata,
      asPendingWrites(taskId, writes),
    );
  });

  it.each([
    ["after the checkpoint's put has finished", false],
    ["while the checkpoint's put is in flight", true],
  ])(
    "stores two parallel putWrites calls of about 300 KB each (compressed) in small pieces %s",
    async (_when, concurrentWithPut) => {
      const saver = newSaver();
      const threadId = randomUUID();
      const { checkpoint, newVersions } = nextCheckpoint(saver, undefined, { seed: 1 });
      const put = () =>
        withoutValidationException(
          saver.put(
            { configurable: { thread_id: threadId, checkpoint_ns: "" } },
            checkpoint,
            baseMetadata,
            newVersions,
          ),
        );
      const config = {
        configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: checkpoint.id },
      };
      // Two parallel tasks; their ids sort "a" before "b", which is the order pendingWrites must keep.
      const tasks = ["a", "b"].map((prefix) => ({
        taskId: `${prefix}-${randomUUID()}`,
        // 400 pieces of 1,000 characters: about 300 KB per call even once compressed.
        writes: Array.from({ length: 400 }, (_, i): PendingWrite => [
          `piece_${i}`,
          incompressible(1_000),
        ]),
      }));
      const writeAll = () =>
        Promise.all(
          tasks.map(({ taskId, writes }) =>
            withoutValidationException(saver.putWrites(config, writes, taskId)),
          ),
        );
      if (concurrentWithPut) {
        await Promise.all([put(), writeAll()]);
      } else {
        await put();
        await writeAll();
      }
      await expectRoundTrip(
        saver.tenantId,
        threadId,
        checkpoint,
        baseMetadata,
        tasks.flatMap(({ taskId, writes }) => asPendingWrites(taskId, writes)),
      );
    },
  );
});
