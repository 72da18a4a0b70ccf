import { EventEmitter } from "node:events";
import { ThreadNotFoundError } from "../../shared/errors";
import { Command } from "@langchain/langgraph";
import { v7 as uuid7 } from "@langchain/core/utils/uuid";
import type { Logger } from "pino";
import {
  FINAL_RUN_STATUSES,
  type CancelAction,
  type MultitaskStrategy,
  type RunKwargs,
  type RunRecord,
  type RunStatus,
  type RunStore,
} from "../../shared/runs";
import { holderOf, isLeased, resumeRejection, stalledRunOf } from "../../shared/run-rules";
import {
  type ClaimedRun,
  type FinishRunInput,
  type ThreadRecord,
  type ThreadStatus,
  type ThreadStore,
} from "../../shared/threads";
import type { RunEngine, TenantScope } from "../graphs/engine";
import {
  runGraphLeg,
  type GraphLegInput,
  type LegOutcome,
  type LegResult,
} from "../graphs/graph-leg";
import { toWireJson } from "./wire-json";
import type { RunEventLog, RunEventWriter } from "./run-event-log";
import type { StreamMode } from "../graphs/stream-translator";
import { isResumeMap } from "../graphs/engine";
import type { MetricOutcome, RunMetrics } from "../observability";
import { endedRun, RecentRuns, type EndedRun } from "./recent-runs";
import type { WebhookSender } from "./webhooks";

/** The time a job gets: when its legs must stop, and when the process running them ends (Lambda's deadline). */
export interface WorkTime {
  legDeadline: number;
  processDeadline: number;
  /** The request doing this work streams the run's events to its client itself (from this process). */
  streamedHere?: boolean;
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
}

/** Starts a job elsewhere, soon: in this process (dev server, tests) or in the worker function (Lambda). */
export interface RunDispatcher {
  dispatch(job: RunJob): Promise<void>;
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

export interface CreateRunInput {
  tenantId: string;
  threadId: string;
  assistantId: string;
  graphId: string;
  kwargs: RunKwargs;
  metadata: Record<string, unknown>;
  strategy: MultitaskStrategy;
  /** Create the thread when missing (`if_not_exists: "create"`, stateless runs). */
  createIfMissing: boolean;
}

/**
 * What a join found: the run ended (with its final values when its last leg ran in this process), or it is
 * still pending or running.
 */
export type JoinResult =
  { done: true; run: EndedRun; values?: Record<string, unknown> } | { done: false; run: RunRecord };

// How long a cancel waits for a leg to start in this process (a claim and the leg's registration are
// milliseconds apart; the cancel is on the thread record too, which the leg's heartbeat reads).
const STOP_ON_START_MS = 30_000;
const MIN_LEG_MS = 1_000;
/** How long, and how many, ended runs this process remembers for their joins. */
const RECENT_RUN_TTL_MS = 60_000;
const MAX_RECENT_RUNS = 1_000;

/**
 * Background runs: creation in the thread's queue (multitask strategies), legs that take the thread's lease, run
 * the graph and hand over to a next leg when their time is up, cancellation, joins and webhooks. The same
 * machinery runs everywhere; only the dispatcher differs (this process, or the worker function).
 */
export class RunManager {
  private readonly endings = new EventEmitter();
  /** Runs that ended in this process, with their final values where the last leg ran here (kept briefly). */
  private readonly recent: RecentRuns;
  /** Legs running in this process, by run id: a cancel reaches them at once. */
  private readonly active = new Map<string, AbortController>();
  /** Cancels of runs that hold a thread but whose leg had not started here yet (in arrival order). */
  private readonly stopOnStart = new Map<string, { action: CancelAction; at: number }>();
  private readonly now: () => number;

  constructor(private readonly options: RunManagerOptions) {
    this.now = options.now ?? Date.now;
    this.recent = new RecentRuns(RECENT_RUN_TTL_MS, MAX_RECENT_RUNS, this.now);
    this.endings.setMaxListeners(0);
  }

  get dispatcher(): RunDispatcher {
    return this.options.dispatcher;
  }

  get runStore(): RunStore {
    return this.options.runs;
  }

  /** Runs' stream events: published here, stored for followers elsewhere. */
  get events(): RunEventLog {
    return this.options.events;
  }

