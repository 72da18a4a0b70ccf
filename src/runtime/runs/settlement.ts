import type { CancelAction, RunRecord, RunStatus } from "../../shared/runs";
import type {
  ClaimedRun,
  FinishRunInput,
  FinishRunResult,
  ThreadRecord,
  ThreadStatus,
} from "../../shared/threads";
import type { LegResult } from "../graphs/graph-leg";
import type { Machinery, RunJob, WorkTime } from "./machinery";

/**
 * How runs end: a leg's outcome recorded on the run and the thread (released, or handed over to the run's next
 * leg), a rollback undone, a waiting run dropped, a temporary thread deleted. Every function takes the machinery
 * the RunManager shares with its parts.
 */

/** Records how a leg ended, releases or hands over the thread, and says what runs next. */
export async function settle(
  m: Machinery,
  tenantId: string,
  run: RunRecord,
  claimed: ClaimedRun,
  result: LegResult,
  time: WorkTime,
  /** Events the run has emitted so far (it streams): the next leg numbers its own from here. */
  eventCount: number | undefined,
): Promise<RunJob | undefined> {
  const { outcome } = result;
  const threadId = run.threadId;
  // The queue's next run, when the release says runs wait (a run queued later is started by its creator).
  const nextIf = (finish: FinishRunResult): RunJob | undefined =>
    finish.waiting ? { tenantId, threadId } : undefined;
  switch (outcome.kind) {
    case "completed":
      m.endings.keepValues(run.runId, outcome.values);
      return nextIf(await endRun(m, tenantId, run, claimed, "success", { status: "COMPLETED" }));
    case "paused":
      m.endings.keepValues(
        run.runId,
        {
          ...outcome.values,
          __interrupt__: outcome.interrupts.map(({ id, value }) => ({ id, value })),
        },
        outcome.nextNodes,
      );
      return nextIf(
        await endRun(m, tenantId, run, claimed, "success", {
          status: "PAUSED_FOR_HUMAN",
          nextNodes: outcome.nextNodes,
          interrupts: outcome.interrupts,
        }),
      );
    case "failed":
      m.options.logger.error(
        {
          errorId: outcome.errorId,
          ...(time.requestId ? { requestId: time.requestId } : {}),
          err: { name: outcome.errorName },
          tenant: tenantId,
          thread: threadId,
          run: run.runId,
        },
        "background run failed",
      );
      return nextIf(
        await endRun(
          m,
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
        ),
      );
    case "cancelled":
      if (outcome.action === "rollback") return nextIf(await rollBack(m, tenantId, run, claimed));
      return nextIf(
        await endRun(m, tenantId, run, claimed, "interrupted", { status: "COMPLETED" }),
      );
    case "deadline": {
      if (run.kwargs.stopAtDeadline) {
        // The run ends here and its client continues the thread. A node the leg aborted may still run: the
        // lease then stays until this process's end, so a continuation cannot run that node alongside it.
        return nextIf(
          await endRun(
            m,
            tenantId,
            run,
            claimed,
            "timeout",
            {
              status: "ERROR",
              ...(result.nodesRunning ? { keepLease: true, leaseUntil: time.processDeadline } : {}),
            },
            { error: { error: "TimeoutError", message: "The run was stopped at its deadline" } },
          ),
        );
      }
      if (eventCount !== undefined) {
        await m.options.runs.updateRun(tenantId, threadId, run.runId, { eventCount }, m.now());
      }
      // The run goes on in a next leg, from its last checkpoint; the thread stays its own meanwhile. A node the
      // leg aborted may still run (JavaScript cannot stop it): the lease then stays until this process's end,
      // so the next leg cannot run that node alongside it.
      await m.options.threads.finishRun({
        tenantId,
        threadId,
        owner: run.runId,
        now: m.now(),
        status: "RUNNING",
        nextNodes: [],
        interrupts: [],
        handOff: true,
        ...(result.nodesRunning ? { keepLease: true, leaseUntil: time.processDeadline } : {}),
      });
      await m.options.dispatcher.dispatch({ tenantId, threadId, runId: run.runId });
      return undefined;
    }
  }
}

