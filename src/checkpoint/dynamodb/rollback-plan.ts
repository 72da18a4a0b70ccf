import { compareCodePoints } from "../../shared/order";
import { parseSortKey } from "../../table/keys";

/** The requests of a rollback, in order: each step's sort keys are deleted once the step before is done. */
export interface RollbackPlan {
  steps: string[][];
  /** Sort keys of the checkpoints that go (with an item or only writes and chunks). */
  checkpoints: string[];
}

interface DoomedCheckpoint {
  checkpointSk: string;
  checkpointId: string;
  /** Whether its checkpoint item (the commit record) is stored. */
  committed: boolean;
  /** Its writes items and chunks. */
  parts: string[];
}

/**
 * Orders the deletion of a thread's checkpoints newer than `afterId` (all of them when undefined) so that a
 * process dying after any step, or inside one, leaves every remaining checkpoint whole:
 *
 * - A checkpoint's item is its commit record: readers ignore writes and chunks without one. So it goes first,
 *   and its writes and chunks go in the next step, once nothing can read them.
 * - Within a namespace, newest first, one checkpoint per step: a checkpoint refers to the ancestors holding its
 *   unchanged values, which are older, so what remains at any moment refers only to what remains, and the latest
 *   checkpoint is always one that was whole before the rollback began.
 * - Namespaces refer to nothing in one another: one step takes the next checkpoint of every namespace at once,
 *   so a run's subgraphs cost no more requests than its longest namespace.
 * - Writes and chunks whose checkpoint item is not stored (writes before a put that never landed, or what a
 *   rollback that died left behind) are unreadable already and go in the first step.
 *
 * Keys that are not checkpoint-family keys are never deleted.
 */
export function planRollback(
  sortKeys: readonly string[],
  afterId: string | undefined,
): RollbackPlan {
  const doomed = new Map<string, DoomedCheckpoint & { namespace: string }>();
  for (const sk of sortKeys) {
    let parsed: ReturnType<typeof parseSortKey>;
    try {
      parsed = parseSortKey(sk);
    } catch {
      continue;
    }
    if (parsed.kind === "record") continue;
    if (afterId !== undefined && compareCodePoints(parsed.checkpointId, afterId) <= 0) continue;
    const entry = doomed.get(parsed.checkpointSk) ?? {
      checkpointSk: parsed.checkpointSk,
      checkpointId: parsed.checkpointId,
      namespace: parsed.namespace,
      committed: false,
      parts: [],
    };
    if (parsed.kind === "checkpoint") entry.committed = true;
    else entry.parts.push(sk);
    doomed.set(parsed.checkpointSk, entry);
  }

  const chains = new Map<string, DoomedCheckpoint[]>();
  const uncommitted: string[] = [];
  for (const entry of doomed.values()) {
    if (!entry.committed) {
      uncommitted.push(...entry.parts);
      continue;
    }
    const chain = chains.get(entry.namespace) ?? [];
    chain.push(entry);
    chains.set(entry.namespace, chain);
  }
  for (const chain of chains.values()) {
    chain.sort((a, b) => compareCodePoints(b.checkpointId, a.checkpointId));
  }

  const depth = Math.max(0, ...[...chains.values()].map((chain) => chain.length));
  const steps: string[][] = [];
  for (let index = 0; index <= depth; index += 1) {
    const step = index === 0 ? [...uncommitted] : [];
    for (const chain of chains.values()) {
      const next = chain[index];
      if (next) step.push(next.checkpointSk);
      const previous = chain[index - 1];
      if (previous) step.push(...previous.parts);
    }
    if (step.length > 0) steps.push(step);
  }
  return { steps, checkpoints: [...doomed.keys()] };
}