  /**
   * Creates a pending run in its thread's queue, as its strategy says; runs it replaces (`interrupt`,
   * `rollback`) are asked to stop or leave the queue. Throws ThreadNotFoundError or ThreadBusyError (reject).
   */
  async create(input: CreateRunInput): Promise<{ run: RunRecord; startsNow: boolean }> {
    const { threads, runs } = this.options;
    const now = this.now();
    const run: RunRecord = {
      runId: uuid7(),
      threadId: input.threadId,
      assistantId: input.assistantId,
      graphId: input.graphId,
      status: "pending",
      kwargs: input.kwargs,
      metadata: input.metadata,
      multitaskStrategy: input.strategy,
      createdAt: now,
      updatedAt: now,
      legs: 0,
    };
    const resume = input.kwargs.temporary ? undefined : input.kwargs.command?.resume;
    // A run record would create its thread (it lives in the thread's partition): a missing thread is refused
    // first. The read also primes the table's copy of the record, which the queue's rule then decides on.
    if (!input.createIfMissing && !(await threads.get(input.tenantId, input.threadId))) {
      throw new ThreadNotFoundError(input.threadId);
    }
    // The run exists before it is queued: whoever takes it from the queue finds it.
    await runs.putRun(input.tenantId, run);
    let cancelled;
    let startsNow;
    try {
      ({ cancelled, startsNow } = await threads.enqueueRun({
        tenantId: input.tenantId,
        threadId: input.threadId,
        runId: run.runId,
        strategy: input.strategy,
        now,
        createIfMissing: input.createIfMissing,
        // The thread's metadata names its graph and assistant (LangGraph Server's clients filter threads by them).
        metadata: { graph_id: input.graphId, assistant_id: input.assistantId },
        ...(resume !== undefined
          ? {
              resume: {
                graphId: input.graphId,
                ...(isResumeMap(resume) ? { interruptIds: Object.keys(resume) } : {}),
              },
            }
          : {}),
      }));
    } catch (error) {
      await runs.deleteRun(input.tenantId, input.threadId, run.runId).catch(() => undefined);
      throw error;
    }
    const action: CancelAction = input.strategy === "rollback" ? "rollback" : "interrupt";
    for (const replaced of cancelled) {
      if (replaced.state === "running") {
        this.stopHere(replaced.runId, action);
      } else {
        await this.endQueued(input.tenantId, input.threadId, replaced.runId, action);
      }
    }
    return { run, startsNow };
  }

  /** Asks a run to stop. Throws ThreadNotFoundError (as a missing run) when neither waits nor runs. */
  async cancel(
    tenantId: string,
    threadId: string,
    runId: string,
    action: CancelAction,
  ): Promise<RunRecord | undefined> {
    const run = await this.options.runs.getRun(tenantId, threadId, runId);
    if (!run) return undefined;
    if (FINAL_RUN_STATUSES.includes(run.status)) return run;
    const state = await this.options.threads.cancelRun({ tenantId, threadId, runId, action });
    if (state === "queued") {
      await this.endQueued(tenantId, threadId, runId, action);
    } else if (state === "running") {
      const local = this.stopHere(runId, action);
      if (!local && run.status === "pending") {
        // Handed over before it started (after_seconds): no leg runs it now, so it ends here.
        const record = await this.options.threads.get(tenantId, threadId);
        if (record) await this.endUnstarted(tenantId, run, { runId, previous: record }, action);
      }
    }
    return run;
  }

  /** Waits until the run ends or `budgetMs` passes; undefined when there is no such run. */
  async join(
    tenantId: string,
    threadId: string,
    runId: string,
    budgetMs: number,
  ): Promise<JoinResult | undefined> {
    const deadline = this.now() + budgetMs;
    let delay = 50;
    for (;;) {
      const recent = this.recent.get(runId);
      if (recent?.run) {
        return recent.values
          ? { done: true, run: recent.run, values: recent.values }
          : { done: true, run: recent.run };
      }
      const run = await this.options.runs.getRun(tenantId, threadId, runId);
      if (!run) return undefined;
      if (FINAL_RUN_STATUSES.includes(run.status)) {
        return recent?.values
          ? { done: true, run: endedRun(run), values: recent.values }
          : { done: true, run: endedRun(run) };
      }
      const left = deadline - this.now();
      if (left <= 0) return { done: false, run };
      // A leg in this process says when it ends; another process's leg is polled, less often over time.
      await this.waitForEnd(runId, Math.min(delay, left));
      delay = Math.min(delay * 2, 1_000);
    }
  }

