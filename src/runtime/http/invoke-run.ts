import { randomUUID } from "node:crypto";
import { RunBudgetExhaustedError, RunCancelledError } from "../../shared/errors";
import type { RunKwargs } from "../../shared/runs";
import type { RunOutcome } from "../graphs/engine";
import type { JoinResult } from "../runs/run-manager";
import type { RouteContext } from "./route-context";
import { readThreadValues } from "./thread-values";

/** What `/invoke` asks for: a start (input, `null` continues) or a resume of the thread's interrupt. */
export interface InvokeRequest {
  threadId: string;
  /** The graph id (the simple face names graphs, whose system assistants run them). */
  graphId: string;
  kind: "start" | "resume";
  input?: unknown;
  resume?: unknown;
}

/**
 * The simple face's run: an ordinary run of the run machinery (its record listable and cancellable like any),
 * with strategy `reject`, which this request runs itself. Unlike a waited run it ends at this request's deadline
 * (`timeout`) instead of going on in the background: the answer tells the client to continue the thread. A start
 * on a thread paused for a human is refused (ThreadPausedError), so a re-sent start never discards an approval.
 */
export async function invokeRun(
  context: RouteContext,
  request: InvokeRequest,
): Promise<RunOutcome> {
  const runs = context.runs!;
  const budgetMs = context.remainingMs - context.deadlineMarginMs;
  // Nothing ran yet: a "continue with input null" answer would be wrong (there may be no checkpoint).
  if (budgetMs <= 0) {
    throw new RunBudgetExhaustedError(context.remainingMs, context.deadlineMarginMs);
  }
  const { tenantId } = context;
  const { threadId } = request;
  const assistant = await context.assistants.get(tenantId, request.graphId);
  const kwargs: RunKwargs = {
    ...(request.kind === "resume"
      ? { command: { resume: request.resume } }
      : { input: request.input ?? null }),
    ...(Object.keys(assistant.config).length > 0 ? { config: assistant.config } : {}),
    ...(Object.keys(assistant.context).length > 0 ? { context: assistant.context } : {}),
    stopAtDeadline: true,
  };
  const started = Date.now();
  const legDeadline = started + budgetMs;
  const scope = context.engine.tenant(tenantId);
  const start = request.kind === "start";
  // A start creates its thread; an expired one not yet removed by TTL gives way to a new one of the same id.
  const created = await context.engine.replacingExpired(scope, threadId, start, () =>
    runs.create({
      tenantId,
      threadId,
      assistantId: assistant.assistantId,
      graphId: assistant.graphId,
      kwargs,
      metadata: {},
      strategy: "reject",
      createIfMissing: start,
      rejectPaused: start,
      inPlaceUntil: legDeadline,
    }),
  );
  const { run } = created;
  if (created.startsNow) {
    const time = {
      legDeadline,
      processDeadline: started + context.remainingMs,
      requestId: context.requestId,
    };
    await runs.work({ tenantId, threadId }, time, false, created);
  }
  const joined = await runs.join(tenantId, threadId, run.runId, 0);
  // Rolled back by a cancel (its record deleted), or interrupted by one.
  if (!joined || (joined.done && joined.run.status === "interrupted")) {
    throw new RunCancelledError(run.runId);
  }
  // A run taken over by recovery meanwhile ends wherever it runs: this request stopped waiting for it.
  if (!joined.done) return { kind: "deadline" };
  return outcomeOf(context, joined);
}

async function outcomeOf(
  context: RouteContext,
  joined: Extract<JoinResult, { done: true }>,
): Promise<RunOutcome> {
  const { run } = joined;
  switch (run.status) {
    case "timeout":
      return { kind: "deadline" };
    case "error":
      return {
        kind: "failed",
        errorName: run.error?.error ?? "Error",
        message: run.error?.message ?? "The graph failed",
        errorId: run.error?.error_id ?? randomUUID(),
      };
    default: {
      const { __interrupt__: raised, ...values } =
        joined.values ?? (await readThreadValues(context, run.threadId, run.graphId));
      const interrupts = Array.isArray(raised)
        ? (raised as Array<{ id: string; value: unknown }>)
        : [];
      if (interrupts.length === 0) return { kind: "completed", values };
      return {
        kind: "paused",
        values,
        interrupts: interrupts.map(({ id, value }) => ({ id, value })),
        nextNodes: joined.nextNodes ?? [],
      };
    }
  }
}
