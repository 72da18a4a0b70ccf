import { Command } from "@langchain/langgraph";
import { FINAL_RUN_STATUSES, type RunKwargs, type RunRecord } from "../../shared/runs";
import { resumeRejection } from "../../shared/run-rules";
import type { ClaimedRun, FinishRunResult, ThreadRecord } from "../../shared/threads";
import { isResumeMap, type TenantScope } from "../graphs/engine";
import {
  runGraphLeg,
  type GraphLegInput,
  type LegOutcome,
  type LegResult,
} from "../graphs/graph-leg";
import type { StreamMode } from "../graphs/stream-translator";
import type { MetricOutcome } from "../observability";
import { sleep } from "../../shared/sleep";
import { MIN_LEG_MS, type Machinery, type RunJob, type WorkTime } from "./machinery";
import type { RunEventWriter } from "./run-event-log";
import { endRun, endUnstarted, outcomeBefore, release, restoreOf, settle } from "./settlement";
import { toWireJson } from "./wire-json";

/**
 * One leg of a claimed run: checks that it may start (legs left, its resume still applies, `after_seconds`),
 * runs the graph with a heartbeat that renews the lease and hears cancels, streams its events, and settles the
 * outcome. Says what to do next (the next queued run), if anything.
 */
export async function runLeg(
  m: Machinery,
  tenantId: string,
  threadId: string,
  claimed: ClaimedRun,
  time: WorkTime,
  /** The run as its creator made it, when the claim took it from the queue (no read needed). */
  known?: RunRecord,
  /** False when `known` is not stored yet (a run taken in place: see RunManager.create). */
  recorded = true,
): Promise<RunJob | undefined> {
  const deadline = time.legDeadline;
  const { runs, threads } = m.options;
  // The queue's next run, when the release says runs wait (a run queued later is started by its creator).
  const nextIf = (finish: FinishRunResult): RunJob | undefined =>
    finish.waiting ? { tenantId, threadId } : undefined;
  const run = known ?? (await runs.getRun(tenantId, threadId, claimed.runId));
  if (!run || FINAL_RUN_STATUSES.includes(run.status)) {
    // Deleted or ended meanwhile (its process died between the two): give the thread back as it is.
    const graphId = run?.graphId ?? claimed.previous.graphId;
    const outcome =
      graphId === undefined
        ? restoreOf(claimed.previous)
        : await outcomeBefore(m, tenantId, threadId, graphId, claimed.previous);
    return nextIf(await release(m, tenantId, threadId, claimed, outcome));
  }
  const legs = run.legs + 1;
  if (legs > m.options.maxLegs) {
    return nextIf(
      await endRun(
        m,
        tenantId,
        run,
        claimed,
        "timeout",
        { status: "ERROR" },
        {
          error: {
            error: "TimeoutError",
            message: `The run did not end within ${m.options.maxLegs} legs`,
          },
        },
      ),
    );
  }
  const scope = m.options.engine.tenant(tenantId);
  const rejection = legs === 1 ? resumeRejectionOf(run, claimed.previous) : undefined;
  if (rejection) {
    return nextIf(
      await endRun(m, tenantId, run, claimed, "error", restoreOf(claimed.previous), {
        error: { error: rejection.name, message: rejection.message },
      }),
    );
  }
  const notBefore = run.createdAt + (run.kwargs.afterSeconds ?? 0) * 1000;
  // A run that ends at its deadline (stopAtDeadline) starts with whatever time its request has.
  if (legs === 1 && !run.kwargs.stopAtDeadline && notBefore > deadline - MIN_LEG_MS) {
    // Not this leg's to start (after_seconds, or too little time): the thread stays the run's, a later leg
    // starts it.
    await threads.finishRun({
      tenantId,
      threadId,
      owner: run.runId,
      now: m.now(),
      ...restoreOf(claimed.previous),
      handOff: true,
    });
    await m.options.dispatcher.dispatch({ tenantId, threadId, runId: run.runId });
    return undefined;
  }

  const controller = m.legs.start(run.runId);
  const heartbeat = setInterval(() => {
    void threads
      .renewRunLease({
        tenantId,
        threadId,
        runId: run.runId,
        expiresAt: Math.min(deadline, m.now() + m.options.leaseMs),
      })
      .then((lease) => {
        if (lease.cancel) controller.abort(lease.cancel);
        else if (!lease.held) controller.abort("interrupt");
      })
      .catch(() => undefined);
  }, m.options.heartbeatMs);
  heartbeat.unref?.();
  // A cancel that reached the thread record between the claim and now (from any process).
  if (claimed.previous.cancelAction && claimed.previous.leaseOwner === run.runId) {
    controller.abort(claimed.previous.cancelAction);
  }

  let result: LegResult | undefined;
  let writer: RunEventWriter | undefined;
  const started = m.now();
  try {
    if (legs === 1 && notBefore > m.now()) {
      await sleep(notBefore - m.now(), controller.signal);
    }
    if (controller.signal.aborted && run.status === "pending") {
      // Cancelled before it started: it never runs.
      return await endUnstarted(m, tenantId, run, claimed, controller.signal.reason);
    }
    const now = m.now();
    const running = { status: "running" as const, legs, ...(legs === 1 ? { startedAt: now } : {}) };
    // The record says the run runs while its graph starts (the graph needs nothing of it): the write's latency
    // hides behind the graph's first steps, and it lands before the run's end is written. A run its caller
    // took in place and did not record yet (CreatedRun.recorded) is recorded here, running. If its id is told
    // to no one before it ends (no stream announces it), its record goes with the leg's first checkpoint where
    // that comes soon (`soon`: one request fewer per run).
    const announced = streams(run.kwargs);
    const marked = recorded
      ? runs.updateRun(tenantId, threadId, run.runId, running, now)
      : runs.putRun(tenantId, { ...run, ...running, updatedAt: now }, { soon: !announced });
    marked.catch(() => undefined);
    writer = openEvents(m, run, scope, legs, time);
    // A run whose claim created its thread starts on no checkpoint: its first read of the thread is spared.
    const startsEmpty = legs === 1 && claimed.createdThread === true;
    result = await executeLeg(
      m,
      run,
      scope,
      legs,
      deadline,
      controller.signal,
      writer,
      startsEmpty,
    );
    await marked;
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
    m.legs.end(run.runId);
    // Every event is stored before the run's end is: a follower elsewhere reads them all.
    await writer?.close(result?.outcome.kind === "deadline");
  }
  // Per graph, not per assistant: a dimension's values are billed each, and users create assistants at will.
  m.options.metrics.record(
    run.graphId,
    metricOf(result.outcome, !run.kwargs.stopAtDeadline && legs < m.options.maxLegs),
    m.now() - started,
    legs === 1,
  );
  return settle(m, tenantId, run, claimed, result, time, writer?.nextSeq);
}

