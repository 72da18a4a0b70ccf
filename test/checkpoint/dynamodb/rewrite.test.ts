import { randomUUID } from "node:crypto";
import {
  MemorySaver,
  emptyCheckpoint,
  uuid6,
  type BaseCheckpointSaver,
  type Checkpoint,
  type CheckpointMetadata,
  type PendingWrite,
} from "@langchain/langgraph-checkpoint";

import { useSaverTable } from "./saver-fixtures";

// Promise: writing a checkpoint id that already exists again (a retried put, or another process writing the
// same checkpoint) keeps the pending writes stored for it, as LangGraph's MemorySaver does: a put stores a
// checkpoint, it never discards the writes of its tasks.

const table = useSaverTable("rewrite");

const { newSaver } = table;

const firstMetadata: CheckpointMetadata = { source: "loop", step: 1, parents: {} };
const secondMetadata: CheckpointMetadata = { source: "update", step: 1, parents: {} };

/** How the writes for X reached the saver. */
type Arrival = "after X's put finished" | "while X's put was in flight";
/** Who writes X again. */
type Rewriter =
  "the same saver" | "another saver that read X first" | "another saver that never read X";

interface Scenario {
  threadId: string;
  checkpoint: Checkpoint;
  newVersions: Record<string, number>;
  tasks: Array<{ taskId: string; writes: PendingWrite[] }>;
}

function scenario(saver: BaseCheckpointSaver): Scenario {
  const newVersions = {
    question: saver.getNextVersion(undefined),
    draft: saver.getNextVersion(undefined),
  };
  return {
    threadId: randomUUID(),
    checkpoint: {
      ...emptyCheckpoint(),
      id: uuid6(-3),
      channel_values: { question: "book a room", draft: "none yet" },
      channel_versions: newVersions,
    },
    newVersions,
    // Two tasks of the step: a node's output and another node's interrupt.
    tasks: [
      {
        taskId: `a-${randomUUID()}`,
        writes: [
          ["draft", "room 12"],
          ["question", "confirmed"],
        ],
      },
      {
        taskId: `b-${randomUUID()}`,
        writes: [["__interrupt__", [{ id: "i1", value: "approve?" }]]],
      },
    ],
  };
}

/**
 * Runs X's put with its tasks' writes arriving as `arrival` says on `writer`, then puts X again (same id, new
 * metadata) on `rewriter`, after it read X when `readFirst`. Returns X as a fresh `reader` sees it.
 */
async function writeTwice(
  s: Scenario,
  writer: BaseCheckpointSaver,
  rewriter: BaseCheckpointSaver,
  reader: BaseCheckpointSaver,
  arrival: Arrival,
  readFirst: boolean,
) {
  const putConfig = { configurable: { thread_id: s.threadId, checkpoint_ns: "" } };
  const xConfig = { configurable: { ...putConfig.configurable, checkpoint_id: s.checkpoint.id } };
  const put = () => writer.put(putConfig, s.checkpoint, firstMetadata, s.newVersions);
  const writeAll = () =>
    Promise.all(s.tasks.map(({ taskId, writes }) => writer.putWrites(xConfig, writes, taskId)));
  if (arrival === "while X's put was in flight") {
    // As LangGraph's loop does: the step's tasks report their writes without waiting for the put.
    await Promise.all([put(), writeAll()]);
  } else {
    await put();
    await writeAll();
  }
  if (readFirst) expect((await rewriter.getTuple(xConfig))?.pendingWrites).toHaveLength(3);
  await rewriter.put(putConfig, s.checkpoint, secondMetadata, s.newVersions);
  return reader.getTuple(xConfig);
}

function expectedWrites(s: Scenario) {
  return s.tasks.flatMap(({ taskId, writes }) =>
    writes.map(([channel, value]) => [taskId, channel, value]),
  );
}

const ARRIVALS: Arrival[] = ["after X's put finished", "while X's put was in flight"];
const REWRITERS: Rewriter[] = [
  "the same saver",
  "another saver that read X first",
  "another saver that never read X",
];

function dynamoSavers(rewriter: Rewriter) {
  const writer = newSaver();
  return {
    writer,
    rewriter: rewriter === "the same saver" ? writer : newSaver(writer.tenantId),
    reader: newSaver(writer.tenantId),
    readFirst: rewriter === "another saver that read X first",
  };
}

describe.each(ARRIVALS)(
  "DynamoDBSaver keeps X's pending writes when X is written again, writes arriving %s (integration)",
  (arrival) => {
    it.each(REWRITERS)("keeps them when %s writes X again", async (rewriterKind) => {
      const { writer, rewriter, reader, readFirst } = dynamoSavers(rewriterKind);
      const s = scenario(writer);
      const tuple = await writeTwice(s, writer, rewriter, reader, arrival, readFirst);
      expect(tuple?.metadata).toEqual(secondMetadata);
      expect(tuple?.checkpoint).toEqual(s.checkpoint);
      expect(tuple?.pendingWrites).toEqual(expectedWrites(s));
    });
  },
);

describe("DynamoDBSaver and LangGraph's MemorySaver agree on a checkpoint written again (integration)", () => {
  it("gives the same pendingWrites, metadata and checkpoint as MemorySaver for every arrival and rewriter", async () => {
    const outcomes: Array<{ case: string; dynamodb: unknown; memory: unknown }> = [];
    for (const arrival of ARRIVALS) {
      for (const rewriterKind of REWRITERS) {
        const { writer, rewriter, reader, readFirst } = dynamoSavers(rewriterKind);
        const s = scenario(writer);
        const dynamodb = await writeTwice(s, writer, rewriter, reader, arrival, readFirst);
        // MemorySaver instances share nothing, so one instance plays every role.
        const memorySaver = new MemorySaver();
        const memory = await writeTwice(
          s,
          memorySaver,
          memorySaver,
          memorySaver,
          arrival,
          readFirst,
        );
        const view = (tuple: typeof dynamodb) => ({
          checkpoint: tuple?.checkpoint,
          metadata: tuple?.metadata,
          pendingWrites: tuple?.pendingWrites,
        });
        outcomes.push({
          case: `${arrival}, rewritten by ${rewriterKind}`,
          dynamodb: view(dynamodb),
          memory: view(memory),
        });
      }
    }
    // The reference keeps all three writes in every case: the comparison below holds the saver to that.
    for (const { memory } of outcomes) {
      expect((memory as { pendingWrites?: unknown[] }).pendingWrites).toHaveLength(3);
    }
    expect(outcomes.map(({ case: name, dynamodb }) => ({ name, result: dynamodb }))).toEqual(
      outcomes.map(({ case: name, memory }) => ({ name, result: memory })),
    );
  });
});
