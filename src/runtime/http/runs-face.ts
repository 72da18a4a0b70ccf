import { randomUUID } from "node:crypto";
import {
  AssistantNotFoundError,
  CheckpointerRequiredError,
  InvalidRequestError,
  MultitaskRejectedError,
  RunActiveError,
  RunBudgetExhaustedError,
  RunNotFinishedError,
  RunNotFoundError,
  ThreadBusyError,
  ThreadNotFoundError,
} from "../../shared/errors";
import type { AssistantRecord } from "../../shared/assistants";
import {
  FINAL_RUN_STATUSES,
  type CancelAction,
  type RunKwargs,
  type RunRecord,
} from "../../shared/runs";
import { json, noContent, type HttpResult } from "./http";
import { runIdFrom, threadIdFrom, type RouteContext, type RouteHandler } from "./route-context";
import { resultOf } from "./run-answer";
import { parseRunBody, type RunBody } from "./run-body";
import { configurableFromHeaders } from "./run-headers";
import { parseRequest } from "./schemas/request-schema";
import { runCancelQuery, runListQuery } from "./schemas/run-schemas";
import { runJson } from "../runs/run-json";
import type { CreatedRun, RunManager } from "../runs/run-manager";
import { requireCheckpoint } from "./thread-state";

/**
 * Runs on the LangGraph Server face: background runs (create, get, list, join, cancel, delete) and waited runs,
 * on a thread or stateless (a thread made for the run, deleted after it unless `on_completion: "keep"`).
 */

/** Time kept free at the end of a request to answer it (read the state, write the response). */
const ANSWER_MARGIN_MS = 2_000;

export const createRun: RouteHandler = async (context) => {
  const threadId = threadIdFrom(context.params.thread_id);
  const { run } = await startRun(context, threadId, false, false);
  context.log.outcome = "queued";
  return json(200, runJson(run), contentLocation(run));
};

export const createStatelessRun: RouteHandler = async (context) => {
  const { run } = await startRun(context, randomUUID(), true, false);
  context.log.outcome = "queued";
  return json(200, runJson(run), contentLocation(run));
};

/** Runs one batch may create: each is a few table requests, all inside one request's time. */
export const MAX_BATCH_RUNS = 100;

/**
 * POST /runs/batch: stateless background runs, as POST /runs makes each. Every item is checked (its fields and
 * its assistant) before the first run is created, so a bad item creates none; a table failure partway through
 * can still leave the earlier runs created, which the client sees as an error and can list.
 */
export const createRunBatch: RouteHandler = async (context) => {
  const items = context.body.items as unknown[];
  if (items.length === 0 || items.length > MAX_BATCH_RUNS) {
    throw new InvalidRequestError(
      "body",
      `expected 1 to ${MAX_BATCH_RUNS} runs, got ${items.length}`,
    );
  }
  const parsed = items.map((item, index) => {
    if (typeof item !== "object" || item === null || Array.isArray(item)) {
      throw new InvalidRequestError("body", "expected a JSON object", `Run ${index}`);
    }
    try {
      return parseRunBody(item as Record<string, unknown>, context.webhooks);
    } catch (error) {
      if (error instanceof InvalidRequestError) throw error.within(`Run ${index}`);
      throw error;
    }
  });
  // One lookup per assistant the batch names, not per run.
  const assistants = new Map<unknown, AssistantRecord>();
  for (const body of parsed) {
    if (!assistants.has(body.assistantId)) {
      assistants.set(body.assistantId, await runAssistant(context, body.assistantId));
    }
  }
  // Each run's thread is new, so a run from a checkpoint names one its thread does not have: refused now.
  const threadIds = parsed.map(() => randomUUID());
  for (const [index, body] of parsed.entries()) {
    await refuseUnknownCheckpoint(context, threadIds[index]!, body, true);
  }
  const runs: RunRecord[] = [];
  for (const [index, body] of parsed.entries()) {
    const prepared = { body, assistant: assistants.get(body.assistantId)! };
    runs.push((await startRun(context, threadIds[index]!, true, false, false, prepared)).run);
  }
  context.log.outcome = "queued";
  return json(200, runs.map(runJson));
};

export const waitRun: RouteHandler = async (context) =>
  answered(await waitForRun(context, threadIdFrom(context.params.thread_id), false));

export const waitStatelessRun: RouteHandler = async (context) =>
  answered(await waitForRun(context, randomUUID(), true));

/** What a waited run answers: its values (or `__error__`), and the run, named in `Content-Location`. */
export interface WaitedRun {
  answer: Record<string, unknown>;
  /** Undefined for a run of a handler without a checkpointer (it keeps no run record). */
  run?: RunRecord;
}

