import { randomUUID } from "node:crypto";
import { assertIdentifier } from "../../shared/identifiers";
import type { ThreadRecord } from "../../shared/threads";
import { InvalidRequestError } from "../../shared/errors";
import { describe, describeValue, json, noContent } from "./http";
import {
  integerField,
  objectField,
  optionalString,
  threadIdFrom,
  type RouteContext,
  type RouteHandler,
} from "./route-context";
import { commandOf } from "./run-body";
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

/** Most supersteps, and updates per superstep, a thread may be created with. */
const MAX_SUPERSTEPS = 100;

export const createThread: RouteHandler = async (context) => {
  const { body } = context;
  const threadId =
    body.thread_id === undefined || body.thread_id === null
      ? randomUUID()
      : threadIdFrom(body.thread_id);
  const metadata = withoutUndefined(objectField(body, "metadata") ?? {});
  const ifExists = body.if_exists ?? "raise";
  if (ifExists !== "raise" && ifExists !== "do_nothing") {
    throw new InvalidRequestError(
      "if_exists",
      `expected "raise" or "do_nothing", got ${describeValue(ifExists)}`,
    );
  }
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
  const supersteps = parseSupersteps(body.supersteps);
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
  const metadata = objectField(context.body, "metadata") ?? {};
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
    subgraphs: booleanQuery(context, "subgraphs"),
  });
  return json(200, threadStateJson(snapshot, record.threadId));
};

export const getThreadStateAt: RouteHandler = async (context) => {
  const record = await requireThread(context);
  const checkpointId = checkpointIdOf(context.params.checkpoint_id, "checkpoint_id");
  const snapshot = await readThreadState(context, record, {
    address: { checkpoint_id: checkpointId },
    subgraphs: booleanQuery(context, "subgraphs"),
  });
  return json(200, threadStateJson(snapshot, record.threadId));
};

export const postThreadStateAt: RouteHandler = async (context) => {
  const record = await requireThread(context);
  const subgraphs = context.body.subgraphs;
  if (subgraphs !== undefined && subgraphs !== null && typeof subgraphs !== "boolean") {
    throw new InvalidRequestError("subgraphs", `expected a boolean, got ${describe(subgraphs)}`);
  }
  const snapshot = await readThreadState(context, record, {
    address: checkpointAddressOf(context.body.checkpoint, "checkpoint"),
    subgraphs: subgraphs === true,
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
  const { body } = context;
  const values = body.values;
  if (
    values !== undefined &&
    values !== null &&
    (typeof values !== "object" ||
      (Array.isArray(values) && !values.every((item) => isObject(item))))
  ) {
    throw new InvalidRequestError(
      "values",
      `expected an object or a list of objects, got ${describe(values)}`,
    );
  }
  const asNode = optionalString(body, "as_node");
  const address = {
    ...checkpointAddressOf(body.checkpoint, "checkpoint"),
    ...(body.checkpoint_id !== undefined && body.checkpoint_id !== null
      ? { checkpoint_id: checkpointIdOf(body.checkpoint_id, "checkpoint_id") }
      : {}),
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

export const getThreadHistory: RouteHandler = async (context) =>
  threadHistory(context, {
    limit: integerField(context.query, "limit", 10, 1, 1000, true),
    before: context.query.before,
  });

export const postThreadHistory: RouteHandler = async (context) => {
  const { body } = context;
  return threadHistory(context, {
    limit: integerField(body, "limit", 10, 1, 1000),
    before: body.before,
    filter: objectField(body, "metadata"),
    address: checkpointAddressOf(body.checkpoint, "checkpoint"),
  });
};

async function threadHistory(
  context: RouteContext,
  options: {
    limit: number;
    before: unknown;
    filter?: Record<string, unknown>;
    address?: CheckpointAddress;
  },
) {
  const record = await requireThread(context);
  const before = checkpointIdOf(options.before, "before");
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

/** `supersteps` of `threads.create`, checked whole before the thread is created. */
function parseSupersteps(value: unknown): StateUpdate[][] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.length > MAX_SUPERSTEPS) {
    throw new InvalidRequestError(
      "supersteps",
      `expected a list of at most ${MAX_SUPERSTEPS} supersteps, got ${describe(value)}`,
    );
  }
  if (value.length === 0) return undefined;
  return value.map((superstep, step) => {
    const updates = isObject(superstep) ? superstep.updates : undefined;
    if (!Array.isArray(updates) || updates.length === 0 || updates.length > MAX_SUPERSTEPS) {
      throw new InvalidRequestError(
        `supersteps[${step}].updates`,
        `expected a list of 1 to ${MAX_SUPERSTEPS} updates, got ${describe(updates)}`,
      );
    }
    return updates.map((update, index): StateUpdate => {
      const field = `supersteps[${step}].updates[${index}]`;
      if (!isObject(update)) {
        throw new InvalidRequestError(field, `expected an object, got ${describe(update)}`);
      }
      if (typeof update.as_node !== "string") {
        throw new InvalidRequestError(
          `${field}.as_node`,
          `expected a node name, got ${describe(update.as_node)}`,
        );
      }
      const command = objectField(update, "command");
      return {
        values: update.values,
        asNode: update.as_node,
        ...(command ? { command: commandOf(command) } : {}),
      };
    });
  });
}

/** A checkpoint id as a path parameter, a body field, or `before` as the SDK sends it (a config or an id). */
function checkpointIdOf(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  const id =
    typeof value === "string"
      ? value
      : (value as { configurable?: { checkpoint_id?: unknown } }).configurable?.checkpoint_id;
  try {
    return assertIdentifier("checkpoint_id", id);
  } catch {
    throw new InvalidRequestError(
      field,
      `expected a checkpoint id or config, got ${describe(value)}`,
    );
  }
}

function checkpointAddressOf(value: unknown, field: string): CheckpointAddress | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) {
    throw new InvalidRequestError(field, `expected an object, got ${describe(value)}`);
  }
  const address: CheckpointAddress = {};
  if (value.checkpoint_id !== undefined && value.checkpoint_id !== null) {
    address.checkpoint_id = checkpointIdOf(value.checkpoint_id, `${field}.checkpoint_id`);
  }
  if (value.checkpoint_ns !== undefined && value.checkpoint_ns !== null) {
    if (typeof value.checkpoint_ns !== "string") {
      throw new InvalidRequestError(
        `${field}.checkpoint_ns`,
        `expected a string, got ${describe(value.checkpoint_ns)}`,
      );
    }
    address.checkpoint_ns = value.checkpoint_ns;
  }
  if (value.checkpoint_map !== undefined && value.checkpoint_map !== null) {
    const map = objectField(value, "checkpoint_map");
    if (map) address.checkpoint_map = map;
  }
  return address;
}

function booleanQuery(context: RouteContext, field: string): boolean {
  const value = context.query[field];
  if (value === undefined || value === "" || value === "false" || value === "0") return false;
  if (value === "true" || value === "1") return true;
  throw new InvalidRequestError(field, `expected true or false, got ${describeValue(value)}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
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