  /**
   * Does a job in the time given: takes the thread for the job's run and runs legs, then (`thenQueue`) the runs
   * waiting after it, while time is left; what is left over goes to the dispatcher. A request that runs its own
   * run in place (`runs.wait`) passes `thenQueue: false`: it answers as soon as its run ends.
   */
  async work(job: RunJob, time: WorkTime, thenQueue = true): Promise<void> {
    const deadline = time.legDeadline;
    let next: RunJob | undefined = job;
    let first = true;
    while (next) {
      if (!first && !thenQueue) {
        await this.options.dispatcher.dispatch(next);
        return;
      }
      first = false;
      const now = this.now();
      if (deadline - now < MIN_LEG_MS) {
        await this.options.dispatcher.dispatch(next);
        return;
      }
      const claim = await this.options.threads.claimRun({
        tenantId: next.tenantId,
        threadId: next.threadId,
        runId: next.runId,
        now,
        expiresAt: Math.min(deadline, now + this.options.leaseMs),
      });
      if (claim.kind === "stalled") {
        // The thread's run stopped without a word (its process died): it goes on from its last checkpoint
        // before any run queued behind it.
        this.options.logger.warn(
          { thread: next.threadId, run: claim.runId },
          "stalled run taken over",
        );
        next = { ...next, runId: claim.runId };
        continue;
      }
      if (claim.kind === "none") {
        // Nothing waits for the thread, or a leg holds it. A job retried right after its worker died finds the
        // dead leg's lease still live: it watches it lapse (a live leg renews it first) and takes the run over.
        next = next.runId === undefined ? await this.watchLease(next, deadline) : undefined;
        continue;
      }
      if (claim.kind === "wait") {
        // The previous leg's node may still run until its lease lapses: wait for it, or leave it to a later leg.
        if (claim.until > deadline - MIN_LEG_MS) {
          await this.options.dispatcher.dispatch(next);
          return;
        }
        await sleep(claim.until - now);
        continue;
      }
      next = await this.runLeg(next.tenantId, next.threadId, claim.run, time);
    }
  }

  /**
   * The job again once the lease of a thread that says RUNNING lapsed, when that is within this job's time (a
   * claim then finds the run stalled, unless its leg renewed the lease meanwhile); undefined otherwise.
   */
  private async watchLease(job: RunJob, deadline: number): Promise<RunJob | undefined> {
    const record = await this.options.threads.get(job.tenantId, job.threadId);
    if (!record || record.status !== "RUNNING" || !isLeased(record, this.now())) return undefined;
    const lapse = record.leaseExpiresAt! + 1;
    if (lapse > deadline - MIN_LEG_MS) return undefined;
    await sleep(lapse - this.now());
    const after = await this.options.threads.get(job.tenantId, job.threadId);
    // Renewed meanwhile: its leg is alive and goes on by itself.
    return after && stalledRunOf(after, this.now()) !== undefined ? job : undefined;
  }

  /**
   * Starts the work a thread waits for when nothing will do it otherwise: a stalled run (its process died) or
   * runs queued behind no holder. Called where runs and threads are read, at a dev server's start and on its
   * schedule, so no run stays `running` or `pending` past its lease without a new request for it.
   */
  async recover(tenantId: string, threadId: string, known?: ThreadRecord): Promise<boolean> {
    const record = known ?? (await this.options.threads.get(tenantId, threadId));
    if (!record || !needsRecovery(record, this.now(), this.options.leaseMs)) return false;
    await this.options.dispatcher.dispatch({ tenantId, threadId });
    return true;
  }

  /**
   * Recovers, of the threads given, those left stalled or with runs queued behind no holder (a crashed
   * process's); says how many it started work for. A dev server gives its table's unsettled threads, at its
   * start and on a schedule.
   */
  async recoverThreads(threads: AsyncIterable<ThreadRef>): Promise<number> {
    let recovered = 0;
    for await (const { tenantId, threadId } of threads) {
      if (await this.recover(tenantId, threadId)) recovered += 1;
    }
    return recovered;
  }

