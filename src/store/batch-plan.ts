import { storeItemSortKey } from "../table/keys";
import { isUnder } from "./namespaces";
import type {
  CheckedGet,
  CheckedListing,
  CheckedOperation,
  CheckedPut,
  CheckedSearch,
} from "./operations";

/**
 * The order of a batch. A batch behaves as if its operations ran one after another, in order: a read sees the
 * writes before it and none after it. To spend as few round trips as that allows, consecutive operations form
 * one step as long as no read depends on a write before it in the same step; a step runs its reads together
 * (gets in one request), then its writes together (the last write to an item wins).
 */
export interface BatchStep {
  gets: Array<{ position: number; op: CheckedGet }>;
  searches: Array<{ position: number; op: CheckedSearch }>;
  listings: Array<{ position: number; op: CheckedListing }>;
  /** By item key, the last write of the step to that item. */
  writes: Map<string, CheckedPut>;
}

export function planBatch(operations: readonly CheckedOperation[]): BatchStep[] {
  const steps: BatchStep[] = [];
  let step = newStep();
  operations.forEach((op, position) => {
    if (op.kind === "put") {
      const itemKey = storeItemSortKey(op.namespace, op.key);
      step.writes.delete(itemKey); // re-inserted last: writes keep the order of their last occurrence
      step.writes.set(itemKey, op);
      return;
    }
    if (dependsOnWrites(op, step.writes)) {
      steps.push(step);
      step = newStep();
    }
    if (op.kind === "get") step.gets.push({ position, op });
    else if (op.kind === "search") step.searches.push({ position, op });
    else step.listings.push({ position, op });
  });
  steps.push(step);
  return steps.filter(
    (s) => s.gets.length + s.searches.length + s.listings.length + s.writes.size > 0,
  );
}

function dependsOnWrites(op: CheckedOperation, writes: ReadonlyMap<string, CheckedPut>): boolean {
  if (writes.size === 0) return false;
  switch (op.kind) {
    case "get":
      return writes.has(storeItemSortKey(op.namespace, op.key));
    case "search":
      return [...writes.values()].some((write) => isUnder(write.namespace, op.prefix));
    default:
      return true;
  }
}

function newStep(): BatchStep {
  return { gets: [], searches: [], listings: [], writes: new Map() };
}
