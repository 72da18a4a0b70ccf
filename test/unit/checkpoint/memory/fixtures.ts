import type { RunnableConfig } from "@langchain/core/runnables";
import {
  emptyCheckpoint,
  uuid6,
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointTuple,
} from "@langchain/langgraph-checkpoint";
import type { BoundedInMemorySaver } from "../../../../src/checkpoint/memory";

export const METADATA: CheckpointMetadata = { source: "loop", step: 0, parents: {} };

/** A checkpoint whose channels are all new (every channel is in `newVersions`). */
export function checkpointWith(
  values: Record<string, unknown>,
  id: string = uuid6(-1),
  version = 1,
): { checkpoint: Checkpoint; newVersions: Record<string, number> } {
  const versions = Object.fromEntries(Object.keys(values).map((channel) => [channel, version]));
  return {
    checkpoint: {
      ...emptyCheckpoint(),
      id,
      channel_values: values,
      channel_versions: versions,
    },
    newVersions: versions,
  };
}

export function threadConfig(threadId: string, checkpointNs = ""): RunnableConfig {
  return { configurable: { thread_id: threadId, checkpoint_ns: checkpointNs } };
}

/** Puts one checkpoint with the given channel values on a thread; returns the stored config. */
export async function putValues(
  saver: BoundedInMemorySaver,
  threadId: string,
  values: Record<string, unknown>,
  options: { checkpointNs?: string; id?: string; parent?: RunnableConfig; version?: number } = {},
): Promise<RunnableConfig> {
  const { checkpoint, newVersions } = checkpointWith(values, options.id, options.version);
  const config = options.parent ?? threadConfig(threadId, options.checkpointNs);
  return saver.put(config, checkpoint, METADATA, newVersions);
}

/** Everything observable in the saver: every tuple (all threads, all namespaces) and the counts. */
export async function observe(saver: BoundedInMemorySaver): Promise<{
  tuples: CheckpointTuple[];
  threads: number;
  namespaces: number;
  checkpoints: number;
  pendingWrites: number;
  totalBytes: number;
}> {
  const tuples: CheckpointTuple[] = [];
  for await (const tuple of saver.list({})) tuples.push(tuple);
  const { threads, namespaces, checkpoints, pendingWrites, totalBytes } = saver.stats();
  return { tuples, threads, namespaces, checkpoints, pendingWrites, totalBytes };
}

/** A clock the test moves by hand, for the idle TTL. */
export function manualClock(start = 1_000_000): {
  now: () => number;
  advance: (ms: number) => void;
} {
  let current = start;
  return {
    now: () => current,
    advance: (ms) => {
      current += ms;
    },
  };
}

/** A string of exactly `length` characters (payload sizes are then predictable). */
export function text(length: number): string {
  return "x".repeat(length);
}