  /**
   * A job Lambda gave up on (its retries failed): the run it was for, when no leg holds it any more, ends in
   * error and frees its thread, so nothing stays `running` past its lease.
   */
  async recordFailedJob(job: RunJob): Promise<void> {
    const record = await this.options.threads.get(job.tenantId, job.threadId);
    if (!record) return;
    const runId = job.runId ?? record.leaseOwner ?? record.continuing;
    if (runId === undefined) return;
    if (record.leaseOwner === runId && (record.leaseExpiresAt ?? 0) >= this.now()) return;
    const run = await this.options.runs.getRun(job.tenantId, job.threadId, runId);
    if (!run || FINAL_RUN_STATUSES.includes(run.status)) return;
    const claimed: ClaimedRun = { runId, previous: record };
    await this.end(
      job.tenantId,
      run,
      claimed,
      "error",
      { status: "ERROR" },
      {
        error: {
          error: "WorkerError",
          message: "The worker function failed to run this run (Lambda gave up after its retries)",
        },
      },
    );
    await this.options.dispatcher.dispatch({ tenantId: job.tenantId, threadId: job.threadId });
  }

  /** Runs one leg of a claimed run; says what to do next (the next queued run), if anything. */
  private async runLeg(
    tenantId: string,
    threadId: string,
    claimed: ClaimedRun,
    time: WorkTime,
  ): Promise<RunJob | undefined> {
    const deadline = time.legDeadline;
    const { runs } = this.options;
    const run = await runs.getRun(tenantId, threadId, claimed.runId);
    if (!run || FINAL_RUN_STATUSES.includes(run.status)) {
      // Deleted or ended meanwhile: give the thread back as it was.
      await this.release(tenantId, threadId, claimed, restoreOf(claimed.previous));
      return { tenantId, threadId };
    }
    const legs = run.legs + 1;
    if (legs > this.options.maxLegs) {
      await this.end(
        tenantId,
        run,
        claimed,
        "timeout",
        { status: "ERROR" },
        {
          error: {
            error: "TimeoutError",
            message: `The run did not end within ${this.options.maxLegs} legs`,
          },
        },
      );
      return { tenantId, threadId };
    }
    const scope = this.options.engine.tenant(tenantId);
    const rejection = legs === 1 ? this.resumeRejection(run, claimed.previous) : undefined;
    if (rejection) {
      await this.end(tenantId, run, claimed, "error", restoreOf(claimed.previous), {
        error: { error: rejection.name, message: rejection.message },
      });
      return { tenantId, threadId };
    }
    const notBefore = run.createdAt + (run.kwargs.afterSeconds ?? 0) * 1000;
    if (legs === 1 && notBefore > deadline - MIN_LEG_MS) {
      // Not this leg's to start (after_seconds): the thread stays the run's, a later leg starts it.
      await this.options.threads.finishRun({
        tenantId,
        threadId,
        owner: run.runId,
        now: this.now(),
        ...restoreOf(claimed.previous),
        handOff: true,
      });
      await this.options.dispatcher.dispatch({ tenantId, threadId, runId: run.runId });
      return undefined;
    }

    const controller = new AbortController();
    this.active.set(run.runId, controller);
    // A cancel that reached this process after the claim, before the leg was registered.
    const early = this.stopOnStart.get(run.runId);
    this.stopOnStart.delete(run.runId);
    if (early) controller.abort(early.action);
    const heartbeat = setInterval(() => {
      void this.options.threads
        .renewRunLease({
          tenantId,
          threadId,
          runId: run.runId,
          expiresAt: Math.min(deadline, this.now() + this.options.leaseMs),
        })
        .then((lease) => {
          if (lease.cancel) controller.abort(lease.cancel);
          else if (!lease.held) controller.abort("interrupt");
        })
        .catch(() => undefined);
    }, this.options.heartbeatMs);
    heartbeat.unref?.();
    // A cancel that arrived between the claim and now.
    if (claimed.previous.cancelAction && claimed.previous.leaseOwner === run.runId) {
      controller.abort(claimed.previous.cancelAction);
    }

    let result: LegResult | undefined;
    let writer: RunEventWriter | undefined;
    const started = this.now();
    try {
      if (legs === 1 && notBefore > this.now()) {
        await sleep(notBefore - this.now(), controller.signal);
      }
      if (controller.signal.aborted && run.status === "pending") {
        // Cancelled before it started: it never runs.
        return await this.endUnstarted(tenantId, run, claimed, controller.signal.reason);
      }
      await runs.updateRun(
        tenantId,
        threadId,
        run.runId,
        { status: "running", legs, ...(legs === 1 ? { startedAt: this.now() } : {}) },
        this.now(),
      );
      writer = this.openEvents(run, scope, legs, time);
      result = await this.executeLeg(
        run,
        scope,
        claimed,
        legs,
        deadline,
        controller.signal,
        writer,
      );
      if (writer && result.outcome.kind === "failed") {
        writer.emit(
          "error",
          toWireJson({
            error: result.outcome.errorName,
            message: result.outcome.message,
            error_id: result.outcome.errorId,
          }),
        );
      }
    } finally {
      clearInterval(heartbeat);
      this.active.delete(run.runId);
      // Every event is stored before the run's end is: a follower elsewhere reads them all.
      await writer?.close(result?.outcome.kind === "deadline");
    }
    this.options.metrics.record(
      run.assistantId,
      metricOf(result.outcome, legs, this.options.maxLegs),
      this.now() - started,
      legs === 1,
    );
    const startCheckpointId = run.startCheckpointId ?? result.startCheckpointId;
    return this.settle(tenantId, run, claimed, result, startCheckpointId, time, writer?.nextSeq);
  }

