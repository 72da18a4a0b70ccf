import { RunDeadlineError } from "../../shared/errors";
import type { RunOutcome, RunRequest } from "../graphs/engine";
import type { RouteContext } from "./route-context";

/** Runs through the engine, recording the outcome in the request log and the run metrics. */
export async function runAndRecord(
  context: RouteContext,
  request: Omit<RunRequest, "tenantId" | "remainingMs">,
): Promise<RunOutcome> {
  const started = performance.now();
  context.log.thread = request.threadId;
  context.log.assistant = request.assistantId;
  const outcome = await context.engine.run({
    ...request,
    tenantId: context.tenantId,
    remainingMs: context.remainingMs,
  });
  context.log.outcome = outcome.kind;
  if (outcome.kind === "failed") {
    // The line the response's error id points to. Name only: a message can carry state.
    context.logger.error(
      {
        requestId: context.requestId,
        errorId: outcome.errorId,
        err: { name: outcome.errorName },
        tenant: context.tenantId,
        thread: request.threadId,
        assistant: request.assistantId,
      },
      "graph run failed",
    );
  }
  context.metrics.record(request.assistantId, outcome.kind, performance.now() - started);
  return outcome;
}

export function deadlineMessage(threadId: string): string {
  return `${new RunDeadlineError(threadId).message}. A new run may answer 409 (busy) until the stopped run's Lambda deadline passes: retry after a few seconds`;
}
