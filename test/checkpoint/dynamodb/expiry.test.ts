import { randomBytes, randomUUID } from "node:crypto";
import {
  emptyCheckpoint,
  uuid6,
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointTuple,
} from "@langchain/langgraph-checkpoint";
import { DynamoDBSaver, MemoryTableError } from "../../../src";
import { useSaverTable } from "./saver-fixtures";

// Promises: a thread never expires earlier than ttlSeconds after its last write (and an expired thread reads as
// absent), and a write landing just after a thread expired never refers to values of the expired generation.
// Time moves through the saver's `now` option; expiry is observed only through reads.

const table = useSaverTable("expiry");

const TTL_SECONDS = 7_200;
const MINUTE = 60_000;
const TTL_MS = TTL_SECONDS * 1_000;
// Years ahead of the real clock, so no expiry stamped by these tests is ever due for DynamoDB's own TTL process;
// half a second past the second, so no assertion leans on whole-second rounding.
const T0 = Date.UTC(2031, 0, 1) + 500;

/** A clock the test moves; every saver of a test shares it, as the processes of one deployment would. */
function testClock() {
  const clock = { now: T0 };
  return { clock, read: () => clock.now };
}

function newSaver(tenantId: string, now: () => number): DynamoDBSaver {
  return new DynamoDBSaver({
    tableName: table.tableName,
    client: table.client,
    tenantId,
    ttlSeconds: TTL_SECONDS,
    now,
  });
}

const metadata: CheckpointMetadata = { source: "loop", step: 0, parents: {} };

/** Puts the next checkpoint of a thread (LangGraph's way: all values and versions, `newVersions` the changed). */
async function putNext(
  saver: DynamoDBSaver,
  threadId: string,
  previous: Checkpoint | undefined,
  changed: Record<string, unknown>,
): Promise<Checkpoint> {
  const newVersions = Object.fromEntries(
    Object.keys(changed).map((channel) => [
      channel,
      saver.getNextVersion(previous?.channel_versions[channel] as number | undefined),
    ]),
  );
  const checkpoint: Checkpoint = {
    ...emptyCheckpoint(),
    id: uuid6(-3),
    channel_values: { ...previous?.channel_values, ...changed },
    channel_versions: { ...previous?.channel_versions, ...newVersions },
  };
  await saver.put(
    { configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: previous?.id } },
    checkpoint,
    metadata,
    newVersions,
  );
  return checkpoint;
}

async function listAll(saver: DynamoDBSaver, threadId: string): Promise<CheckpointTuple[]> {
  const tuples: CheckpointTuple[] = [];
  for await (const tuple of saver.list({ configurable: { thread_id: threadId } })) {
    tuples.push(tuple);
  }
  return tuples;
}

/** What a fresh instance (nothing cached) reads of the thread at the clock's time: latest id, or absent. */
async function observe(tenantId: string, threadId: string, now: () => number) {
  const reader = newSaver(tenantId, now);
  const latest = await reader.getTuple({ configurable: { thread_id: threadId } });
  const listed = await listAll(reader, threadId);
  return {
    at: `t0 + ${(now() - T0) / 1_000} s`,
    latest: latest?.checkpoint.id ?? "absent",
    listed: listed.length,
  };
}

