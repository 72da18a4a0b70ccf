import { randomUUID } from "node:crypto";
import type { ThreadRecord } from "../../shared/threads";
import { z } from "zod";
import { InvalidRequestError } from "../../shared/errors";
import { describeValue, json, noContent } from "./http";
import { threadIdFrom, type RouteContext, type RouteHandler } from "./route-context";
import { parseRequest } from "./schemas/request-schema";
import {
  booleanQuerySchema,
  checkpointIdSchema,
  threadCreateSchema,
  threadHistoryQuery,
  threadHistorySchema,
  threadPatchSchema,
  threadStateAtSchema,
  threadStateUpdateSchema,
} from "./schemas/thread-schemas";
import { threadJson, threadStateJson } from "./serialize";
import { countThreads, searchThreads } from "./thread-search";
import {
  applyStateUpdates,
  copyCheckpoints,
  readThreadState,
  threadGraphId,
  type CheckpointAddress,
  type StateUpdate,
} from "./thread-state";

export { MAX_SEARCH_LIMIT, MAX_SEARCH_OFFSET } from "./thread-search";

/** Threads on the LangGraph Server face (`client.threads.*` of `@langchain/langgraph-sdk`). */

export const createThread: RouteHandler = async (context) => {
  const body = parseRequest(threadCreateSchema, context.body);
  const threadId =
    body.thread_id === undefined || body.thread_id === null
      ? randomUUID()
      : threadIdFrom(body.thread_id);
  const metadata = withoutUndefined(body.metadata ?? {});
  const ifExists = body.if_exists ?? "raise";
  const graphId = body.graph_id ?? metadata.graph_id;
  if (graphId !== undefined && graphId !== null) {
    if (typeof graphId !== "string" || !context.registry.has(graphId)) {
      throw new InvalidRequestError(
        "graph_id",
        `expected one of ${context.registry.assistantIds.join(", ")}, got ${describeValue(graphId)}`,
      );
    }
    metadata.graph_id = graphId;
  }
  const supersteps = superstepsOf(body.supersteps);
  context.log.thread = threadId;
  const now = Date.now();
  const store = context.engine.store("Creating a thread");
  const scope = context.engine.tenant(context.tenantId);
  const existing = supersteps ? await store.get(context.tenantId, threadId) : undefined;
  let record = await context.engine.replacingExpired(scope, threadId, true, () =>
    store.create({ tenantId: context.tenantId, threadId, metadata, now, ifExists }),
  );
  if (supersteps && !existing) {
    try {
      record = await context.engine.changeThread(
        context.tenantId,
        threadId,
        context.remainingMs,
        async (locked) => {
          const { outcome } = await applyStateUpdates(context, locked, supersteps, undefined);
          return { value: { ...locked, ...outcome }, outcome };
        },
      );
    } catch (error) {
      // The thread exists only for these supersteps: it does not outlive their failure.
      await context.engine.deleteThread(context.tenantId, threadId, context.remainingMs);
      throw error;
    }
  }
  return json(200, threadJson(record, Date.now(), supersteps ? undefined : {}));
};

export const getThread: RouteHandler = async (context) => {
  const record = await requireThread(context);
  // A thread whose run's process died gets it going again (or ended) as it is read.
  await context.runs?.recover(context.tenantId, record.threadId, record);
  const snapshot = record.status === undefined ? undefined : await readThreadState(context, record);
  return json(200, threadJson(record, Date.now(), snapshot?.values ?? {}));
};

export const patchThread: RouteHandler = async (context) => {
  const threadId = threadIdFrom(context.params.thread_id);
  context.log.thread = threadId;
  const metadata = parseRequest(threadPatchSchema, context.body).metadata ?? {};
  const record = await context.engine.store("Updating a thread").patchMetadata({
    tenantId: context.tenantId,
    threadId,
    metadata: withoutUndefined(metadata),
    now: Date.now(),
  });
  return json(200, threadJson(record, Date.now()));
};

export const deleteThread: RouteHandler = async (context) => {
  const threadId = threadIdFrom(context.params.thread_id);
  context.log.thread = threadId;
  await context.engine.deleteThread(context.tenantId, threadId, context.remainingMs);
  await context.runs?.forgetThread(context.tenantId, threadId);
  return noContent();
};

/** A new thread with the source's metadata (its `thread_id` the copy's), checkpoints, writes and status. */
export const copyThread: RouteHandler = async (context) => {
  const source = await requireThread(context);
  const copyId = randomUUID();
  const now = Date.now();
  const store = context.engine.store("Copying a thread");
  const scope = context.engine.tenant(context.tenantId);
  await store.create({
    tenantId: context.tenantId,
    threadId: copyId,
    metadata: { ...source.metadata, thread_id: copyId },
    now,
    ifExists: "raise",
  });
  try {
    const record = await context.engine.changeThread(
      context.tenantId,
      copyId,
      context.remainingMs,
      async (locked) => {
        await copyCheckpoints(context, scope, source.threadId, copyId);
        const outcome = {
          status: source.status === "RUNNING" ? "ERROR" : source.status,
          nextNodes: source.nextNodes,
          interrupts: source.interrupts,
          ...(source.graphId !== undefined ? { graphId: source.graphId } : {}),
        } as const;
        return { value: { ...locked, ...outcome }, outcome };
      },
    );
    return json(200, threadJson(record, Date.now()));
  } catch (error) {
    // Half a copy is no copy.
    await context.engine.deleteThread(context.tenantId, copyId, context.remainingMs);
    throw error;
  }
};

export const searchThreadsRoute: RouteHandler = async (context) => {
  const { threads, next } = await searchThreads(context);
  return json(200, threads, next !== undefined ? { "x-pagination-next": String(next) } : {});
};