/** The run streams events (its first announces its id to the client). */
function streams(kwargs: RunKwargs): boolean {
  return kwargs.streamMode !== undefined || kwargs.streamResumable === true;
}

/**
 * The leg's event writer when the run streams (it was asked for stream modes, or started by a stream route):
 * stored too when it may be followed from elsewhere (a leg not streamed by its own request, or resumable).
 */
function openEvents(
  m: Machinery,
  run: RunRecord,
  scope: TenantScope,
  legs: number,
  time: WorkTime,
): RunEventWriter | undefined {
  const { kwargs } = run;
  if (!streams(kwargs)) return undefined;
  const persist = kwargs.streamResumable === true || !time.streamedHere;
  const writer = m.options.events.open(
    { tenantId: scope.tenantId, threadId: run.threadId, runId: run.runId },
    run.eventCount ?? 0,
    persist,
  );
  if (legs === 1) writer.emit("metadata", toWireJson({ run_id: run.runId, attempt: 1 }));
  return writer;
}

async function executeLeg(
  m: Machinery,
  run: RunRecord,
  scope: TenantScope,
  legs: number,
  deadline: number,
  cancel: AbortSignal,
  writer: RunEventWriter | undefined,
  startsEmpty: boolean,
): Promise<LegResult> {
  const { graph, failure } = await m.options.engine.buildGraph({
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
  const fresh = legs === 1 || !(await wroteCheckpoint(scope, run));
  if (fresh && kwargs.checkpointId) {
    configurable.checkpoint_id = kwargs.checkpointId;
    if (kwargs.checkpointNamespace) configurable.checkpoint_ns = kwargs.checkpointNamespace;
  }
  const { configurable: _ignored, recursion_limit: recursionLimit, ...rest } = kwargs.config ?? {};
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
    durability: kwargs.durability ?? m.options.durability,
    budgetMs: Math.max(0, deadline - m.now()),
    cancel,
    withSaver: (work) =>
      m.options.engine.withSaver(
        scope,
        work,
        runMetadata,
        // Only a start from the thread's latest checkpoint reads it first (a fork names its checkpoint).
        startsEmpty && !configurable.checkpoint_id ? String(configurable.thread_id) : undefined,
      ),
    ...(writer ? { streaming: streamingTo(writer, run, scope) } : {}),
  });
}

/** Whether the thread's latest checkpoint is one this run wrote (each carries its run's id). */
async function wroteCheckpoint(scope: TenantScope, run: RunRecord): Promise<boolean> {
  if (!scope.saver) return false;
  const latest = await scope.saver.getTuple({
    configurable: { thread_id: scope.saverThreadId(run.threadId), checkpoint_ns: "" },
  });
  return (latest?.metadata as { run_id?: unknown } | undefined)?.run_id === run.runId;
}

/** Why a resume queued behind other runs no longer applies when it starts, if it does not. */
function resumeRejectionOf(run: RunRecord, previous: ThreadRecord): Error | undefined {
  const resume = run.kwargs.command?.resume;
  if (resume === undefined) return undefined;
  return resumeRejection(previous, {
    graphId: run.graphId,
    ...(isResumeMap(resume) ? { interruptIds: Object.keys(resume) } : {}),
  });
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

/** A leg's deadline is a hand-over to the next leg, unless the run ends there (it times out). */
function metricOf(outcome: LegOutcome, continues: boolean): MetricOutcome {
  if (outcome.kind === "deadline") return continues ? "continued" : "deadline";
  return outcome.kind;
}
