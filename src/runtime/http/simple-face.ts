import { effectiveStatus } from "./serialize";
import { json, type HttpResult } from "./http";
import { assistantFrom, threadIdFrom, type RouteContext, type RouteHandler } from "./route-context";
import { invokeRun, type InvokeRequest } from "./invoke-run";
import { deadlineMessage, runAndRecord } from "./run-request";
import { parseRequest } from "./schemas/request-schema";
import { invokeSchema } from "./schemas/simple-schemas";
import type { PendingInterrupt } from "../../shared/threads";

/**
 * The simple face: `POST /invoke` starts or resumes a thread,
 * `GET /threads/{thread_id}/status` reads its status from the thread record.
 */
export const invoke: RouteHandler = async (context) => {
  const threadId = threadIdFrom(context.body.thread_id);
  const body = parseRequest(invokeSchema, context.body);
  const hasResume = "resume" in body;
  const assistantId = assistantFrom(context.registry, body.assistant_id);
  const kind = hasResume ? "resume" : "start";
  const outcome = context.runs
    ? await invokeAndLog(context, {
        threadId,
        graphId: assistantId,
        kind,
        input: body.input,
        resume: body.resume,
      })
    : // Without a checkpointer there are no threads or runs: the graph runs here, statelessly.
      await runAndRecord(context, { threadId, assistantId, kind, input: body.input });
  switch (outcome.kind) {
    case "paused":
      return json(202, {
        status: "PAUSED_FOR_HUMAN",
        thread_id: threadId,
        ask: ask(outcome.interrupts),
        interrupts: outcome.interrupts.map(({ id, value }) => ({ id, value })),
        next_node: outcome.nextNodes.join(","),
      });
    case "completed":
      return json(200, { status: "COMPLETED", thread_id: threadId, result: outcome.values });
    case "deadline":
      return json(202, {
        status: "STOPPED_EARLY",
        thread_id: threadId,
        detail: deadlineMessage(threadId),
        continue_with: { thread_id: threadId, input: null },
      });
    case "failed":
      // No message, stack or state: the id finds the log line.
      return json(500, {
        status: "ERROR",
        thread_id: threadId,
        detail: "The graph failed",
        error_id: outcome.errorId,
      });
  }
};

async function invokeAndLog(context: RouteContext, request: InvokeRequest) {
  context.log.thread = request.threadId;
  context.log.assistant = request.graphId;
  const outcome = await invokeRun(context, request);
  context.log.outcome = outcome.kind;
  return outcome;
}

export const threadStatus: RouteHandler = async (context: RouteContext): Promise<HttpResult> => {
  const threadId = threadIdFrom(context.params.thread_id);
  context.log.thread = threadId;
  const record = await context.engine.requireThread(context.tenantId, threadId);
  // A thread whose run's process died gets it going again (or ended) as it is read.
  await context.runs?.recover(context.tenantId, threadId, record);
  return json(200, {
    thread_id: threadId,
    status: effectiveStatus(record, Date.now()) ?? null,
    next_node: record.nextNodes.join(",") || null,
    ask: record.status === "PAUSED_FOR_HUMAN" ? ask(record.interrupts) : null,
    interrupts: record.interrupts.map(({ id, value }) => ({ id, value })),
    updated_at: new Date(record.updatedAt).toISOString(),
  });
};

/** One interrupt: its value; several: the list of values (resume them by id). */
function ask(interrupts: PendingInterrupt[]): unknown {
  return interrupts.length === 1 ? interrupts[0]!.value : interrupts.map((item) => item.value);
}

export const SIMPLE_HANDLERS: Readonly<Record<string, RouteHandler>> = {
  "POST /invoke": invoke,
  "GET /threads/{thread_id}/status": threadStatus,
};
