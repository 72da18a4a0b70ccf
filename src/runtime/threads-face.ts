import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { assertIdentifier } from "../shared/identifiers";
import { describe, describeValue, HttpError, json, noContent } from "./http";
import {
  assistantFrom,
  integerField,
  objectField,
  threadIdFrom,
  type RouteContext,
  type RouteHandler,
} from "./route-context";
import { SEARCH_STATUSES, threadJson, threadStateJson } from "./serialize";
import type { ThreadRecord } from "../shared/threads";

/** Threads on the LangGraph Server face (`client.threads.*` of `@langchain/langgraph-sdk`). */

export const createThread: RouteHandler = async (context) => {
  const { body } = context;
  const threadId =
    body.thread_id === undefined || body.thread_id === null
      ? randomUUID()
      : threadIdFrom(body.thread_id, 422);
  const metadata = objectField(body, "metadata") ?? {};
  const ifExists = body.if_exists ?? "raise";
  if (ifExists !== "raise" && ifExists !== "do_nothing") {
    throw new HttpError(
      422,
      `Invalid if_exists: expected "raise" or "do_nothing", got ${JSON.stringify(ifExists)}`,
    );
  }
  context.log.thread = threadId;
  const now = Date.now();
  const store = context.engine.store("Creating a thread");
  const scope = context.engine.tenant(context.tenantId);
  const record = await context.engine.replacingExpired(scope, threadId, true, () =>
    store.create({
      tenantId: context.tenantId,
      threadId,
      metadata: withoutUndefined(metadata),
      now,
      ifExists,
    }),
  );
  return json(200, threadJson(record, now, {}));
};

export const getThread: RouteHandler = async (context) => {
  const threadId = threadIdFrom(context.params.thread_id, 422);
  context.log.thread = threadId;
  const record = await context.engine.requireThread(context.tenantId, threadId);
  const snapshot = record.status === undefined ? undefined : await readState(context, record);
  return json(200, threadJson(record, Date.now(), snapshot?.values ?? {}));
};

export const deleteThread: RouteHandler = async (context) => {
  const threadId = threadIdFrom(context.params.thread_id, 422);
  context.log.thread = threadId;
  await context.engine.deleteThread(context.tenantId, threadId, context.remainingMs);
  return noContent();
};

/** Largest page and deepest offset of a search: each page of the inbox reads offset + limit records. */
export const MAX_SEARCH_LIMIT = 100;
export const MAX_SEARCH_OFFSET = 1000;

export const searchThreads: RouteHandler = async (context) => {
  const { body } = context;
  const limit = integerField(body, "limit", 10, 1, MAX_SEARCH_LIMIT);
  const offset = integerField(body, "offset", 0, 0, MAX_SEARCH_OFFSET);
  const metadata = objectField(body, "metadata");
  let status;
  if (body.status !== undefined && body.status !== null) {
    status = typeof body.status === "string" ? SEARCH_STATUSES.get(body.status) : undefined;
    if (!status) {
      throw new HttpError(
        422,
        `Invalid status: expected one of ${[...SEARCH_STATUSES.keys()].join(", ")}, got ${describeValue(body.status)}`,
      );
    }
  }
  const store = context.engine.store("Searching threads");
  const filtering = metadata !== undefined && Object.keys(metadata).length > 0;
  // A metadata filter is applied in code, so it reads a larger window first.
  const records = await store.search({
    tenantId: context.tenantId,
    status,
    limit: filtering ? 1000 : limit,
    offset: filtering ? 0 : offset,
  });
  const now = Date.now();
  const matching = filtering
    ? records.filter((record) => matchesMetadata(record, metadata)).slice(offset, offset + limit)
    : records;
  return json(
    200,
    matching.map((record) => threadJson(record, now)),
  );
};

export const getThreadState: RouteHandler = async (context) => {
  const threadId = threadIdFrom(context.params.thread_id, 422);
  context.log.thread = threadId;
  const record = await context.engine.requireThread(context.tenantId, threadId);
  const snapshot = await readState(context, record);
  return json(200, threadStateJson(snapshot, threadId));
};

export const getThreadHistory: RouteHandler = async (context) => {
  const threadId = threadIdFrom(context.params.thread_id, 422);
  context.log.thread = threadId;
  const { body } = context;
  const limit = integerField(body, "limit", 10, 1, 1000);
  const filter = objectField(body, "metadata");
  const before = checkpointIdOf(body.before, "before");
  const record = await context.engine.requireThread(context.tenantId, threadId);
  const assistantId = record.assistantId ?? assistantFrom(context.registry, undefined, 422);
  const scope = context.engine.tenant(context.tenantId);
  const graph = await context.engine.graph(assistantId, context.tenantId);
  const saverThreadId = scope.saverThreadId(threadId);
  const states = await context.engine.withSaver(scope, async () => {
    const collected: unknown[] = [];
    const history = graph.getStateHistory(
      { configurable: { thread_id: saverThreadId } },
      {
        limit,
        ...(filter ? { filter } : {}),
        ...(before
          ? { before: { configurable: { thread_id: saverThreadId, checkpoint_id: before } } }
          : {}),
      },
    );
    for await (const snapshot of history) collected.push(threadStateJson(snapshot, threadId));
    return collected;
  });
  return json(200, states);
};

async function readState(context: RouteContext, record: ThreadRecord) {
  const assistantId = record.assistantId ?? assistantFrom(context.registry, undefined, 422);
  const scope = context.engine.tenant(context.tenantId);
  const graph = await context.engine.graph(assistantId, context.tenantId);
  return context.engine.withSaver(scope, () =>
    graph.getState({ configurable: { thread_id: scope.saverThreadId(record.threadId) } }),
  );
}

/** `before` as the SDK sends it: a config `{configurable: {checkpoint_id}}` or a bare checkpoint id. */
function checkpointIdOf(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  const id =
    typeof value === "string"
      ? value
      : (value as { configurable?: { checkpoint_id?: unknown } }).configurable?.checkpoint_id;
  try {
    return assertIdentifier("checkpoint_id", id);
  } catch {
    throw new HttpError(
      422,
      `Invalid ${field}: expected a checkpoint id or config, got ${describe(value)}`,
    );
  }
}

function matchesMetadata(record: ThreadRecord, filter: Record<string, unknown>): boolean {
  return Object.entries(filter).every(([key, value]) =>
    isDeepStrictEqual(record.metadata[key], value),
  );
}

function withoutUndefined(value: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
}

export const THREAD_HANDLERS: Readonly<Record<string, RouteHandler>> = {
  "POST /threads": createThread,
  "POST /threads/search": searchThreads,
  "GET /threads/{thread_id}": getThread,
  "DELETE /threads/{thread_id}": deleteThread,
  "GET /threads/{thread_id}/state": getThreadState,
  "POST /threads/{thread_id}/history": getThreadHistory,
};
