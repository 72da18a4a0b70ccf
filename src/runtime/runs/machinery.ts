import type { Logger } from "pino";
import type { RunStore } from "../../shared/runs";
import type { ThreadStore } from "../../shared/threads";
import type { RunEngine } from "../graphs/engine";
import type { RunMetrics } from "../observability";
import type { RunEventLog } from "./run-event-log";
import type { LocalLegs } from "./local-legs";
import type { RunEndings } from "./run-endings";
import type { WebhookSender } from "./webhooks";

/** The time a job gets: when its legs must stop, and when the process running them ends (Lambda's deadline). */
export interface WorkTime {
  legDeadline: number;
  processDeadline: number;
  /** The request doing this work streams the run's events to its client itself (from this process). */
  streamedHere?: boolean;
  /** The request doing this work, if one does: its id goes on the run's log lines (a failure's error id). */
  requestId?: string;
}

/** A thread of a tenant. */
export interface ThreadRef {
  tenantId: string;
  threadId: string;
}

/** Where the work of a thread runs next: its queued runs, or one run's next leg. */
export interface RunJob {
  tenantId: string;
  threadId: string;
  /** A run's next leg; absent: the runs waiting for the thread. */
  runId?: string;
  /**
   * Without `runId`: the run queued when the job was sent, likely the one its claim takes. A hint only: the worker
   * reads that run with the thread record in one request instead of one after the other.
   */
  queuedRunId?: string;
}

/** Starts a job elsewhere, soon: in this process (dev server, tests) or in the worker function (Lambda). */
export interface RunDispatcher {
  dispatch(job: RunJob): Promise<void>;
  /** True when the jobs run in this process (what a job finds, this process may already know). */
  readonly inProcess?: boolean;
}

export interface RunManagerOptions {
  engine: RunEngine;
  threads: ThreadStore;
  runs: RunStore;
  dispatcher: RunDispatcher;
  metrics: RunMetrics;
  webhooks: WebhookSender;
  logger: Logger;
  /** A run stops after this many legs (each at most one function timeout) in status `timeout`. */
  maxLegs: number;
  /** A leg's lease lapses this long after its last renewal, so a crashed worker frees the thread soon. */
  leaseMs: number;
  /** How often a leg renews its lease and looks for a request to stop. */
  heartbeatMs: number;
  durability: "sync" | "async" | "exit" | undefined;
  /** Where runs' stream events are published and stored. */
  events: RunEventLog;
  now?: () => number;
}

/**
 * What every part of the run machinery shares in one process: its options and clock, the runs that ended here
 * (for joins), and the legs running here (for cancels). The RunManager builds one and hands it to the parts.
 */
export interface Machinery {
  options: RunManagerOptions;
  now: () => number;
  endings: RunEndings;
  legs: LocalLegs;
}

/** Legs need at least this long; a job with less time left goes to the dispatcher. */
export const MIN_LEG_MS = 1_000;