function answered({ answer, run }: WaitedRun): HttpResult {
  return json(200, answer, run ? contentLocation(run) : {});
}

export const listRuns: RouteHandler = async (context) => {
  const threadId = threadIdFrom(context.params.thread_id);
  context.log.thread = threadId;
  const query = parseRequest(runListQuery, context.query);
  const limit = query.limit ?? 10;
  const offset = query.offset ?? 0;
  const status = query.status;
  const thread = await context.engine.requireThread(context.tenantId, threadId);
  const listed = await manager(context).runStore.listRuns({
    tenantId: context.tenantId,
    threadId,
    limit,
    offset,
    ...(status ? { status } : {}),
  });
  // What a dead process left of these runs is recovered as they are read, as a run read by its id is.
  const runs = await manager(context).recoverListedRuns(context.tenantId, thread, listed);
  return json(200, runs.map(runJson));
};

export const getRun: RouteHandler = async (context) => {
  const run = await requireRun(context);
  return json(200, runJson(run));
};

export const deleteRun: RouteHandler = async (context) => {
  const run = await requireRun(context);
  if (!FINAL_RUN_STATUSES.includes(run.status) && run.status !== "pending") {
    throw new RunActiveError(run.runId);
  }
  if (run.status === "pending") {
    await manager(context).cancel(context.tenantId, run.threadId, run.runId, "rollback");
  }
  await manager(context).runStore.deleteRun(context.tenantId, run.threadId, run.runId);
  return noContent();
};

export const joinRun: RouteHandler = async (context) => {
  const run = await requireRun(context);
  const joined = await manager(context).join(
    context.tenantId,
    run.threadId,
    run.runId,
    budgetOf(context),
    run,
  );
  if (!joined) throw new RunNotFoundError(run.runId);
  if (!joined.done) {
    context.log.outcome = "running";
    throw new RunNotFinishedError(run.runId, joined.run.status);
  }
  return json(200, await resultOf(context, joined));
};

export const cancelRun: RouteHandler = async (context) => {
  const run = await requireRun(context);
  const wait = ["1", "true"].includes(context.query.wait ?? "");
  const action: CancelAction = parseRequest(runCancelQuery, context.query).action ?? "interrupt";
  await manager(context).cancel(context.tenantId, run.threadId, run.runId, action);
  context.log.outcome = "cancelled";
  if (!wait) return { statusCode: 202, headers: { "content-type": "application/json" } };
  await manager(context).awaitCancelled(
    context.tenantId,
    run.threadId,
    run.runId,
    budgetOf(context),
  );
  return noContent();
};

/**
 * Creates a run as the body says, on `threadId` (stateless: a new thread, made for it). The run is handed to the
 * dispatcher unless `inPlace` and it may start now: then the caller runs it itself. A `streamed` run (a stream
 * route's) streams `values` when the client named no mode.
 */
export async function startRun(
  context: RouteContext,
  threadId: string,
  stateless: boolean,
  inPlace: boolean,
  streamed = false,
  /** The body (its checkpoint too) and assistant, when the caller has already checked them (a batch's item). */
  prepared?: { body: RunBody; assistant: AssistantRecord },
): Promise<CreatedRun & { body: RunBody }> {
  const runs = manager(context);
  const body = prepared?.body ?? parseRunBody(context.body, context.webhooks);
  const assistant = prepared?.assistant ?? (await runAssistant(context, body.assistantId));
  context.log.thread = threadId;
  context.log.assistant = assistant.assistantId;
  if (!prepared) await refuseUnknownCheckpoint(context, threadId, body, stateless);
  try {
    const created = await runs.create({
      tenantId: context.tenantId,
      threadId,
      assistantId: assistant.assistantId,
      graphId: assistant.graphId,
      kwargs: {
        ...withAssistantDefaults(withRequestHeaders(body.kwargs, context.headers), assistant),
        ...(stateless && !body.keepThread ? { temporary: true } : {}),
        ...(body.afterSeconds > 0 ? { afterSeconds: body.afterSeconds } : {}),
        ...(streamed && body.kwargs.streamMode === undefined ? { streamMode: ["values"] } : {}),
      },
      metadata: body.metadata,
      strategy: body.strategy,
      createIfMissing: stateless || body.ifNotExists === "create",
      // A run this request runs itself takes the thread as it is created, when it may start at once.
      ...(inPlace ? { inPlaceUntil: Date.now() + budgetOf(context) } : {}),
    });
    if (!created.startsNow || !inPlace) {
      // Whoever holds the thread takes this run when it ends; a dispatch covers a thread freed meanwhile.
      await runs.dispatcher.dispatch({
        tenantId: context.tenantId,
        threadId,
        queuedRunId: created.run.runId,
      });
    }
    return { ...created, body };
  } catch (error) {
    if (error instanceof ThreadBusyError) {
      throw new MultitaskRejectedError(threadId);
    }
    throw error;
  }
}

