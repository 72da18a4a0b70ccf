import { v7 as uuid7 } from "@langchain/core/utils/uuid";
import {
  FINAL_RUN_STATUSES,
  type CancelAction,
  type MultitaskStrategy,
  type RunKwargs,
  type RunRecord,
  type RunStore,
} from "../../shared/runs";
import type { ClaimedRun, ThreadRecord } from "../../shared/threads";
import { ThreadBusyError } from "../../shared/errors";
import { sleep } from "../../shared/sleep";
import { isResumeMap } from "../graphs/engine";
import { runLeg } from "./leg";
import { LocalLegs } from "./local-legs";
import {
  MIN_LEG_MS,
  type Machinery,
  type RunDispatcher,
  type RunJob,
  type RunManagerOptions,
  type ThreadRef,
  type WorkTime,
} from "./machinery";
import {
  recordFailedJob,
  recover,
  recoverListedRuns,
  recoverRun,
  recoverThreads,
  watchLease,
} from "./recovery";
import { RunEndings, type JoinResult } from "./run-endings";
import type { RunEventLog } from "./run-event-log";
import { endQueued, endUnstarted, forgetThread } from "./settlement";

export type { RunDispatcher, RunJob, RunManagerOptions, ThreadRef, WorkTime } from "./machinery";
export type { JoinResult } from "./run-endings";

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
  /** A start (not a resume) refuses a thread paused for a human: ThreadPausedError (`/invoke`). */
  rejectPaused?: boolean;
  /**
   * The caller runs the run's first leg itself, until this deadline (epoch ms), when the run may start at once:
   * the run then takes the thread (a heartbeat lease) in the same write that would have queued it.
   */
  inPlaceUntil?: number;
}

/** A run just created, as RunManager.create made it. */
export interface CreatedRun {
  run: RunRecord;
  /** First in the queue with nothing holding the thread: a claim now takes it. */
  startsNow: boolean;
  /** The thread, taken for the run as it was created (CreateRunInput.inPlaceUntil). */
  claimed?: ClaimedRun;
  /** Its record is stored; false for a `reject` run taken in place, recorded when its leg starts. */
  recorded: boolean;
}

// Queued runs remembered by the process that created them (RunManager.queuedHere).
const MAX_QUEUED_HERE = 64;

/**
 * Background runs, as their callers see them: creation in the thread's queue (multitask strategies), cancels,
 * joins, and the work loop that claims the thread and runs legs. The parts: leg.ts (one leg: heartbeat, graph,
 * events), settlement.ts (how a run ends: release, hand-over, rollback), recovery.ts (what a crashed process
 * left), run-endings.ts (joins), local-legs.ts (cancels reaching legs in this process). Every change to a
 * thread record is a rule of the rulebook (src/shared/run-rules.ts). The same machinery runs everywhere; only
 * the dispatcher differs (this process, or the worker function).
 */
export class RunManager {
  /** What the parts of the machinery share in this process (see Machinery). */
  private readonly m: Machinery;

  /** Runs created and queued here, until a job here takes them: a dispatch in this process reads none back. */
  private readonly queuedHere = new Map<string, RunRecord>();

  constructor(private readonly options: RunManagerOptions) {
    const now = options.now ?? Date.now;
    this.m = { options, now, endings: new RunEndings(now), legs: new LocalLegs(now) };
  }