  /**
   * The leg's event writer when the run streams (it was asked for stream modes, or started by a stream route):
   * stored too when it may be followed from elsewhere (a leg not streamed by its own request, or resumable).
   */
  private openEvents(
    run: RunRecord,
    scope: TenantScope,
    legs: number,
    time: WorkTime,
  ): RunEventWriter | undefined {
    const { kwargs } = run;
    if (kwargs.streamMode === undefined && !kwargs.streamResumable) return undefined;
    const persist = kwargs.streamResumable === true || !time.streamedHere;
    const writer = this.options.events.open(
      { tenantId: scope.tenantId, threadId: run.threadId, runId: run.runId },
      run.eventCount ?? 0,
      persist,
    );
    if (legs === 1) writer.emit("metadata", toWireJson({ run_id: run.runId, attempt: 1 }));
    return writer;
  }

  private async executeLeg(
    run: RunRecord,
    scope: TenantScope,
    claimed: ClaimedRun,
    legs: number,
    deadline: number,
    cancel: AbortSignal,
    writer: RunEventWriter | undefined,
  ): Promise<LegResult> {
    const { graph, failure } = await this.options.engine.buildGraph({
      assistantId: run.graphId,
      tenantId: scope.tenantId,
    });
    if (!graph) return { outcome: failure, nodesRunning: false, notStarted: true };
    const { kwargs } = run;
    const configurable: Record<string, unknown> = {
      ...((kwargs.config?.configurable as Record<string, unknown> | undefined) ?? {}),
      thread_id: scope.saverThreadId(run.threadId),
    };
    // Only a fresh start may fork from another checkpoint than the thread's latest. A later leg goes on from the
    // run's last checkpoint; if it never wrote one (its first leg died at once), the run starts over.
    const fresh = legs === 1 || !(await this.wroteCheckpoint(scope, run));
    if (fresh && kwargs.checkpointId) {
      configurable.checkpoint_id = kwargs.checkpointId;
      if (kwargs.checkpointNamespace) configurable.checkpoint_ns = kwargs.checkpointNamespace;
    }
    const {
      configurable: _ignored,
      recursion_limit: recursionLimit,
      ...rest
    } = kwargs.config ?? {};
    const runMetadata = {
      ...run.metadata,
      run_id: run.runId,
      assistant_id: run.assistantId,
      graph_id: run.graphId,
      thread_id: run.threadId,
    };
    return runGraphLeg({
      graph,
      input: fresh ? inputOf(kwargs) : null,
      config: {
        ...rest,
        configurable,
        ...(typeof recursionLimit === "number" ? { recursionLimit } : {}),
        metadata: { ...((rest.metadata as Record<string, unknown>) ?? {}), ...runMetadata },
        runId: run.runId,
      },
      context: kwargs.context,
      interruptBefore: kwargs.interruptBefore,
      interruptAfter: kwargs.interruptAfter,
      durability: kwargs.durability ?? this.options.durability,
      budgetMs: Math.max(0, deadline - this.now()),
      cancel,
      withSaver: (work) => this.options.engine.withSaver(scope, work, runMetadata),
      ...(writer ? { streaming: streamingTo(writer, run, scope) } : {}),
    });
  }