export const countThreadsRoute: RouteHandler = async (context) =>
  json(200, await countThreads(context));

export const getThreadState: RouteHandler = async (context) => {
  const record = await requireThread(context);
  const snapshot = await readThreadState(context, record, {
    subgraphs: subgraphsQuery(context),
  });
  return json(200, threadStateJson(snapshot, record.threadId));
};

export const getThreadStateAt: RouteHandler = async (context) => {
  const record = await requireThread(context);
  const { checkpoint_id: checkpointId } = parseRequest(
    z.object({ checkpoint_id: checkpointIdSchema }),
    context.params,
  );
  const snapshot = await readThreadState(context, record, {
    address: { checkpoint_id: checkpointId },
    subgraphs: subgraphsQuery(context),
  });
  return json(200, threadStateJson(snapshot, record.threadId));
};

export const postThreadStateAt: RouteHandler = async (context) => {
  const record = await requireThread(context);
  const body = parseRequest(threadStateAtSchema, context.body);
  const snapshot = await readThreadState(context, record, {
    address: body.checkpoint,
    subgraphs: body.subgraphs === true,
  });
  return json(200, threadStateJson(snapshot, record.threadId));
};

/**
 * `threads.updateState`: writes values as if `as_node` returned them (Agent Inbox ignores an interrupt this
 * way), on the latest checkpoint or the one given (a fork). Refused with 409 while a run holds or waits for
 * the thread; the thread's status then follows its new state.
 */
export const updateThreadState: RouteHandler = async (context) => {
  const threadId = threadIdFrom(context.params.thread_id);
  context.log.thread = threadId;
  const body = parseRequest(threadStateUpdateSchema, context.body);
  const { values, as_node: asNode } = body;
  const address = {
    ...body.checkpoint,
    ...(body.checkpoint_id !== undefined ? { checkpoint_id: body.checkpoint_id } : {}),
  };
  const checkpoint = await context.engine.changeThread(
    context.tenantId,
    threadId,
    context.remainingMs,
    async (record) => {
      const update: StateUpdate = { values, ...(asNode !== undefined ? { asNode } : {}) };
      const applied = await applyStateUpdates(context, record, [[update]], address);
      return { value: applied.checkpoint, outcome: applied.outcome };
    },
  );
  return json(200, { checkpoint });
};

export const getThreadHistory: RouteHandler = async (context) => {
  const query = parseRequest(threadHistoryQuery, context.query);
  return threadHistory(context, { limit: query.limit ?? 10, before: query.before });
};

export const postThreadHistory: RouteHandler = async (context) => {
  const body = parseRequest(threadHistorySchema, context.body);
  return threadHistory(context, {
    limit: body.limit ?? 10,
    before: body.before,
    filter: body.metadata,
    address: body.checkpoint,
  });
};

async function threadHistory(
  context: RouteContext,
  options: {
    limit: number;
    before: string | undefined;
    filter?: Record<string, unknown>;
    address?: CheckpointAddress;
  },
) {
  const record = await requireThread(context);
  const { before } = options;
  const scope = context.engine.tenant(context.tenantId);
  const graph = await context.engine.graph(threadGraphId(context, record), context.tenantId);
  const saverThreadId = scope.saverThreadId(record.threadId);
  const states = await context.engine.withSaver(scope, async () => {
    const collected: unknown[] = [];
    const history = graph.getStateHistory(
      { configurable: { checkpoint_ns: "", ...options.address, thread_id: saverThreadId } },
      {
        limit: options.limit,
        ...(options.filter ? { filter: options.filter } : {}),
        ...(before
          ? { before: { configurable: { thread_id: saverThreadId, checkpoint_id: before } } }
          : {}),
      },
    );
    for await (const snapshot of history)
      collected.push(threadStateJson(snapshot, record.threadId));
    return collected;
  });
  return json(200, states);
}

async function requireThread(context: RouteContext): Promise<ThreadRecord> {
  const threadId = threadIdFrom(context.params.thread_id);
  context.log.thread = threadId;
  return context.engine.requireThread(context.tenantId, threadId);
}

/** `supersteps` of `threads.create` (checked whole by its schema before the thread is created), as updates. */
function superstepsOf(
  supersteps: z.output<typeof threadCreateSchema>["supersteps"],
): StateUpdate[][] | undefined {
  if (supersteps === undefined || supersteps.length === 0) return undefined;
  return supersteps.map(({ updates }) =>
    updates.map((update): StateUpdate => ({
      values: update.values,
      asNode: update.as_node,
      ...(update.command ? { command: update.command } : {}),
    })),
  );
}

function subgraphsQuery(context: RouteContext): boolean {
  return parseRequest(z.looseObject({ subgraphs: booleanQuerySchema }), context.query).subgraphs;
}

function withoutUndefined(value: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
}

export const THREAD_HANDLERS: Readonly<Record<string, RouteHandler>> = {
  "POST /threads": createThread,
  "POST /threads/search": searchThreadsRoute,
  "POST /threads/count": countThreadsRoute,
  "GET /threads/{thread_id}": getThread,
  "PATCH /threads/{thread_id}": patchThread,
  "DELETE /threads/{thread_id}": deleteThread,
  "POST /threads/{thread_id}/copy": copyThread,
  "GET /threads/{thread_id}/state": getThreadState,
  "POST /threads/{thread_id}/state": updateThreadState,
  "GET /threads/{thread_id}/state/{checkpoint_id}": getThreadStateAt,
  "POST /threads/{thread_id}/state/checkpoint": postThreadStateAt,
  "GET /threads/{thread_id}/history": getThreadHistory,
  "POST /threads/{thread_id}/history": postThreadHistory,
};
