import {
  WRITES_IDX_MAP,
  compareWritesSortKeys,
  writesSortKey,
  type WritesSortKey,
} from "@langchain/langgraph-checkpoint";
import type { StoredPendingWrite } from "./stored-records";

/** Special channels (errors, interrupts, resumes) get fixed negative indices and replace earlier writes. */
export function writeIndex(channel: string, position: number): number {
  return WRITES_IDX_MAP[channel] ?? position;
}

/** Index of the stored write a new one would collide with (same task, same index), or -1. */
export function findWrite(
  writes: readonly StoredPendingWrite[],
  taskId: string,
  idx: number,
): number {
  for (let index = 0; index < writes.length; index += 1) {
    const write = writes[index]!;
    if (write.idx === idx && write.taskId === taskId) return index;
  }
  return -1;
}

/** Writes in the order live execution applies them (sort-key string order is not that order). */
export function sortWrites(writes: readonly StoredPendingWrite[]): StoredPendingWrite[] {
  if (writes.length < 2) return [...writes];
  const keyed: Array<[WritesSortKey, StoredPendingWrite]> = writes.map((write) => [
    writesSortKey(write.taskPath, write.taskId, write.idx),
    write,
  ]);
  keyed.sort((a, b) => compareWritesSortKeys(a[0], b[0]));
  return keyed.map(([, write]) => write);
}