  private now(): number {
    return this.m.now();
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
  async create(input: CreateRunInput): Promise<CreatedRun> {
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
    // A `reject` run its caller runs in place never waits in the queue: it takes the free thread or is refused.
    // Its record is written when its leg starts (the one write that says it runs), so a refusal writes nothing.
    const recordLater = input.strategy === "reject" && input.inPlaceUntil !== undefined;
    // Any other run exists before it is queued: whoever takes it from the queue finds it. A run of a thread that
    // must exist refuses a missing one here, before anything is written.
    if (!recordLater) {
      await runs.putRun(input.tenantId, run, { createThread: input.createIfMissing });
    }
    let cancelled;
    let startsNow;
    let claimed;
    try {
      ({ cancelled, startsNow, claimed } = await threads.enqueueRun({
        tenantId: input.tenantId,
        threadId: input.threadId,
        runId: run.runId,
        strategy: input.strategy,
        now,
        createIfMissing: input.createIfMissing,
        ...(input.rejectPaused ? { rejectPaused: true } : {}),
        ...(input.inPlaceUntil !== undefined
          ? { claimUntil: Math.min(input.inPlaceUntil, now + this.options.leaseMs) }
          : {}),
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
      if (!recordLater) {
        await runs.deleteRun(input.tenantId, input.threadId, run.runId).catch(() => undefined);
      }
      if (error instanceof ThreadBusyError && error.stalledRunId !== undefined) {
        // Refused because a dead process's run still holds the thread: its takeover starts now, so the thread
        // frees itself instead of refusing every run until something reads it.
        await this.options.dispatcher.dispatch({
          tenantId: input.tenantId,
          threadId: input.threadId,
        });
      }
      throw error;
    }
    if (recordLater && !claimed) {
      // Not taken at once (reject refuses any other case, so this is a safeguard): recorded before it is
      // looked for.
      await runs.putRun(input.tenantId, run, { createThread: true });
    }
    const action: CancelAction = input.strategy === "rollback" ? "rollback" : "interrupt";
    for (const replaced of cancelled) {
      if (replaced.state === "running") {
        this.m.legs.stop(replaced.runId, action);
      } else {
        await endQueued(this.m, input.tenantId, input.threadId, replaced.runId, action);
      }
    }
    const recorded = !recordLater || !claimed;
    // Only where its job will run here: a Lambda API function hands every job to the worker, and would only
    // hold the runs' inputs in memory for nothing.
    if (!claimed && this.options.dispatcher.inProcess) this.rememberQueued(run);
    return claimed ? { run, startsNow, claimed, recorded } : { run, startsNow, recorded };
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
      await endQueued(this.m, tenantId, threadId, runId, action);
    } else if (state === "running") {
      const local = this.m.legs.stop(runId, action);
      if (!local && run.status === "pending") {
        // Handed over before it started (after_seconds): no leg runs it now, so it ends here.
        const record = await this.options.threads.get(tenantId, threadId);
        if (record) await endUnstarted(this.m, tenantId, run, { runId, previous: record }, action);
      }
    }
    return run;
  }

  /**
   * Waits until a cancelled run ends (undefined once gone: rolled back) or `budgetMs` passes. A run whose process
   * died ends only through its takeover, which then rolls it back or interrupts it: once its lease lapses the
   * takeover starts from here, so the cancel's caller sees the run end rather than wait for the next read.
   */
  async awaitCancelled(
    tenantId: string,
    threadId: string,
    runId: string,
    budgetMs: number,
  ): Promise<JoinResult | undefined> {
    const deadline = this.now() + budgetMs;
    // Each look for a stalled run is one read of the thread: a few per lease, while the run has not ended.
    const sliceMs = Math.min(5_000, Math.max(250, this.options.leaseMs / 4));
    for (;;) {
      const left = deadline - this.now();
      const joined = await this.join(
        tenantId,
        threadId,
        runId,
        Math.max(0, Math.min(sliceMs, left)),
      );
      if (!joined || joined.done || deadline - this.now() <= 0) return joined;
      await this.recover(tenantId, threadId);
    }
  }

  /** Waits until the run ends or `budgetMs` passes; undefined when there is no such run. */
  join(
    tenantId: string,
    threadId: string,
    runId: string,
    budgetMs: number,
    /** The run as the caller just read it: the first look needs no read of its own. */
    known?: RunRecord,
  ): Promise<JoinResult | undefined> {
    return this.m.endings.join(
      this.options.runs,
      tenantId,
      threadId,
      runId,
      budgetMs,
      known,
      (id) => this.m.legs.runsHere(id),
    );
  }

  /**
   * Does a job in the time given: takes the thread for the job's run and runs legs, then (`thenQueue`) the runs
   * waiting after it, while time is left; what is left over goes to the dispatcher. A request that runs its own
   * run in place (`runs.wait`) passes `thenQueue: false`: it answers as soon as its run ends.
   */
  async work(
    job: RunJob,
    time: WorkTime,
    thenQueue = true,
    /** The run this request just created (RunManager.create): its first leg need not read it back. */
    created?: CreatedRun,
  ): Promise<void> {
    let next: RunJob | undefined = job;
    let first = true;
    if (created?.claimed) {
      first = false;
      const { run, claimed, recorded } = created;
      next = await runLeg(this.m, job.tenantId, job.threadId, claimed, time, run, recorded);
    }
    // The run the job was sent for, read before the claim: where the thread record is not known here (a worker),
    // both come in one request, and the claim decides on that record without reading it again.
    const hinted = created === undefined && job.runId === undefined ? job.queuedRunId : undefined;
    const queuedHere = hinted === undefined ? undefined : this.takeQueued(hinted);
    const queued =
      queuedHere ??
      (hinted === undefined
        ? undefined
        : await this.options.runs.getRun(job.tenantId, job.threadId, hinted));
    // A run queued by this process and taken by it: its joins here wait for its end, not poll for it.
    const releaseHere = queuedHere && this.m.legs.expect(queuedHere.runId);
    try {
      await this.workOn(next, first, thenQueue, time, created, queued);
    } finally {
      releaseHere?.();
    }
  }

  private async workOn(
    job: RunJob | undefined,
    startsFirst: boolean,
    thenQueue: boolean,
    time: WorkTime,
    created: CreatedRun | undefined,
    queued: RunRecord | undefined,
  ): Promise<void> {
    const deadline = time.legDeadline;
    let next = job;
    let first = startsFirst;
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
        next = next.runId === undefined ? await watchLease(this.m, next, deadline) : undefined;
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
      // A run taken from the queue is pending as created: it was neither cancelled nor deleted (both take it
      // out of the queue first), and nothing else writes a queued run's record.
      const known =
        next.runId !== undefined
          ? undefined
          : [created?.run, queued].find(
              (run) => run?.runId === claim.run.runId && run.status === "pending",
            );
      next = await runLeg(this.m, next.tenantId, next.threadId, claim.run, time, known);
    }
  }

  private rememberQueued(run: RunRecord): void {
    this.queuedHere.set(run.runId, run);
    // A bound, not a lifetime: a run another process took is forgotten here after this many later ones.
    if (this.queuedHere.size > MAX_QUEUED_HERE) {
      const oldest = this.queuedHere.keys().next().value;
      if (oldest !== undefined) this.queuedHere.delete(oldest);
    }
  }

  private takeQueued(runId: string): RunRecord | undefined {
    const run = this.queuedHere.get(runId);
    this.queuedHere.delete(runId);
    return run;
  }

  /**
   * Starts the work a thread waits for when nothing will do it otherwise: a stalled run (its process died) or
   * runs queued behind no holder. Called where runs and threads are read. True when it did.
   */
  recover(tenantId: string, threadId: string, known?: ThreadRecord): Promise<boolean> {
    return recover(this.m, tenantId, threadId, known);
  }

  /** Recovers a run a client reads, and its thread: see recoverRun. */
  recoverRun(tenantId: string, run: RunRecord): Promise<RunRecord | undefined> {
    return recoverRun(this.m, tenantId, run);
  }

  /** recoverRun for a listed page of a thread's runs, its thread as just read: see recoverListedRuns. */
  recoverListedRuns(
    tenantId: string,
    thread: ThreadRecord,
    runs: RunRecord[],
  ): Promise<RunRecord[]> {
    return recoverListedRuns(this.m, tenantId, thread, runs);
  }

  /**
   * The recovery sweep (the worker's scheduled event): recovers every thread with a run on it that needs it (a
   * run whose process died, runs queued behind no holder); says how many.
   */
  sweep(): Promise<number> {
    return recoverThreads(this.m, this.options.threads.unsettledThreads());
  }

  /** Recovers, of the threads given, those that need it (a dev server's sweep); says how many. */
  recoverThreads(threads: AsyncIterable<ThreadRef>): Promise<number> {
    return recoverThreads(this.m, threads);
  }

  /** A job Lambda gave up on: its run ends in error when no leg holds it any more. */
  recordFailedJob(job: RunJob): Promise<void> {
    return recordFailedJob(this.m, job);
  }

  /** Drops a deleted thread's runs and their events where they are not items of the thread's own partition. */
  forgetThread(tenantId: string, threadId: string): Promise<void> {
    return forgetThread(this.m, tenantId, threadId);
  }
}