/** Ends a run: its record, the thread's outcome and lease, its waiters, its webhook, a temporary thread. */
export async function endRun(
  m: Machinery,
  tenantId: string,
  run: RunRecord,
  claimed: ClaimedRun,
  status: RunStatus,
  thread: Partial<
    Pick<
      FinishRunInput,
      "status" | "nextNodes" | "interrupts" | "graphId" | "keepLease" | "leaseUntil"
    >
  >,
  extra: { error?: RunRecord["error"] } = {},
): Promise<FinishRunResult> {
  // The run's record first: a crash before the thread follows leaves the run holding a thread that says
  // RUNNING, whose takeover finds the run ended and frees the thread as the run left it (outcomeBefore).
  const ended = await m.options.runs.updateRun(
    tenantId,
    run.threadId,
    run.runId,
    { status, ...extra },
    m.now(),
  );
  const released = await release(m, tenantId, run.threadId, claimed, {
    status: thread.status,
    nextNodes: thread.nextNodes ?? [],
    interrupts: thread.interrupts ?? [],
    ...(thread.keepLease ? { keepLease: true, leaseUntil: thread.leaseUntil } : {}),
    // A run that never started leaves the thread's graph as it was.
    ...("graphId" in thread
      ? thread.graphId !== undefined
        ? { graphId: thread.graphId }
        : {}
      : { graphId: run.graphId }),
  });
  const final = ended ?? { ...run, status };
  m.endings.ended(run.runId, final);
  if (run.kwargs.webhook) {
    // Sent once, when the run ends (a crash before this point loses it: at most once, never twice).
    const delivery = await m.options.webhooks.send(
      run.kwargs.webhook,
      final,
      m.endings.valuesOf(run.runId),
    );
    if (delivery) {
      await m.options.runs
        .updateRun(tenantId, run.threadId, run.runId, { webhookDelivery: delivery }, m.now())
        .catch(() => undefined);
    }
  }
  if (run.kwargs.temporary) await deleteTemporaryThread(m, tenantId, run.threadId);
  return released;
}

/** Frees the thread a claimed run holds, with the outcome given. */
export async function release(
  m: Machinery,
  tenantId: string,
  threadId: string,
  claimed: ClaimedRun,
  outcome: Omit<FinishRunInput, "tenantId" | "threadId" | "owner" | "now">,
): Promise<FinishRunResult> {
  return m.options.threads.finishRun({
    tenantId,
    threadId,
    owner: claimed.runId,
    now: m.now(),
    ...outcome,
  });
}

/** A run cancelled after it took the thread but before it started: the thread is given back as it was. */
export async function endUnstarted(
  m: Machinery,
  tenantId: string,
  run: RunRecord,
  claimed: ClaimedRun,
  action: CancelAction,
): Promise<RunJob | undefined> {
  const released =
    action === "rollback"
      ? await rollBack(m, tenantId, run, claimed)
      : await endRun(m, tenantId, run, claimed, "interrupted", restoreOf(claimed.previous));
  return released.waiting ? { tenantId, threadId: run.threadId } : undefined;
}

/**
 * Undoes a run (LangGraph Server's rollback): every checkpoint it wrote goes, newest first, while it still
 * holds the thread; then the thread is given back as it was before the run; then the run's record goes. State, history,
 * copies, state updates and the next run all see the thread as it was. What the run wrote is read from the
 * checkpoints themselves (each carries its run's id), not from what its leg saw of them: a leg stopped early
 * may not have seen a checkpoint its saver stored. A crash midway leaves the run holding the thread with its
 * cancel mark, so its takeover rolls it back again, from the checkpoints then left.
 */
export async function rollBack(
  m: Machinery,
  tenantId: string,
  run: RunRecord,
  claimed: ClaimedRun,
): Promise<FinishRunResult> {
  // A node that ignored the abort may still be running here: its writes are refused from now on, and those on
  // their way land before the run's checkpoints are looked for.
  await m.options.engine.fenceRun(run.runId);
  await deleteRunCheckpoints(m, tenantId, run);
  // The thread is free before the run's record goes: whoever waits for the run to go (a cancel with `wait`)
  // finds the thread free. A crash between the two leaves a `running` record its thread does not hold, which
  // recovery deletes when it is read (recoverRun).
  const released = await release(
    m,
    tenantId,
    run.threadId,
    claimed,
    await outcomeBefore(m, tenantId, run.threadId, run.graphId, claimed.previous),
  );
  await m.options.runs.deleteRun(tenantId, run.threadId, run.runId);
  m.endings.ended(run.runId);
  return released;
}