/** The assistant a run names, with LangGraph Server's own words when there is none. */
export async function runAssistant(
  context: RouteContext,
  value: unknown,
): Promise<AssistantRecord> {
  try {
    return await context.assistants.resolve(context.tenantId, value);
  } catch (error) {
    if (error instanceof AssistantNotFoundError) {
      throw new AssistantNotFoundError(
        error.assistantId,
        `No assistant found for ${JSON.stringify(value)}. Make sure the assistant ID is for a valid assistant or a valid graph ID.`,
      );
    }
    throw error;
  }
}

/**
 * The run's kwargs with the request's headers in its `configurable` (run-headers.ts says which), over the
 * body's own keys as LangGraph Server has them.
 */
function withRequestHeaders(
  kwargs: RunKwargs,
  headers: Readonly<Record<string, string | undefined>>,
): RunKwargs {
  const fromHeaders = configurableFromHeaders(headers);
  if (Object.keys(fromHeaders).length === 0) return kwargs;
  const config = kwargs.config ?? {};
  const configurable = {
    ...((config.configurable as Record<string, unknown> | undefined) ?? {}),
    ...fromHeaders,
  };
  return { ...kwargs, config: { ...config, configurable } };
}

/**
 * The run's config and context over its assistant's: the run's own keys win, `configurable` merged key by key
 * (as LangGraph Server merges them).
 */
function withAssistantDefaults(kwargs: RunKwargs, assistant: AssistantRecord): RunKwargs {
  const base = assistant.config;
  const own = kwargs.config ?? {};
  const configurable = {
    ...((base.configurable as Record<string, unknown> | undefined) ?? {}),
    ...((own.configurable as Record<string, unknown> | undefined) ?? {}),
  };
  const config = {
    ...base,
    ...own,
    ...(Object.keys(configurable).length > 0 ? { configurable } : {}),
  };
  const merged: RunKwargs = { ...kwargs };
  if (Object.keys(config).length > 0) merged.config = config;
  if (Object.keys(assistant.context).length > 0) {
    const runContext = kwargs.context;
    merged.context =
      typeof runContext === "object" && runContext !== null && !Array.isArray(runContext)
        ? { ...assistant.context, ...runContext }
        : (runContext ?? assistant.context);
  }
  return merged;
}

/**
 * A run from a checkpoint (`checkpoint_id`, `checkpoint.checkpoint_id` with its namespace) the thread does not have
 * is refused before it is created: LangGraph would start it from an empty checkpoint and the thread's state (a
 * pending approval too) would be lost. A missing thread answers as one (unless the run may create it).
 */
async function refuseUnknownCheckpoint(
  context: RouteContext,
  threadId: string,
  body: RunBody,
  stateless: boolean,
): Promise<void> {
  const { checkpointId, checkpointNamespace } = body.kwargs;
  // "" names no checkpoint: the run starts from the thread's latest, as LangGraph Server's does.
  if (checkpointId === undefined || checkpointId === "") return;
  if (!stateless && body.ifNotExists === "reject") {
    await context.engine.requireThread(context.tenantId, threadId);
  }
  await requireCheckpoint(context, threadId, {
    checkpoint_id: checkpointId,
    checkpoint_ns: checkpointNamespace ?? "",
  });
}

/**
 * A run waited for: started here when the thread is free (this request is its first leg), else queued; then
 * joined until it ends or this request's time is up. A run that outlives the request goes on in the
 * background: the answer says so (`__error__` TimeoutError, which the SDK raises) and names the run in
 * `Content-Location`, so the client can join it. `prepared`: the body and assistant, when the caller read them
 * from elsewhere than the request's body (an MCP tool call).
 */
