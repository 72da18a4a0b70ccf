import { FINAL_RUN_STATUSES, type RunRecord } from "../../shared/runs";
import { InvalidRequestError } from "../../shared/errors";
import { assertPathIdentifier } from "../../shared/identifiers";
import { toWireJson } from "../runs/wire-json";
import { threadIdFrom, type RouteContext, type RouteHandler } from "./route-context";
import { budgetOf, manager } from "./runs-face";
import { sseFrame, sseResponse } from "./sse";

/**
 * The thread's stream (`GET /threads/{thread_id}/stream`, the SDK's `threads.joinStream`): the runs of the thread
 * one after the other, in the order they were created, each as its own stream gives it, for as long as the
 * request may last (the platform keeps it open until the client leaves; here the request's time ends it, and the
 * client reconnects with its last event id). The JS reference server does not serve this route: the platform's
 * API reference is the spec.
 *
 * Event ids are `<run id>:<position>`: a run's events carry their position in the run's own stream, a run's
 * lifecycle events `start` and `end`. `Last-Event-ID` resumes after that event (then the runs created after that
 * run); `-` (or `-1`) replays the thread's runs from the first one kept; none follows the runs not yet over, then
 * every new one.
 *
 * `stream_mode` (or `stream_modes`): `run_modes` (the default) gives each run's own events; `lifecycle` gives a
 * `lifecycle` event when a run starts and when it ends (`{event: "started" | "completed" | "failed" |
 * "interrupted", run_id, namespace: []}`, with the error of a failed run); both may be asked for. `state_update`
 * is refused: state updates made outside runs are not published.
 */

const THREAD_STREAM_MODES = ["run_modes", "lifecycle"] as const;
type ThreadStreamMode = (typeof THREAD_STREAM_MODES)[number];

/** Runs of the thread a listing reads: a thread with more since the client's position skips the older ones. */
const RUNS_READ = 100;
/** How often a thread with no run to follow is looked at again. */
const IDLE_POLL_MS = 500;

/** Where the client is: after one event of a run, or at the thread's first run, or wherever the thread is now. */
type Cursor =
  { kind: "now" } | { kind: "beginning" } | { kind: "run"; runId: string; after: number | "end" };

export const joinThreadStream: RouteHandler = async (context) => {
  const threadId = threadIdFrom(context.params.thread_id);
  // Every input is checked before anything is read.
  const modes = streamModesOf(context);
  const cursor = cursorOf(context);
  context.log.thread = threadId;
  await context.engine.requireThread(context.tenantId, threadId);
  manager(context);
  const gone = new AbortController();
  return sseResponse(followThread(context, threadId, modes, cursor, gone.signal), {}, gone);
};

async function* followThread(
  context: RouteContext,
  threadId: string,
  modes: ReadonlySet<ThreadStreamMode>,
  cursor: Cursor,
  gone: AbortSignal,
): AsyncGenerator<string> {
  const runs = manager(context);
  const { tenantId } = context;
  const timeUp = new AbortController();
  const timer = setTimeout(() => timeUp.abort(), Math.max(0, budgetOf(context)));
  const stop = AbortSignal.any([timeUp.signal, gone]);
  context.log.outcome = "running";
  try {
    const start = await startingPoint(context, threadId, cursor);
    let after = start.after;
    let current = start.current;
    while (!stop.aborted) {
      if (!current) {
        const next = await nextRun(context, threadId, after);
        if (!next) {
          await pause(IDLE_POLL_MS, stop);
          continue;
        }
        current = { run: next, afterSeq: -1, started: false };
      }
      const { run } = current;
      if (!current.started && modes.has("lifecycle")) {
        yield sseFrame(
          "lifecycle",
          toWireJson({ event: "started", run_id: run.runId, namespace: [] }),
          `${run.runId}:start`,
        );
      }
      let latest: RunRecord | undefined = run;
      const isOver = async () => {
        latest = await runs.runStore.getRun(tenantId, threadId, run.runId);
        return !latest || FINAL_RUN_STATUSES.includes(latest.status);
      };
      const address = { tenantId, threadId, runId: run.runId };
      for await (const event of runs.events.follow(address, current.afterSeq, isOver, stop)) {
        if (modes.has("run_modes")) {
          yield sseFrame(event.event, event.data, `${run.runId}:${event.seq}`);
        }
      }
      if (stop.aborted) return;
      if (modes.has("lifecycle")) {
        yield sseFrame("lifecycle", toWireJson(endedEvent(run.runId, latest)), `${run.runId}:end`);
      }
      after = run;
      current = undefined;
    }
  } catch (error) {
    // Reading the thread's runs or their events failed (the table, say): end with an error event the client can
    // act on (reconnect with its last event id) rather than cut the stream mid-frame.
    if (gone.aborted) return;
    const name = (error as Error)?.name ?? "Error";
    context.logger.error({ thread: threadId, err: { name } }, "thread stream failed");
    yield sseFrame(
      "error",
      toWireJson({
        error: name,
        message: `The runs of thread ${threadId} could not be read: join its stream again with the last event id`,
      }),
    );
  } finally {
    clearTimeout(timer);
  }
}

