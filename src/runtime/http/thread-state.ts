import type { RunnableConfig } from "@langchain/core/runnables";
import { Command } from "@langchain/langgraph";
import type { ChannelVersions, CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { CheckpointNotFoundError, InvalidRequestError } from "../../shared/errors";
import type { PendingInterrupt, ThreadRecord, ThreadStatus } from "../../shared/threads";
import type { TenantScope } from "../graphs/engine";
import { assistantFrom, type RouteContext } from "./route-context";
import type { HandlerGraph } from "../types";

/**
 * A thread's state through its graph: reads (latest or at a checkpoint, with subgraphs), updates (`as_node`,
 * supersteps) and copies. Updates and copies run while the thread is locked (no run can start meanwhile), and
 * leave its status as its new state says: waiting at an interrupt or a breakpoint, or idle.
 */

/** Where in a thread's history to read or write: LangGraph Server's `checkpoint` object. */
export interface CheckpointAddress {
  checkpoint_id?: string;
  checkpoint_ns?: string;
  checkpoint_map?: Record<string, unknown>;
}

// LangGraph's StateSnapshot, loosely typed: the handler only reshapes it.
/* eslint-disable @typescript-eslint/no-explicit-any */
type Snapshot = any;

/** The graph a thread runs: the one its last run used, else the one its metadata names, else the default. */
export function threadGraphId(context: RouteContext, record: ThreadRecord): string {
  if (record.graphId !== undefined && context.registry.has(record.graphId)) {
    return record.graphId;
  }
  const named = record.metadata.graph_id;
  if (typeof named === "string" && context.registry.has(named)) return named;
  return assistantFrom(context.registry, undefined);
}

/**
 * Throws CheckpointNotFoundError unless the thread has the checkpoint `address` names, in its namespace (the root
 * one when none is given). LangGraph reads an unknown checkpoint as an empty one, so without this a read answers
 * empty values and a write or run starts over from nothing. An address without a checkpoint id names the
 * thread's latest: nothing to check.
 */
export async function requireCheckpoint(
  context: RouteContext,
  threadId: string,
  address: CheckpointAddress | undefined,
): Promise<void> {
  const checkpointId = address?.checkpoint_id;
  if (checkpointId === undefined) return;
  const scope = context.engine.tenant(context.tenantId);
  if (!scope.saver) return;
  const namespace = address?.checkpoint_ns ?? "";
  const tuple = await scope.saver.getTuple({
    configurable: {
      thread_id: scope.saverThreadId(threadId),
      checkpoint_ns: namespace,
      checkpoint_id: checkpointId,
    },
  });
  if (!tuple) throw new CheckpointNotFoundError(threadId, checkpointId, namespace);
}

/**
 * The thread's state (latest, or at `address`: CheckpointNotFoundError when the thread lacks it), as LangGraph's
 * `getState` gives it.
 */
export async function readThreadState(
  context: RouteContext,
  record: ThreadRecord,
  options: { address?: CheckpointAddress; subgraphs?: boolean } = {},
): Promise<Snapshot> {
  await requireCheckpoint(context, record.threadId, options.address);
  const scope = context.engine.tenant(context.tenantId);
  const graph = await context.engine.graph(threadGraphId(context, record), context.tenantId);
  return context.engine.withSaver(scope, () =>
    graph.getState(
      { configurable: { ...options.address, thread_id: scope.saverThreadId(record.threadId) } },
      options.subgraphs ? { subgraphs: true } : undefined,
    ),
  );
}

/** One update of a superstep: values (or a command) written as if `as_node` had returned them. */
export interface StateUpdate {
  values?: unknown;
  command?: { resume?: unknown; update?: unknown; goto?: unknown };
  asNode?: string;
}

/**
 * Applies updates to a locked thread, one superstep after another (a single `updateState` is one superstep of
 * one update), from `address` when given (CheckpointNotFoundError, nothing written, when the thread lacks it).
 * Returns the new checkpoint's address (the client's thread id) and the thread status its new state implies.
 */
export async function applyStateUpdates(
  context: RouteContext,
  record: ThreadRecord,
  supersteps: StateUpdate[][],
  address: CheckpointAddress | undefined,
): Promise<{ checkpoint: Record<string, unknown>; outcome: ThreadOutcome }> {
  await requireCheckpoint(context, record.threadId, address);
  const scope = context.engine.tenant(context.tenantId);
  const graphId = threadGraphId(context, record);
  const graph = (await context.engine.graph(graphId, context.tenantId)) as UpdatableGraph;
  const config: RunnableConfig = {
    configurable: {
      checkpoint_ns: "",
      ...address,
      thread_id: scope.saverThreadId(record.threadId),
    },
  };
  return context.engine.withSaver(scope, async () => {
    let next: RunnableConfig;
    try {
      next =
        supersteps.length === 1 && supersteps[0]!.length === 1
          ? await graph.updateState(config, valuesOf(supersteps[0]![0]!), supersteps[0]![0]!.asNode)
          : await graph.bulkUpdateState(
              config,
              supersteps.map((updates) => ({
                updates: updates.map((update) => ({
                  values: valuesOf(update),
                  asNode: update.asNode,
                })),
              })),
            );
    } catch (error) {
      // LangGraph refuses an update it cannot place (an unknown node, an ambiguous writer): the caller's input.
      if ((error as Error)?.name === "InvalidUpdateError") {
        throw new InvalidRequestError("update", (error as Error).message);
      }
      throw error;
    }
    const state = await graph.getState({
      configurable: { thread_id: config.configurable!.thread_id },
    });
    return {
      checkpoint: {
        ...next.configurable,
        thread_id: record.threadId,
        checkpoint_ns: next.configurable?.checkpoint_ns ?? "",
      },
      outcome: outcomeOf(state, graphId),
    };
  });
}

/** What a thread's status becomes after its state changed outside a run. */
export interface ThreadOutcome {
  status: ThreadStatus;
  nextNodes: string[];
  interrupts: PendingInterrupt[];
  graphId: string;
}

/** Waiting (at an interrupt, or a breakpoint before its next nodes) or idle, from a state snapshot. */
export function outcomeOf(state: Snapshot, graphId: string): ThreadOutcome {
  const interrupts: PendingInterrupt[] = ((state?.tasks ?? []) as any[]).flatMap((task) =>
    ((task.interrupts ?? []) as any[]).map((raised) => ({
      id: String(raised.id),
      value: raised.value,
      taskId: String(task.id),
    })),
  );
  const next: string[] = state?.next ?? [];
  return next.length > 0
    ? { status: "PAUSED_FOR_HUMAN", nextNodes: next, interrupts, graphId }
    : { status: "COMPLETED", nextNodes: [], interrupts: [], graphId };
}

/**
 * Copies every checkpoint (all namespaces) and pending write of one thread into another, oldest first, through
 * the saver's own interface, so it works for any saver. Checkpoint ids stay the same; metadata naming the thread
 * names the copy.
 */
export async function copyCheckpoints(
  context: RouteContext,
  scope: TenantScope,
  fromThreadId: string,
  toThreadId: string,
): Promise<void> {
  const saver = scope.saver;
  if (!saver) return;
  const from = scope.saverThreadId(fromThreadId);
  const to = scope.saverThreadId(toThreadId);
  const tuples: CheckpointTuple[] = [];
  for await (const tuple of saver.list({ configurable: { thread_id: from } })) tuples.push(tuple);
  const byNamespace = new Map<string, CheckpointTuple[]>();
  for (const tuple of tuples) {
    const namespace = String(tuple.config.configurable?.checkpoint_ns ?? "");
    byNamespace.set(namespace, [...(byNamespace.get(namespace) ?? []), tuple]);
  }
  for (const [namespace, list] of byNamespace) {
    // Oldest first: each checkpoint's parent exists when it is written.
    list.sort((a, b) => (a.checkpoint.id < b.checkpoint.id ? -1 : 1));
    let parent: CheckpointTuple | undefined;
    for (const tuple of list) {
      const metadata = { ...tuple.metadata } as Record<string, unknown>;
      if ("thread_id" in metadata) metadata.thread_id = toThreadId;
      const written = await saver.put(
        {
          configurable: {
            thread_id: to,
            checkpoint_ns: namespace,
            ...(tuple.parentConfig?.configurable?.checkpoint_id
              ? { checkpoint_id: tuple.parentConfig.configurable.checkpoint_id }
              : {}),
          },
        },
        tuple.checkpoint,
        metadata as never,
        changedVersions(tuple, parent),
      );
      const byTask = new Map<string, Array<[string, unknown]>>();
      for (const [taskId, channel, value] of tuple.pendingWrites ?? []) {
        byTask.set(taskId, [...(byTask.get(taskId) ?? []), [channel, value]]);
      }
      for (const [taskId, writes] of byTask) await saver.putWrites(written, writes, taskId);
      parent = tuple;
    }
  }
}

/** Channels whose version differs from the parent's: what a saver stores anew for this checkpoint. */
function changedVersions(
  tuple: CheckpointTuple,
  parent: CheckpointTuple | undefined,
): ChannelVersions {
  const versions = tuple.checkpoint.channel_versions;
  if (!parent) return { ...versions };
  const before = parent.checkpoint.channel_versions;
  return Object.fromEntries(
    Object.entries(versions).filter(([channel, version]) => before[channel] !== version),
  );
}

function valuesOf(update: StateUpdate): unknown {
  if (!update.command) return update.values ?? null;
  const { resume, update: values, goto } = update.command;
  return new Command({
    ...(resume !== undefined ? { resume } : {}),
    ...(values !== undefined ? { update: values as Record<string, unknown> } : {}),
    ...(goto !== undefined ? { goto: goto as string } : {}),
  });
}

/** The compiled graph's state-writing methods (not in HandlerGraph: only these routes need them). */
interface UpdatableGraph extends HandlerGraph {
  updateState(config: RunnableConfig, values: unknown, asNode?: string): Promise<RunnableConfig>;
  bulkUpdateState(
    config: RunnableConfig,
    supersteps: Array<{ updates: Array<{ values: unknown; asNode?: string }> }>,
  ): Promise<RunnableConfig>;
}
/* eslint-enable @typescript-eslint/no-explicit-any */