  /** Records how a leg ended, releases or hands over the thread, and says what runs next. */
  private async settle(
    tenantId: string,
    run: RunRecord,
    claimed: ClaimedRun,
    result: LegResult,
    startCheckpointId: string | undefined,
    time: WorkTime,
    /** Events the run has emitted so far (it streams): the next leg numbers its own from here. */
    eventCount: number | undefined,
  ): Promise<RunJob | undefined> {
    const { outcome } = result;
    const threadId = run.threadId;
    const next: RunJob = { tenantId, threadId };
    switch (outcome.kind) {
      case "completed":
        this.keepResult(run.runId, outcome.values);
        await this.end(tenantId, run, claimed, "success", { status: "COMPLETED" });
        return next;
      case "paused":
        this.keepResult(run.runId, {
          ...outcome.values,
          __interrupt__: outcome.interrupts.map(({ id, value }) => ({ id, value })),
        });
        await this.end(tenantId, run, claimed, "success", {
          status: "PAUSED_FOR_HUMAN",
          nextNodes: outcome.nextNodes,
          interrupts: outcome.interrupts,
        });
        return next;
      case "failed":
        this.options.logger.error(
          {
            errorId: outcome.errorId,
            err: { name: outcome.errorName },
            tenant: tenantId,
            thread: threadId,
            run: run.runId,
          },
          "background run failed",
        );
        await this.end(
          tenantId,
          run,
          claimed,
          "error",
          // A graph that could not be built changed nothing: the thread stays as it was.
          result.notStarted ? restoreOf(claimed.previous) : { status: "ERROR" },
          {
            error: {
              error: outcome.errorName,
              message: outcome.message,
              error_id: outcome.errorId,
            },
          },
        );
        return next;
      case "cancelled":
        if (outcome.action === "rollback") {
          await this.rollBack(tenantId, run, claimed, startCheckpointId);
          return next;
        }
        await this.end(tenantId, run, claimed, "interrupted", { status: "COMPLETED" });
        return next;
      case "deadline": {
        const progress = {
          ...(startCheckpointId !== undefined && run.startCheckpointId === undefined
            ? { startCheckpointId }
            : {}),
          ...(eventCount !== undefined ? { eventCount } : {}),
        };
        if (Object.keys(progress).length > 0) {
          await this.options.runs.updateRun(tenantId, threadId, run.runId, progress, this.now());
        }
        // The run goes on in a next leg, from its last checkpoint; the thread stays its own meanwhile. A node the
        // leg aborted may still run (JavaScript cannot stop it): the lease then stays until this process's end,
        // so the next leg cannot run that node alongside it.
        await this.options.threads.finishRun({
          tenantId,
          threadId,
          owner: run.runId,
          now: this.now(),
          status: "RUNNING",
          nextNodes: [],
          interrupts: [],
          handOff: true,
          ...(result.nodesRunning ? { keepLease: true, leaseUntil: time.processDeadline } : {}),
        });
        await this.options.dispatcher.dispatch({ tenantId, threadId, runId: run.runId });
        return undefined;
      }
    }
  }

  /** Ends a run: its record, the thread's outcome and lease, its waiters, its webhook, a temporary thread. */
  private async end(
    tenantId: string,
    run: RunRecord,
    claimed: ClaimedRun,
    status: RunStatus,
    thread: Partial<Pick<FinishRunInput, "status" | "nextNodes" | "interrupts" | "graphId">>,
    extra: { error?: RunRecord["error"] } = {},
  ): Promise<void> {
    const ended = await this.options.runs.updateRun(
      tenantId,
      run.threadId,
      run.runId,
      { status, ...extra },
      this.now(),
    );
    await this.release(tenantId, run.threadId, claimed, {
      status: thread.status,
      nextNodes: thread.nextNodes ?? [],
      interrupts: thread.interrupts ?? [],
      // A run that never started leaves the thread's graph as it was.
      ...("graphId" in thread
        ? thread.graphId !== undefined
          ? { graphId: thread.graphId }
          : {}
        : { graphId: run.graphId }),
    });
    this.recent.remember(run.runId, { run: endedRun(ended ?? { ...run, status }) });
    this.endings.emit(run.runId);
    if (run.kwargs.webhook) {
      await this.options.webhooks.send(
        run.kwargs.webhook,
        ended ?? { ...run, status },
        this.recent.get(run.runId)?.values,
      );
    }
    if (run.kwargs.temporary) await this.deleteTemporaryThread(tenantId, run.threadId);
  }

