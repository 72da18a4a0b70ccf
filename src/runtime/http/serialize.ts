import { isLeased } from "../../shared/run-rules";
import type { PendingInterrupt, ThreadRecord, ThreadStatus } from "../../shared/threads";

/** Thread statuses of the LangGraph Server API. */
export type SdkThreadStatus = "idle" | "busy" | "interrupted" | "error";

const TO_SDK: Record<ThreadStatus, SdkThreadStatus> = {
  RUNNING: "busy",
  PAUSED_FOR_HUMAN: "interrupted",
  COMPLETED: "idle",
  ERROR: "error",
};

/**
 * Accepted `status` filters of the inbox: the SDK's names and the simple face's. A Map, so a client's string is
 * never looked up among an object's inherited properties (`"__proto__"` is just an unknown status).
 */
export const SEARCH_STATUSES: ReadonlyMap<string, ThreadStatus> = new Map<string, ThreadStatus>([
  ["busy", "RUNNING"],
  ["interrupted", "PAUSED_FOR_HUMAN"],
  ["idle", "COMPLETED"],
  ["error", "ERROR"],
  ["RUNNING", "RUNNING"],
  ["PAUSED_FOR_HUMAN", "PAUSED_FOR_HUMAN"],
  ["COMPLETED", "COMPLETED"],
  ["ERROR", "ERROR"],
]);

/**
 * The status a client sees: a leased thread is RUNNING (a stopped run's node may still run until its lease
 * lapses); a RUNNING thread whose lease lapsed (its container died) is in error.
 */
export function effectiveStatus(record: ThreadRecord, now: number): ThreadStatus | undefined {
  if (isLeased(record, now)) return "RUNNING";
  if (record.status === "RUNNING") return "ERROR";
  return record.status;
}

export function sdkStatus(record: ThreadRecord, now: number): SdkThreadStatus {
  const status = effectiveStatus(record, now);
  return status === undefined ? "idle" : TO_SDK[status];
}

/** `Thread.interrupts`: pending interrupts keyed by the task that raised them. */
export function interruptsByTask(
  interrupts: PendingInterrupt[],
  fallbackKey: string,
): Record<string, Array<{ id: string; value: unknown }>> {
  const byTask: Record<string, Array<{ id: string; value: unknown }>> = {};
  for (const item of interrupts) {
    const key = item.taskId ?? fallbackKey;
    (byTask[key] ??= []).push({ id: item.id, value: item.value });
  }
  return byTask;
}

/** The SDK's `Thread` (values only where the caller read them). */
export function threadJson(
  record: ThreadRecord,
  now: number,
  values?: unknown,
): Record<string, unknown> {
  return {
    thread_id: record.threadId,
    created_at: new Date(record.createdAt).toISOString(),
    updated_at: new Date(record.updatedAt).toISOString(),
    metadata: {
      ...record.metadata,
      ...(record.graphId ? { graph_id: record.graphId } : {}),
    },
    status: sdkStatus(record, now),
    config: {},
    values: values ?? null,
    interrupts: interruptsByTask(record.interrupts, record.nextNodes.join(",") || "unknown"),
  };
}

// LangGraph's StateSnapshot, loosely typed: the handler only reshapes it.
/* eslint-disable @typescript-eslint/no-explicit-any */
type Snapshot = any;

/**
 * The SDK's `ThreadState` from a LangGraph StateSnapshot. Thread ids in configs are replaced by the client's
 * own (the saver may see a tenant-scoped id), and nothing of `configurable` beyond the checkpoint address leaks.
 */
export function threadStateJson(snapshot: Snapshot, threadId: string): Record<string, unknown> {
  const checkpoint = checkpointJson(snapshot?.config, threadId);
  return {
    values: snapshot?.values ?? {},
    next: snapshot?.next ?? [],
    tasks: (snapshot?.tasks ?? []).map((task: any) => ({
      id: task.id,
      name: task.name,
      path: task.path ?? [],
      error:
        task.error === undefined || task.error === null
          ? null
          : String(task.error?.message ?? task.error),
      interrupts: task.interrupts ?? [],
      // A subgraph's task: where its state lives, and that state when the caller asked for subgraphs.
      checkpoint: task.state?.configurable ? taskCheckpointJson(task.state, threadId) : null,
      state: task.state && "values" in task.state ? threadStateJson(task.state, threadId) : null,
      result: task.result ?? null,
    })),
    metadata: snapshot?.metadata ? { ...snapshot.metadata, thread_id: threadId } : {},
    created_at: snapshot?.createdAt ?? null,
    checkpoint,
    parent_checkpoint: snapshot?.parentConfig
      ? checkpointJson(snapshot.parentConfig, threadId)
      : null,
  };
}

/** A subgraph task's address as LangGraph gives it (its namespace; an id once it has one), the client's thread id. */
function taskCheckpointJson(config: any, threadId: string): Record<string, unknown> {
  const address: Record<string, unknown> = { thread_id: threadId };
  for (const key of ["checkpoint_ns", "checkpoint_id", "checkpoint_map"]) {
    if (config.configurable[key] !== undefined) address[key] = config.configurable[key];
  }
  return address;
}

function checkpointJson(config: any, threadId: string): Record<string, unknown> | null {
  const configurable = config?.configurable;
  if (!configurable?.checkpoint_id) {
    return { thread_id: threadId, checkpoint_ns: "", checkpoint_id: null, checkpoint_map: null };
  }
  return {
    thread_id: threadId,
    checkpoint_ns: configurable.checkpoint_ns ?? "",
    checkpoint_id: configurable.checkpoint_id,
    checkpoint_map: configurable.checkpoint_map ?? null,
  };
}
/* eslint-enable @typescript-eslint/no-explicit-any */
