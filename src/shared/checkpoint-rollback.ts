/**
 * A saver that can take a thread back to one of its checkpoints, the way LangGraph Server forgets a rolled-back
 * run: every checkpoint newer than it goes (in every namespace, subgraphs included, with its pending writes),
 * and state, history, copies, state updates and the next run see the thread as it was at that checkpoint.
 * Both Memory Table savers have it; the runtime tests `supportsCheckpointRollback(saver)` before using it.
 */
export interface CheckpointRollback {
  /**
   * Deletes every checkpoint of `threadId` whose id is newer than `checkpointId` (checkpoint ids are UUIDv6, so
   * newer is larger by code point), with its pending writes; `undefined` deletes every checkpoint of the thread.
   * What is not a checkpoint (the thread's record, its runs) stays; so do the writes of `checkpointId` itself.
   * Call it only while nothing writes to the thread (its lease held): a put landing meanwhile is kept.
   */
  deleteCheckpointsAfter(threadId: string, checkpointId: string | undefined): Promise<void>;
}

/** True for a saver with {@link CheckpointRollback}. */
export function supportsCheckpointRollback(saver: unknown): saver is CheckpointRollback {
  return (
    typeof saver === "object" &&
    saver !== null &&
    typeof (saver as Partial<CheckpointRollback>).deleteCheckpointsAfter === "function"
  );
}
