import type { JoinResult } from "../runs/run-manager";
import type { EndedRun } from "../runs/recent-runs";
import type { RequestOutcome, RouteContext } from "./route-context";
import { readThreadValues } from "./thread-values";

/**
 * What a finished run answers: the thread's values (with pending interrupts), or its error. The request's log
 * line gets the run's outcome from the same answer.
 */
export async function resultOf(
  context: RouteContext,
  joined: Extract<JoinResult, { done: true }>,
): Promise<Record<string, unknown>> {
  const result = await finalAnswer(context, joined);
  context.log.outcome = endedOutcome(joined.run, result);
  return result;
}

async function finalAnswer(
  context: RouteContext,
  joined: Extract<JoinResult, { done: true }>,
): Promise<Record<string, unknown>> {
  const { run } = joined;
  if (run.status === "error" || run.status === "timeout") {
    return { __error__: run.error ?? { error: "Error", message: `Run ended in ${run.status}` } };
  }
  if (joined.values) return joined.values;
  if (run.temporary) return {};
  return readThreadValues(context, run.threadId, run.graphId);
}

/**
 * An ended run's outcome, in the engine's words: a run that stopped at an interrupt ends in `success` as
 * LangGraph Server has it, so its answer's `__interrupt__` tells a pause from a completion.
 */
function endedOutcome(run: EndedRun, answer: Record<string, unknown>): RequestOutcome {
  switch (run.status) {
    case "success": {
      const interrupts = answer.__interrupt__;
      return Array.isArray(interrupts) && interrupts.length > 0 ? "paused" : "completed";
    }
    case "error":
      return "failed";
    case "timeout":
      return "deadline";
    case "interrupted":
      return "cancelled";
    default:
      return "running";
  }
}