export async function waitForRun(
  context: RouteContext,
  threadId: string,
  stateless: boolean,
  prepared?: { body: RunBody; assistant: AssistantRecord },
): Promise<WaitedRun> {
  if (!context.runs) return statelessWithoutCheckpointer(context, threadId, prepared);
  if (context.remainingMs - context.deadlineMarginMs <= 0) {
    // Nothing ran yet: a "continue with input null" answer would be wrong (there may be no checkpoint).
    throw new RunBudgetExhaustedError(context.remainingMs, context.deadlineMarginMs);
  }
  const runs = manager(context);
  const created = await startRun(context, threadId, stateless, true, false, prepared);
  const { run, startsNow } = created;
  const deadline = Date.now() + budgetOf(context);
  if (startsNow) {
    // This request runs the run's first leg itself; what is left over goes to the dispatcher.
    const time = {
      legDeadline: deadline,
      processDeadline: Date.now() + context.remainingMs,
      requestId: context.requestId,
    };
    await runs.work({ tenantId: context.tenantId, threadId }, time, false, created);
  }
  const joined = await runs.join(
    context.tenantId,
    threadId,
    run.runId,
    Math.max(0, deadline - Date.now()),
  );
  if (!joined) throw new RunNotFoundError(run.runId);
  if (!joined.done) {
    context.log.outcome = "running";
    const message = `Run ${run.runId} continues in the background: join it (GET /threads/${threadId}/runs/${run.runId}/join)`;
    return { answer: { __error__: { error: "TimeoutError", message } }, run };
  }
  return { answer: await resultOf(context, joined), run };
}

/** A handler without a checkpointer keeps no threads or runs: a waited run runs here, statelessly. */
async function statelessWithoutCheckpointer(
  context: RouteContext,
  threadId: string,
  prepared?: { body: RunBody; assistant: AssistantRecord },
): Promise<WaitedRun> {
  const body = prepared?.body ?? parseRunBody(context.body, context.webhooks);
  if (body.ifNotExists !== "create" && context.params.thread_id !== undefined) {
    // No thread ever exists, so the default `reject` is a 404 as for any missing thread.
    throw new ThreadNotFoundError(
      threadId,
      'this handler keeps no threads: send if_not_exists "create"',
    );
  }
  if (body.kwargs.command?.resume !== undefined)
    throw new CheckpointerRequiredError("Resuming a run");
  const assistant = prepared?.assistant ?? (await runAssistant(context, body.assistantId));
  context.log.thread = threadId;
  context.log.assistant = assistant.assistantId;
  const outcome = await context.engine.run({
    tenantId: context.tenantId,
    threadId,
    assistantId: assistant.graphId,
    kind: "start",
    input: body.kwargs.input,
    remainingMs: context.remainingMs,
  });
  context.log.outcome = outcome.kind;
  switch (outcome.kind) {
    case "completed":
      return { answer: outcome.values };
    case "paused":
      throw new CheckpointerRequiredError("Pausing at an interrupt");
    case "deadline":
      return {
        answer: {
          __error__: { error: "TimeoutError", message: "The run was stopped at the deadline" },
        },
      };
    case "failed":
      return {
        answer: {
          __error__: {
            error: outcome.errorName,
            message: outcome.message,
            error_id: outcome.errorId,
          },
        },
      };
  }
}

/** The run a route's path names (every route with a `{run_id}` reads it here), or 404. */
export async function requireRun(context: RouteContext): Promise<RunRecord> {
  const threadId = threadIdFrom(context.params.thread_id);
  const runId = runIdFrom(context.params.run_id);
  context.log.thread = threadId;
  const runs = manager(context);
  const run = await runs.runStore.getRun(context.tenantId, threadId, runId);
  if (!run) throw new RunNotFoundError(runId);
  // A run that should be going on but whose process died goes on now (or ends), not when a new run comes.
  if (FINAL_RUN_STATUSES.includes(run.status)) return run;
  const current = await runs.recoverRun(context.tenantId, run);
  if (!current) throw new RunNotFoundError(runId);
  return current;
}

export function manager(context: RouteContext): RunManager {
  if (!context.runs) throw new CheckpointerRequiredError("A background run");
  return context.runs;
}

/** What a request may spend waiting: its remaining time less the margin to answer. */
export function budgetOf(context: RouteContext): number {
  return Math.max(0, context.remainingMs - context.deadlineMarginMs - ANSWER_MARGIN_MS);
}

export function contentLocation(run: RunRecord): Record<string, string> {
  return {
    "content-location": `/threads/${encodeURIComponent(run.threadId)}/runs/${encodeURIComponent(run.runId)}`,
  };
}

export const RUN_HANDLERS: Readonly<Record<string, RouteHandler>> = {
  "POST /threads/{thread_id}/runs": createRun,
  "GET /threads/{thread_id}/runs": listRuns,
  "POST /threads/{thread_id}/runs/wait": waitRun,
  "GET /threads/{thread_id}/runs/{run_id}": getRun,
  "DELETE /threads/{thread_id}/runs/{run_id}": deleteRun,
  "GET /threads/{thread_id}/runs/{run_id}/join": joinRun,
  "POST /threads/{thread_id}/runs/{run_id}/cancel": cancelRun,
  "POST /runs": createStatelessRun,
  "POST /runs/wait": waitStatelessRun,
  "POST /runs/batch": createRunBatch,
};