/** A waiting run that will never start: interrupted, or deleted when rolled back. */
export async function endQueued(
  m: Machinery,
  tenantId: string,
  threadId: string,
  runId: string,
  action: CancelAction,
): Promise<void> {
  if (action === "rollback") await m.options.runs.deleteRun(tenantId, threadId, runId);
  else
    await m.options.runs.updateRun(tenantId, threadId, runId, { status: "interrupted" }, m.now());
  m.endings.ended(runId);
}

/** Drops a deleted thread's runs and their events where they are not items of the thread's own partition. */
export async function forgetThread(
  m: Machinery,
  tenantId: string,
  threadId: string,
): Promise<void> {
  await m.options.runs.forgetThread(tenantId, threadId);
  await m.options.events.forgetThread(tenantId, threadId);
}

async function deleteTemporaryThread(
  m: Machinery,
  tenantId: string,
  threadId: string,
): Promise<void> {
  try {
    await m.options.engine.deleteThread(tenantId, threadId, 30_000);
    await forgetThread(m, tenantId, threadId);
  } catch (error) {
    // A run queued meanwhile keeps the thread: it is deleted after that one (if temporary too).
    m.options.logger.warn(
      { thread: threadId, err: { name: (error as Error)?.name } },
      "temporary thread kept",
    );
  }
}

/**
 * Deletes the checkpoints a run wrote: those newer than the newest root checkpoint of another run (all of the
 * thread's when every one is the run's), where the saver can (this project's savers can; a saver of another
 * kind keeps them, and the log says so). Writes the run left on the checkpoint it started from stay, as on
 * LangGraph Server.
 */
async function deleteRunCheckpoints(m: Machinery, tenantId: string, run: RunRecord): Promise<void> {
  const scope = m.options.engine.tenant(tenantId);
  if (!scope.saver) return;
  let wrote = false;
  let startedFrom: string | undefined;
  const root = {
    configurable: { thread_id: scope.saverThreadId(run.threadId), checkpoint_ns: "" },
  };
  for await (const tuple of scope.saver.list(root)) {
    if ((tuple.metadata as { run_id?: unknown } | undefined)?.run_id !== run.runId) {
      startedFrom = tuple.config.configurable?.checkpoint_id as string | undefined;
      break;
    }
    wrote = true;
  }
  if (!wrote) return;
  if (scope.deleteCheckpointsAfter) {
    await scope.deleteCheckpointsAfter(run.threadId, startedFrom);
  } else {
    m.options.logger.warn(
      { thread: run.threadId },
      "rolled-back run's checkpoints kept: the saver cannot delete single checkpoints",
    );
  }
}

/**
 * The thread's outcome as it is without the run that held it: the record before the claim, unless that record
 * was itself a running one (the claim took over a stalled run, or continued one) — then it is read from the
 * thread's state (paused at its interrupts, done, or never run), never left as an `error` nobody made.
 */
export async function outcomeBefore(
  m: Machinery,
  tenantId: string,
  threadId: string,
  graphId: string,
  previous: ThreadRecord,
): Promise<ReturnType<typeof restoreOf>> {
  if (previous.status !== "RUNNING") return restoreOf(previous);
  const scope = m.options.engine.tenant(tenantId);
  const { graph } = await m.options.engine.buildGraph({ assistantId: graphId, tenantId });
  if (!graph || !scope.saver) return restoreOf(previous);
  const state = (await m.options.engine.withSaver(scope, () =>
    graph.getState({ configurable: { thread_id: scope.saverThreadId(threadId) } }),
  )) as StateSnapshotLike;
  const interrupts = (state.tasks ?? []).flatMap((task) =>
    (task.interrupts ?? []).map((raised) => ({
      id: String(raised.id),
      value: raised.value,
      taskId: String(task.id),
    })),
  );
  if (interrupts.length > 0) {
    return { status: "PAUSED_FOR_HUMAN", nextNodes: state.next ?? [], interrupts, graphId };
  }
  const ran = state.config?.configurable?.checkpoint_id !== undefined;
  return { status: ran ? "COMPLETED" : undefined, nextNodes: [], interrupts: [], graphId };
}

/** What outcomeBefore reads of LangGraph's StateSnapshot. */
interface StateSnapshotLike {
  next?: string[];
  tasks?: Array<{ id: string; interrupts?: Array<{ id?: string; value?: unknown }> }>;
  config?: { configurable?: { checkpoint_id?: string } };
}

/** A release that leaves the thread's outcome as it was before the claim. */
export function restoreOf(previous: ThreadRecord): {
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