describe("DynamoDBSaver keeps a thread at least ttlSeconds after its last write (integration)", () => {
  it.each([
    ["30 minutes", 30 * MINUTE],
    ["5 seconds", 5_000],
  ])(
    "keeps a thread written again %s after its first write until ttlSeconds after that second write",
    async (_gap, gapMs) => {
      const { clock, read } = testClock();
      const tenantId = `tenant-${randomUUID()}`;
      const threadId = randomUUID();
      const saver = newSaver(tenantId, read);
      const first = await putNext(saver, threadId, undefined, { step: 1 });
      clock.now = T0 + gapMs;
      const second = await putNext(saver, threadId, first, { step: 2 });
      const lastWrite = clock.now;

      clock.now = lastWrite + TTL_MS - 1_000;
      expect(await observe(tenantId, threadId, read)).toEqual({
        at: `t0 + ${(clock.now - T0) / 1_000} s`,
        latest: second.id,
        listed: 2,
      });
      clock.now = lastWrite + 2 * TTL_MS;
      expect(await observe(tenantId, threadId, read)).toMatchObject({
        latest: "absent",
        listed: 0,
      });
    },
  );

  it("counts a putWrites as a write: the thread lives ttlSeconds after it", async () => {
    const { clock, read } = testClock();
    const tenantId = `tenant-${randomUUID()}`;
    const threadId = randomUUID();
    const saver = newSaver(tenantId, read);
    const checkpoint = await putNext(saver, threadId, undefined, { step: 1 });
    clock.now = T0 + 30 * MINUTE;
    await saver.putWrites(
      { configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: checkpoint.id } },
      [["step", 2]],
      randomUUID(),
    );
    const lastWrite = clock.now;
    clock.now = lastWrite + TTL_MS - 1_000;
    expect(await observe(tenantId, threadId, read)).toMatchObject({
      latest: checkpoint.id,
      listed: 1,
    });
    clock.now = lastWrite + 2 * TTL_MS;
    expect(await observe(tenantId, threadId, read)).toMatchObject({ latest: "absent", listed: 0 });
  });

  it("never expires a thread written every 59 minutes for eight hours, and keeps it ttlSeconds after the last write", async () => {
    const { clock, read } = testClock();
    const tenantId = `tenant-${randomUUID()}`;
    const threadId = randomUUID();
    const saver = newSaver(tenantId, read);
    let previous: Checkpoint | undefined;
    const observations: unknown[] = [];
    const expected: unknown[] = [];
    for (let write = 0; write * 59 < 8 * 60; write += 1) {
      clock.now = T0 + write * 59 * MINUTE;
      // Just before this write, the thread written 59 minutes ago is still there.
      if (previous) {
        clock.now -= 1_000;
        observations.push(await observe(tenantId, threadId, read));
        expected.push({
          at: `t0 + ${(clock.now - T0) / 1_000} s`,
          latest: previous.id,
          listed: write,
        });
        clock.now += 1_000;
      }
      previous = await putNext(saver, threadId, previous, { step: write });
    }
    expect(observations).toEqual(expected);
    const lastWrite = clock.now;
    clock.now = lastWrite + TTL_MS - 1_000;
    expect(await observe(tenantId, threadId, read)).toMatchObject({ latest: previous!.id });
    clock.now = lastWrite + 2 * TTL_MS;
    expect(await observe(tenantId, threadId, read)).toMatchObject({ latest: "absent", listed: 0 });
  });
});

describe("DynamoDBSaver never lets a write after expiry refer to the expired generation (integration)", () => {
  // The unchanged channel y as the saver may keep it: small enough to copy, referenced in A's item, or chunked.
  const ySizes: Array<[string, () => string]> = [
    ["a small y", () => "small"],
    ["a 2 KB y", () => randomBytes(1_500).toString("base64")],
    ["a 500 KB y", () => randomBytes(500_000).toString("base64")],
  ];

  it.each(
    ySizes.flatMap(([size, y]) =>
      [false, true].map(
        (readA) => [size, readA ? "wrote and read A" : "wrote A", y, readA] as const,
      ),
    ),
  )(
    "stores B (only x changed since A) with both x and y, or refuses it, for %s when the saver %s before expiry",
    async (_size, _knowledge, makeY, readA) => {
      const { clock, read } = testClock();
      const tenantId = `tenant-${randomUUID()}`;
      const threadId = randomUUID();
      const saver = newSaver(tenantId, read);
      const y = makeY();
      const a = await putNext(saver, threadId, undefined, { x: "x of A", y });
      if (readA) await saver.getTuple({ configurable: { thread_id: threadId } });

      // The thread expires (past its TTL and the renewal headroom a thread may outlive it by); the same
      // instance, which still holds what it knew of A, writes B after A.
      clock.now = T0 + 2 * TTL_MS;
      let refusal: unknown;
      let b: Checkpoint | undefined;
      try {
        b = await putNext(saver, threadId, a, { x: "x of B" });
      } catch (error) {
        refusal = error;
      }

      const reader = newSaver(tenantId, read);
      if (refusal !== undefined) {
        // A refusal must be the library's own, clear error, and leave nothing half-written behind.
        expect(refusal).toBeInstanceOf(MemoryTableError);
        for (const tuple of await listAll(reader, threadId)) {
          expect(Object.keys(tuple.checkpoint.channel_values).sort()).toEqual(
            Object.keys(tuple.checkpoint.channel_versions).sort(),
          );
        }
        return;
      }
      const stored = await reader.getTuple({
        configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: b!.id },
      });
      const summary = (values: Record<string, unknown> | undefined) =>
        values && { x: values.x, y: values.y === y ? "y as put" : values.y };
      expect(summary(stored?.checkpoint.channel_values)).toEqual({ x: "x of B", y: "y as put" });
      // A belonged to the expired life of the thread: only B is left, with all its values.
      const listed = await listAll(reader, threadId);
      expect(
        listed.map((tuple) => ({
          id: tuple.checkpoint.id,
          values: summary(tuple.checkpoint.channel_values),
        })),
      ).toEqual([{ id: b!.id, values: { x: "x of B", y: "y as put" } }]);
    },
  );
});
