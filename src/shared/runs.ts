/**
 * The run model of the LangGraph Server API: what a run is, its statuses and how a new run treats one already on
 * its thread. Every store of runs (the table's, the in-memory one) keeps this shape; none decides these rules.
 */
export const RUN_STATUSES = [
  "pending",
  "running",
  "success",
  "error",
  "timeout",
  "interrupted",
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Statuses a run ends in; a run in one of them never runs again. */
export const FINAL_RUN_STATUSES: readonly RunStatus[] = [
  "success",
  "error",
  "timeout",
  "interrupted",
];

export function isRunStatus(value: unknown): value is RunStatus {
  return typeof value === "string" && (RUN_STATUSES as readonly string[]).includes(value);
}

/**
 * What a new run does when its thread already has a run in progress or waiting:
 * - `reject`: refuse the new run (409);
 * - `interrupt`: stop the current run where it is (its finished steps stay), then run the new one;
 * - `rollback`: stop the current run, delete it and undo its steps, then run the new one;
 * - `enqueue`: run the new one after those already waiting.
 */
export const MULTITASK_STRATEGIES = ["reject", "interrupt", "rollback", "enqueue"] as const;
export type MultitaskStrategy = (typeof MULTITASK_STRATEGIES)[number];

/** How a run is stopped on request (`runs.cancel`, or a new run's `interrupt`/`rollback` strategy). */
export type CancelAction = "interrupt" | "rollback";

/** What a run was asked to do, as the client sent it (validated), kept with the run for every leg. */
export interface RunKwargs {
  input?: unknown;
  command?: { resume?: unknown; update?: unknown; goto?: unknown };
  /** LangGraph config: `configurable`, `recursion_limit`, `tags`, ... (never the thread id). */
  config?: Record<string, unknown>;
  context?: unknown;
  interruptBefore?: string[] | "*";
  interruptAfter?: string[] | "*";
  /** Checkpoint to start from (time travel): a fork of the thread from there. */
  checkpointId?: string;
  checkpointNamespace?: string;
  /** What the run streams (set when asked for, or when it was started by a stream route). */
  streamMode?: string[];
  streamSubgraphs?: boolean;
  /** Its events are stored so a client can reconnect (`Last-Event-ID`) or join from anywhere. */
  streamResumable?: boolean;
  webhook?: string;
  /** Delete the thread when the run ends (stateless runs with `on_completion: "delete"`). */
  temporary?: boolean;
  /** Seconds after its creation before the run starts. */
  afterSeconds?: number;
  durability?: "sync" | "async" | "exit";
  /**
   * A leg that reaches its deadline ends the run in `timeout` instead of handing it to a next leg: the client
   * continues the thread itself (`/invoke`, whose answer says how).
   */
  stopAtDeadline?: boolean;
}

/** A run, as stored. Times are epoch milliseconds. */
export interface RunRecord {
  runId: string;
  threadId: string;
  assistantId: string;
  /** The graph the run runs: its assistant's at creation. */
  graphId: string;
  status: RunStatus;
  kwargs: RunKwargs;
  metadata: Record<string, unknown>;
  multitaskStrategy: MultitaskStrategy;
  createdAt: number;
  updatedAt: number;
  /** Legs (executions of at most one function timeout each) started so far. */
  legs: number;
  /** When the first leg started the graph. */
  startedAt?: number;
  /** Stream events emitted so far by its legs (the next leg numbers its events from here). */
  eventCount?: number;
  /**
   * Why the run ended in error or timeout: the error's name and message as LangGraph Server gives them (never a
   * stack), and the id of the log line that records it.
   */
  error?: { error: string; message: string; error_id?: string };
  /** How its webhook's delivery went, once the run ended (runs with a webhook only). */
  webhookDelivery?: WebhookDeliveryRecord;
}

/** A webhook delivery's outcome, as the run keeps it. */
export interface WebhookDeliveryRecord {
  outcome: "delivered" | "failed";
  attempts: number;
  /** The receiver's last HTTP status, when it answered. */
  statusCode?: number;
  /** Epoch milliseconds of the last attempt. */
  at: number;
}

export interface ListRunsInput {
  tenantId: string;
  threadId: string;
  limit: number;
  offset: number;
  status?: RunStatus;
}

/** What may change on a run after it is created. */
export type RunChanges = Partial<
  Pick<RunRecord, "status" | "legs" | "startedAt" | "error" | "eventCount" | "webhookDelivery">
>;

export interface PutRunOptions {
  /** False: a run of an existing thread (ThreadNotFoundError when it is missing, nothing stored). */
  createThread?: boolean;
  /**
   * The record need not be stored at once: a store may hold it briefly to send it with the thread's next
   * checkpoint write (one request instead of two). The promise still resolves only once it is stored.
   */
  soon?: boolean;
}

/**
 * Run records, always scoped by tenant and thread. A run belongs to its thread: deleting the thread deletes its
 * runs.
 */
export interface RunStore {
  /**
   * Stores a new run. `createThread: false` (a run of an existing thread) throws ThreadNotFoundError when the
   * thread is missing, and stores nothing: a run record never creates the thread it belongs to.
   */
  putRun(tenantId: string, run: RunRecord, options?: PutRunOptions): Promise<void>;
  getRun(tenantId: string, threadId: string, runId: string): Promise<RunRecord | undefined>;
  /** Newest first. */
  listRuns(input: ListRunsInput): Promise<RunRecord[]>;
  /** Applies `changes` to an existing run; undefined when there is none. */
  updateRun(
    tenantId: string,
    threadId: string,
    runId: string,
    changes: RunChanges,
    now: number,
  ): Promise<RunRecord | undefined>;
  deleteRun(tenantId: string, threadId: string, runId: string): Promise<void>;
  /** Removes every run of a deleted thread (a no-op where runs are stored with the thread's items). */
  forgetThread(tenantId: string, threadId: string): Promise<void>;
}
