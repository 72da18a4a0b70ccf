import {
  WRITES_IDX_MAP,
  compareWritesSortKeys,
  writesSortKey,
  type WritesSortKey,
} from "@langchain/langgraph-checkpoint";

/** Special channels (errors, interrupts, resumes) get fixed negative indices and replace earlier writes. */
export function writeIndex(channel: string, position: number): number {
  return WRITES_IDX_MAP[channel] ?? position;
}

/** Key of a write within one checkpoint; `idx` has no colon, so the key is unambiguous. */
export function writeKey(taskId: string, idx: number): string {
  return `${idx}:${taskId}`;
}

export function buildWritesSortKey(
  taskPath: string | undefined,
  taskId: string,
  idx: number,
): WritesSortKey {
  return writesSortKey(taskPath ?? "", taskId, idx);
}

/** Writes in the order live execution applies them (sort-key string order is not that order). */
export function sortWrites<T extends { sortKey: WritesSortKey }>(writes: Iterable<T>): T[] {
  return Array.from(writes).sort((a, b) => compareWritesSortKeys(a.sortKey, b.sortKey));
}