/** A run's end as a lifecycle event: its status in the platform's words, with the error of a failed run. */
function endedEvent(runId: string, run: RunRecord | undefined): Record<string, unknown> {
  const base = { run_id: runId, namespace: [] as string[] };
  switch (run?.status) {
    case "error":
    case "timeout":
      return { ...base, event: "failed", ...(run.error ? { error: run.error } : {}) };
    case "interrupted":
    case undefined:
      // A run deleted or rolled back before it ended is as good as interrupted.
      return { ...base, event: "interrupted" };
    default:
      return { ...base, event: "completed" };
  }
}

/**
 * The run to follow first, and the run after which the following ones come (`null`: every run of the thread,
 * from its first one kept).
 */
async function startingPoint(
  context: RouteContext,
  threadId: string,
  cursor: Cursor,
): Promise<{
  current: { run: RunRecord; afterSeq: number; started: boolean } | undefined;
  after: RunRecord | null;
}> {
  if (cursor.kind === "beginning") return { current: undefined, after: null };
  const listed = await listRuns(context, threadId);
  if (cursor.kind === "run") {
    const run = listed.find((candidate) => candidate.runId === cursor.runId);
    if (run && cursor.after !== "end") {
      return { current: { run, afterSeq: cursor.after, started: true }, after: null };
    }
    if (run) return { current: undefined, after: run };
    // The client's run is gone (deleted, or too far back): go on from what is going on now.
  }
  const active = listed.filter((run) => !FINAL_RUN_STATUSES.includes(run.status));
  const first = active.at(-1);
  if (first) return { current: { run: first, afterSeq: -1, started: false }, after: null };
  // Nothing going on: every run created from now on (the newest one so far marks where "now" is).
  return { current: undefined, after: listed[0] ?? null };
}

/** The oldest run created after `after` (every run: `null`), or undefined when there is none yet. */
async function nextRun(
  context: RouteContext,
  threadId: string,
  after: RunRecord | null,
): Promise<RunRecord | undefined> {
  const listed = await listRuns(context, threadId);
  const later = after ? listed.filter((run) => compareRuns(run, after) > 0) : listed;
  return later.at(-1);
}

/** The thread's most recent runs, newest first. */
function listRuns(context: RouteContext, threadId: string): Promise<RunRecord[]> {
  return manager(context).runStore.listRuns({
    tenantId: context.tenantId,
    threadId,
    limit: RUNS_READ,
    offset: 0,
  });
}

/** Creation order: by creation time, then run id for runs created in the same millisecond. */
function compareRuns(a: RunRecord, b: RunRecord): number {
  return a.createdAt - b.createdAt || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0);
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * `stream_mode` (the SDK's name; `stream_modes` in the platform's reference), one or several: repeated or
 * comma-joined (SDK 1.7 and later repeat the parameter), or one JSON array (what SDK 2.0.0 and 1.6 and earlier
 * send for a list: `stream_mode=["run_modes","lifecycle"]`).
 */
function streamModesOf(context: RouteContext): ReadonlySet<ThreadStreamMode> {
  const raw = context.query.stream_mode ?? context.query.stream_modes;
  if (raw === undefined || raw === "") return new Set(["run_modes"]);
  const modes = new Set<ThreadStreamMode>();
  for (const mode of listedModes(raw)) {
    if (!(THREAD_STREAM_MODES as readonly string[]).includes(mode)) {
      throw new InvalidRequestError(
        "stream_mode",
        `expected run_modes or lifecycle (one or a list), got ${JSON.stringify(mode.slice(0, 40))}`,
      );
    }
    modes.add(mode as ThreadStreamMode);
  }
  return modes;
}

/** The modes a `stream_mode` value names: a JSON array of strings, or names joined by commas. */
function listedModes(raw: string): string[] {
  if (!raw.startsWith("[")) return raw.split(",");
  let listed: unknown;
  try {
    listed = JSON.parse(raw);
  } catch {
    listed = undefined;
  }
  if (
    !Array.isArray(listed) ||
    listed.length === 0 ||
    !listed.every((mode) => typeof mode === "string")
  ) {
    throw new InvalidRequestError(
      "stream_mode",
      `expected run_modes or lifecycle (one or a list), got ${JSON.stringify(raw.slice(0, 40))}`,
    );
  }
  return listed as string[];
}

/** `Last-Event-ID`: an id this stream gave (`<run id>:<position>`, `:start` or `:end`), or `-` / `-1`. */
function cursorOf(context: RouteContext): Cursor {
  const raw = context.headers["last-event-id"];
  if (raw === undefined || raw === "") return { kind: "now" };
  if (raw === "-" || raw === "-1") return { kind: "beginning" };
  const match = /^(.+):(start|end|\d{1,10})$/.exec(raw);
  if (!match) {
    throw new InvalidRequestError(
      "Last-Event-ID",
      `expected an event id of this thread's stream, got ${JSON.stringify(raw.slice(0, 60))}`,
    );
  }
  const runId = assertPathIdentifier("Last-Event-ID", match[1]);
  const position = match[2]!;
  return {
    kind: "run",
    runId,
    after: position === "end" ? "end" : position === "start" ? -1 : Number(position),
  };
}

export const THREAD_STREAM_HANDLERS: Readonly<Record<string, RouteHandler>> = {
  "GET /threads/{thread_id}/stream": joinThreadStream,
};