  private async release(
    tenantId: string,
    threadId: string,
    claimed: ClaimedRun,
    outcome: Omit<FinishRunInput, "tenantId" | "threadId" | "owner" | "now">,
  ): Promise<void> {
    await this.options.threads.finishRun({
      tenantId,
      threadId,
      owner: claimed.runId,
      now: this.now(),
      ...outcome,
    });
  }

  /** A run cancelled after it took the thread but before it started: the thread is given back as it was. */
  private async endUnstarted(
    tenantId: string,
    run: RunRecord,
    claimed: ClaimedRun,
    action: CancelAction,
  ): Promise<RunJob> {
    const restore = restoreOf(claimed.previous);
    if (action === "rollback") {
      // It wrote nothing: the thread is as it was.
      await this.rollBack(tenantId, run, claimed, undefined);
    } else {
      await this.end(tenantId, run, claimed, "interrupted", restore);
    }
    return { tenantId, threadId: run.threadId };
  }

  /**
   * Undoes a run (LangGraph Server's rollback): every checkpoint it wrote goes, newest first, while it still
   * holds the thread; then its record; then the thread is given back as it was before the run. State, history,
   * copies, state updates and the next run all see the thread as it was. A run that wrote nothing
   * (`wroteFrom` undefined) only goes. A crash midway leaves the run holding the thread, so its recovery rolls
   * it back again (the checkpoints left are still newer than where it started).
   */
  private async rollBack(
    tenantId: string,
    run: RunRecord,
    claimed: ClaimedRun,
    /** The thread's latest checkpoint when the run started ("" for none); undefined: the run wrote nothing. */
    wroteFrom: string | undefined,
  ): Promise<void> {
    if (wroteFrom !== undefined) {
      await this.deleteCheckpointsAfter(tenantId, run.threadId, wroteFrom || undefined);
    }
    await this.options.runs.deleteRun(tenantId, run.threadId, run.runId);
    await this.release(tenantId, run.threadId, claimed, restoreOf(claimed.previous));
    this.recent.remember(run.runId, { run: endedRun({ ...run, status: "interrupted" }) });
    this.endings.emit(run.runId);
  }

  /**
   * Stops a run that holds a thread, if its leg runs in this process (now, or once it starts: a run that took
   * the thread but has not started its leg yet). True when its leg runs here now.
   */
  private stopHere(runId: string, action: CancelAction): boolean {
    const local = this.active.get(runId);
    if (local) {
      local.abort(action);
      return true;
    }
    this.stopOnStart.set(runId, { action, at: this.now() });
    for (const [id, { at }] of this.stopOnStart) {
      if (this.now() - at <= STOP_ON_START_MS) break;
      this.stopOnStart.delete(id);
    }
    return false;
  }

  /** A waiting run that will never start: interrupted, or deleted when rolled back. */
  private async endQueued(
    tenantId: string,
    threadId: string,
    runId: string,
    action: CancelAction,
  ): Promise<void> {
    if (action === "rollback") await this.options.runs.deleteRun(tenantId, threadId, runId);
    else
      await this.options.runs.updateRun(
        tenantId,
        threadId,
        runId,
        { status: "interrupted" },
        this.now(),
      );
    this.endings.emit(runId);
  }

  /** Drops a deleted thread's runs and their events where they are not items of the thread's own partition. */
  async forgetThread(tenantId: string, threadId: string): Promise<void> {
    await this.options.runs.forgetThread(tenantId, threadId);
    await this.options.events.forgetThread(tenantId, threadId);
  }

  private async deleteTemporaryThread(tenantId: string, threadId: string): Promise<void> {
    try {
      await this.options.engine.deleteThread(tenantId, threadId, 30_000);
      await this.forgetThread(tenantId, threadId);
    } catch (error) {
      // A run queued meanwhile keeps the thread: it is deleted after that one (if temporary too).
      this.options.logger.warn(
        { thread: threadId, err: { name: (error as Error)?.name } },
        "temporary thread kept",
      );
    }
  }

  /**
   * Deletes the thread's checkpoints newer than `checkpointId` (all when undefined), where the saver can (this
   * project's savers can; a saver of another kind keeps them, and the log says so).
   */
  private async deleteCheckpointsAfter(
    tenantId: string,
    threadId: string,
    checkpointId: string | undefined,
  ): Promise<void> {
    const scope = this.options.engine.tenant(tenantId);
    if (scope.deleteCheckpointsAfter) {
      await scope.deleteCheckpointsAfter(threadId, checkpointId);
    } else if (scope.saver) {
      this.options.logger.warn(
        { thread: threadId },
        "rolled-back run's checkpoints kept: the saver cannot delete single checkpoints",
      );
    }
  }

