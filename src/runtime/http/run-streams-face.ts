import { randomUUID } from "node:crypto";
import { FINAL_RUN_STATUSES, type RunRecord } from "../../shared/runs";
import { InvalidRequestError } from "../../shared/errors";
import { toWireJson } from "../runs/wire-json";
import { threadIdFrom, type RouteContext, type RouteHandler } from "./route-context";
import type { RunAddress } from "../runs/run-event-log";
import { resultOf } from "./run-answer";
import { budgetOf, contentLocation, manager, requireRun, startRun } from "./runs-face";
import { sseFrame, sseResponse } from "./sse";
import { readThreadValues } from "./thread-values";

/**
 * Streamed runs on the LangGraph Server face (`client.runs.stream`, `runs.joinStream`, `useStream`): a run created
 * by the request and followed as its events come, or an existing run joined. Events carry their position as
 * their SSE `id`, so a client that reconnects with `Last-Event-ID` misses nothing (what it missed is read from
 * where the run's events are kept). A run still going when the request's time is up goes on in the background:
 * the stream ends with an `error` event that says how to join it.
 */

export const streamRun: RouteHandler = async (context) =>
  createAndFollow(context, threadIdFrom(context.params.thread_id), false);

export const streamStatelessRun: RouteHandler = async (context) =>
  createAndFollow(context, randomUUID(), true);

export const joinRunStream: RouteHandler = async (context) => {
  // Every input is checked before the run is read.
  const lastEventId = lastEventIdOf(context);
  const run = await requireRun(context);
  const cancelOnDisconnect = ["1", "true"].includes(context.query.cancel_on_disconnect ?? "");
  const gone = new AbortController();
  return sseResponse(
    follow(context, run, lastEventId, { cancelOnDisconnect, gone: gone.signal }, true, undefined),
    contentLocation(run),
    gone,
  );
};

async function createAndFollow(context: RouteContext, threadId: string, stateless: boolean) {
  const runs = manager(context);
  const created = await startRun(context, threadId, stateless, true, true);
  const { run, startsNow, body } = created;
  let leg: Promise<unknown> | undefined;
  if (startsNow) {
    // This request runs the run's first leg; its events reach the response from this process.
    const now = Date.now();
    leg = runs
      .work(
        { tenantId: context.tenantId, threadId },
        {
          legDeadline: now + budgetOf(context),
          processDeadline: now + context.remainingMs,
          streamedHere: true,
        },
        false,
        created,
      )
      .catch((error: unknown) => {
        context.logger.error(
          { thread: threadId, run: run.runId, err: { name: (error as Error)?.name } },
          "streamed run failed to run",
        );
      });
  }
  const gone = new AbortController();
  return sseResponse(
    follow(
      context,
      run,
      -1,
      { cancelOnDisconnect: body.onDisconnect === "cancel", gone: gone.signal },
      false,
      leg,
    ),
    contentLocation(run),
    gone,
  );
}

/**
 * The run's events after `afterSeq` until it ends (or the request's time is up). `joined`: the run was not
 * started by this request, so one that never streamed answers with its final values. `leg`: the leg this
 * request runs, awaited before the response ends: Lambda freezes the process once it has answered, and the
 * leg's end (its events stored, the run's hand-over to the next leg) must not wait for a next invocation.
 */
