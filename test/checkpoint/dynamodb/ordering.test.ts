import { randomUUID } from "node:crypto";
import {
  emptyCheckpoint,
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointTuple,
} from "@langchain/langgraph-checkpoint";
import { DynamoDBSaver } from "../../../src";
import { useSaverTable } from "./saver-fixtures";

// Promise: escaping identifiers into keys keeps their order. Whatever the checkpoint ids (any valid identifier,
// not only uuid6), the latest checkpoint of getTuple is the first one list yields, list yields each checkpoint
// once with its own values, and `before` cuts list's order where list itself places the id. The ids below sit
// around the characters the saver escapes or uses as separators (`#`, `%`), and past the BMP, where UTF-16 and
// UTF-8 order differ.

const table = useSaverTable("ordering");

const { newSaver } = table;

const metadata: CheckpointMetadata = { source: "loop", step: 0, parents: {} };

/** Puts a checkpoint with no parent whose only channel names its owner, so a mixed-up read shows. */
async function putIndependent(
  saver: DynamoDBSaver,
  threadId: string,
  namespace: string,
  id: string,
): Promise<void> {
  const versions = { owner: saver.getNextVersion(undefined) };
  const checkpoint: Checkpoint = {
    ...emptyCheckpoint(),
    id,
    channel_values: { owner: `${namespace}/${id}` },
    channel_versions: versions,
  };
  await saver.put(
    { configurable: { thread_id: threadId, checkpoint_ns: namespace } },
    checkpoint,
    metadata,
    versions,
  );
}

async function listed(
  saver: DynamoDBSaver,
  configurable: Record<string, string>,
  before?: string,
): Promise<CheckpointTuple[]> {
  const tuples: CheckpointTuple[] = [];
  const options =
    before === undefined ? {} : { before: { configurable: { checkpoint_id: before } } };
  for await (const tuple of saver.list({ configurable }, options)) tuples.push(tuple);
  return tuples;
}

const idOf = (tuple: CheckpointTuple) => tuple.checkpoint.id;

/** An id as a failure message shows it: characters outside printable ASCII spelled as code points. */
function shown(id: string | undefined): string | undefined {
  return id?.replace(
    /[^\x20-\x7e]/gu,
    (c) => `<U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}>`,
  );
}

/**
 * The order of one namespace as list gives it, after checking it against getTuple's latest, the ids put,
 * each tuple's own values and every `before` cut.
 */
async function expectConsistentOrder(
  reader: DynamoDBSaver,
  threadId: string,
  namespace: string,
  ids: string[],
): Promise<string[]> {
  const tuples = await listed(reader, { thread_id: threadId, checkpoint_ns: namespace });
  const order = tuples.map(idOf);
  expect([...order].sort()).toEqual([...ids].sort());
  expect(tuples.map((tuple) => tuple.checkpoint.channel_values)).toEqual(
    order.map((id) => ({ owner: `${namespace}/${id}` })),
  );
  const latest = await reader.getTuple({
    configurable: { thread_id: threadId, checkpoint_ns: namespace },
  });
  expect({ latest: shown(latest?.checkpoint.id) }).toEqual({ latest: shown(order[0]) });
  expect(latest?.checkpoint.channel_values).toEqual({ owner: `${namespace}/${order[0]}` });
  for (const [position, before] of order.entries()) {
    const after = await listed(reader, { thread_id: threadId, checkpoint_ns: namespace }, before);
    expect({ before: shown(before), listed: after.map(idOf).map(shown) }).toEqual({
      before: shown(before),
      listed: order.slice(position + 1).map(shown),
    });
  }
  return order;
}

const AROUND_ESCAPES = [" ", "!", '"', "#", "$", "%", "&", "~", "é", "\uffff", "😀"];

const ID_SETS: Array<[string, string[]]> = [
  [
    "ids ending in characters around the escapes and past the BMP",
    AROUND_ESCAPES.map((c) => `id${c}`),
  ],
  ["ids that are prefixes of one another", ["a", "a!", "a#", "a$", "a%", "ab"]],
  ["ids differing only in # and $", ["step#", "step$"]],
  ["ids differing only in % and &", ["step%", "step&"]],
  ["ids spelling out an escape next to the escaped character", ["x%23", "x#", "x%25", "x%", "x$"]],
  ["ids ending in the last BMP character and an astral one", ["z\uffff", "z😀", "z~"]],
  [
    "ids with the escaped characters inside, not only at the end",
    ["k#1", "k$1", "k%1", "k!1", "k#2", "k%2"],
  ],
];

/** Put orders: as written, reversed, and interleaved from both ends. */
function putOrders(ids: string[]): string[][] {
  const interleaved: string[] = [];
  for (let low = 0, high = ids.length - 1; low <= high; low += 1, high -= 1) {
    interleaved.push(ids[low]!);
    if (high !== low) interleaved.push(ids[high]!);
  }
  return [ids, [...ids].reverse(), interleaved];
}

describe("DynamoDBSaver keeps getTuple, list and before in one order for any valid ids (integration)", () => {
  it.each(ID_SETS)("orders %s the same way in getTuple, list and before", async (_name, ids) => {
    const saver = newSaver();
    const reader = newSaver(saver.tenantId);
    const orders: string[][] = [];
    for (const putOrder of putOrders(ids)) {
      const threadId = randomUUID();
      for (const id of putOrder) await putIndependent(saver, threadId, "", id);
      const order = await expectConsistentOrder(reader, threadId, "", ids);
      // Without a namespace, list covers the same (root-only) checkpoints in the same order.
      expect((await listed(reader, { thread_id: threadId })).map(idOf)).toEqual(order);
      orders.push(order);
    }
    // The order depends on the ids alone, not on the order they were written in.
    expect(orders.slice(1)).toEqual(orders.slice(1).map(() => orders[0]));
  });

  it("orders checkpoints the same way inside subgraph namespaces whose names hold the same characters", async () => {
    const saver = newSaver();
    const reader = newSaver(saver.tenantId);
    const threadId = randomUUID();
    const task = randomUUID();
    const namespaces = [
      `tool#:${task}`,
      `tool$:${task}`,
      `tool%:${task}`,
      `tool:${task}`,
      `tool#:${task}|inner ${AROUND_ESCAPES.join("")}:${task}`,
      `${AROUND_ESCAPES.join("")}:${task}`,
    ];
    const ids = AROUND_ESCAPES.map((c) => `id${c}`);
    for (const namespace of namespaces) {
      for (const id of [...ids].reverse()) await putIndependent(saver, threadId, namespace, id);
    }
    for (const namespace of namespaces) {
      await expectConsistentOrder(reader, threadId, namespace, ids);
    }
    // Listing every namespace of the thread yields each checkpoint exactly once, with its own values.
    const everything = await listed(reader, { thread_id: threadId });
    expect(
      everything
        .map((tuple) => `${tuple.config.configurable?.checkpoint_ns}/${idOf(tuple)}`)
        .sort(),
    ).toEqual(namespaces.flatMap((namespace) => ids.map((id) => `${namespace}/${id}`)).sort());
    expect(
      everything.every(
        (tuple) =>
          tuple.checkpoint.channel_values.owner ===
          `${tuple.config.configurable?.checkpoint_ns}/${idOf(tuple)}`,
      ),
    ).toBe(true);
  });
});