  /** Whether the thread's latest checkpoint is one this run wrote (each carries its run's id). */
  private async wroteCheckpoint(scope: TenantScope, run: RunRecord): Promise<boolean> {
    if (!scope.saver) return false;
    const latest = await scope.saver.getTuple({
      configurable: { thread_id: scope.saverThreadId(run.threadId), checkpoint_ns: "" },
    });
    return (latest?.metadata as { run_id?: unknown } | undefined)?.run_id === run.runId;
  }

  private resumeRejection(run: RunRecord, previous: ThreadRecord): Error | undefined {
    const resume = run.kwargs.command?.resume;
    if (resume === undefined) return undefined;
    return resumeRejection(previous, {
      graphId: run.graphId,
      ...(isResumeMap(resume) ? { interruptIds: Object.keys(resume) } : {}),
    });
  }

  private keepResult(runId: string, values: Record<string, unknown>): void {
    this.recent.remember(runId, { values });
  }

  private waitForEnd(runId: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.endings.off(runId, done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.endings.once(runId, done);
    });
  }
}

/**
 * Where a leg's stream events go: serialized as wire JSON, with the client's thread id wherever the saver saw
 * a tenant-scoped one (checkpoint configs, events). Whole JSON strings are replaced, quotes included, so text
 * that merely contains the scoped id (a message, say) is left as written.
 */
function streamingTo(
  writer: RunEventWriter,
  run: RunRecord,
  scope: TenantScope,
): NonNullable<GraphLegInput["streaming"]> {
  const scoped = JSON.stringify(scope.saverThreadId(run.threadId));
  const own = JSON.stringify(run.threadId);
  const serialize =
    scoped === own ? toWireJson : (data: unknown) => toWireJson(data).split(scoped).join(own);
  return {
    request: {
      modes: (run.kwargs.streamMode ?? ["values"]) as StreamMode[],
      subgraphs: run.kwargs.streamSubgraphs === true,
    },
    emit: (events) => {
      for (const { event, data } of events) writer.emit(event, serialize(data));
    },
  };
}

/** What a run's first leg gives the graph: a Command for `command`, else the input (null continues). */
function inputOf(kwargs: RunKwargs): unknown {
  const command = kwargs.command;
  if (
    command &&
    (command.resume !== undefined || command.update !== undefined || command.goto !== undefined)
  ) {
    return new Command({
      ...(command.resume !== undefined ? { resume: command.resume } : {}),
      ...(command.update !== undefined
        ? { update: command.update as Record<string, unknown> }
        : {}),
      ...(command.goto !== undefined ? { goto: command.goto as string } : {}),
    });
  }
  return kwargs.input ?? null;
}

/** A release that leaves the thread's outcome as it was before the claim. */
function restoreOf(previous: ThreadRecord): {
  status: ThreadStatus | undefined;
  nextNodes: string[];
  interrupts: ThreadRecord["interrupts"];
  graphId?: string;
} {
  return {
    status: previous.status === "RUNNING" ? "ERROR" : previous.status,
    nextNodes: previous.nextNodes,
    interrupts: previous.interrupts,
    ...(previous.graphId !== undefined ? { graphId: previous.graphId } : {}),
  };
}

/**
 * A stalled run, or runs queued behind no holder for a lease's time (a dispatch already under way claims them
 * sooner): nobody will start them unless asked.
 */
function needsRecovery(record: ThreadRecord, now: number, leaseMs: number): boolean {
  if (stalledRunOf(record, now) !== undefined) return true;
  return (
    record.runQueue.length > 0 &&
    holderOf(record, now) === undefined &&
    now - record.updatedAt >= leaseMs
  );
}

/** A leg's deadline is a hand-over to the next leg, unless it was the last leg allowed (the run times out). */
function metricOf(outcome: LegOutcome, legs: number, maxLegs: number): MetricOutcome {
  if (outcome.kind === "deadline") return legs < maxLegs ? "continued" : "deadline";
  return outcome.kind;
}

/** Waits `ms`, or less when `signal` aborts meanwhile. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}