async function* follow(
  context: RouteContext,
  run: RunRecord,
  afterSeq: number,
  client: { cancelOnDisconnect: boolean; gone: AbortSignal },
  joined: boolean,
  leg: Promise<unknown> | undefined,
): AsyncGenerator<string> {
  const runs = manager(context);
  const address: RunAddress = {
    tenantId: context.tenantId,
    threadId: run.threadId,
    runId: run.runId,
  };
  const timeUp = new AbortController();
  const timer = setTimeout(() => timeUp.abort(), Math.max(0, budgetOf(context)));
  const stop = AbortSignal.any([timeUp.signal, client.gone]);
  let ended = false;
  // The stream saw the run end (else it goes on without this request: `running`, or `cancelled` below).
  let settled = false;
  let latest: RunRecord | undefined = run;
  const isOver = async () => {
    latest = await runs.runStore.getRun(address.tenantId, address.threadId, address.runId);
    return !latest || FINAL_RUN_STATUSES.includes(latest.status);
  };
  let sent = 0;
  try {
    try {
      for await (const event of runs.events.follow(address, afterSeq, isOver, stop)) {
        sent += 1;
        yield sseFrame(event.event, event.data, event.seq);
      }
    } catch (error) {
      // Reading the run's events or its record failed (the table, say): end the stream with an error event the
      // client can act on, rather than cut it off mid-frame. The run itself goes on.
      if (client.gone.aborted) return;
      ended = true;
      const name = (error as Error)?.name ?? "Error";
      context.logger.error({ run: run.runId, err: { name } }, "run stream failed");
      yield sseFrame(
        "error",
        toWireJson({
          error: name,
          message: `The events of run ${run.runId} could not be read: join its stream again with the last event id`,
        }),
      );
      return;
    }
    if (client.gone.aborted) return;
    if (!stop.aborted) {
      ended = true;
      settled = true;
      if (joined && sent === 0 && afterSeq < 0 && latest) {
        // A run that streamed nothing (started without stream modes): its outcome, as the stream would end.
        if (latest.status === "success") {
          const values = await readThreadValues(context, run.threadId, run.graphId);
          yield sseFrame("values", toWireJson(values));
        } else if (latest.error) {
          yield sseFrame("error", toWireJson(latest.error));
        }
      }
      return;
    }
    ended = true;
    yield sseFrame(
      "error",
      toWireJson({
        error: "TimeoutError",
        message: `Run ${run.runId} continues in the background: join its stream (GET /threads/${run.threadId}/runs/${run.runId}/stream) with the last event id`,
      }),
    );
  } finally {
    clearTimeout(timer);
    const cancelled = !ended && client.cancelOnDisconnect;
    if (cancelled) {
      // The client went away mid-stream and asked for its run to stop with it.
      await runs
        .cancel(address.tenantId, address.threadId, address.runId, "interrupt")
        .catch(() => undefined);
    }
    await leg;
    context.log.outcome = cancelled ? "cancelled" : "running";
    if (settled) await logEndedOutcome(context, address);
  }
}

/**
 * Sets the request's outcome to how its run ended, from what a join of it answers (the final values a leg of
 * this process kept, else the thread's): the request's log line is written once the stream is over, so this
 * delays no event. A failure to read leaves `running` and is no error of the stream's.
 */
async function logEndedOutcome(context: RouteContext, address: RunAddress): Promise<void> {
  try {
    const joined = await manager(context).join(
      address.tenantId,
      address.threadId,
      address.runId,
      0,
    );
    if (joined?.done) await resultOf(context, joined);
  } catch {
    // The run's outcome is for the log only; the client has had every event.
  }
}

/** `Last-Event-ID` (a reconnecting client): the position of the last event it got. */
function lastEventIdOf(context: RouteContext): number {
  const raw = context.headers["last-event-id"];
  // "-1" (as the SDK sends to start a resumable stream over) means before the first event.
  if (raw === undefined || raw === "" || raw === "-1") return -1;
  if (!/^\d{1,10}$/.test(raw)) {
    throw new InvalidRequestError(
      "Last-Event-ID",
      `expected an event id, got ${JSON.stringify(raw.slice(0, 20))}`,
    );
  }
  return Number(raw);
}

export const RUN_STREAM_HANDLERS: Readonly<Record<string, RouteHandler>> = {
  "POST /threads/{thread_id}/runs/stream": streamRun,
  "POST /runs/stream": streamStatelessRun,
  "GET /threads/{thread_id}/runs/{run_id}/stream": joinRunStream,
};
