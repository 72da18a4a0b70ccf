import { FINAL_RUN_STATUSES, type RunRecord } from "../../shared/runs";
import { holderOf, isLeased, stalledRunOf } from "../../shared/run-rules";
import type { ClaimedRun, ThreadRecord } from "../../shared/threads";
import { sleep } from "../../shared/sleep";
import { MIN_LEG_MS, type Machinery, type RunJob, type ThreadRef } from "./machinery";
import { endRun } from "./settlement";

/**
 * What a crashed process left behind, found and set going again: a run whose lease lapsed while it ran (its
 * takeover goes on from its last checkpoint while legs remain, else it ends in error), runs queued behind no
 * holder, a job Lambda gave up on. Without a new run for the thread: when a run or thread is read, when a job
 * is retried, and at a dev server's start and on its schedule.
 */

/**
 * Starts the work a thread waits for when nothing will do it otherwise; true when it did. So no run stays
 * `running` or `pending` past its lease and the next sweep or read.
 */
export async function recover(
  m: Machinery,
  tenantId: string,
  threadId: string,
  known?: ThreadRecord,
): Promise<boolean> {
  const record = known ?? (await m.options.threads.get(tenantId, threadId));
  if (!record || !needsRecovery(record, m.now(), m.options.leaseMs)) return false;
  await m.options.dispatcher.dispatch({ tenantId, threadId });
  return true;
}

/**
 * Recovers what a client reads, and gives the run as it is then (undefined once gone): the run's thread (as
 * recover does), and the run itself when its record says `pending` a lease's time after its last change but its
 * thread neither queues nor holds it. The process that wrote it died between two writes: before a created run
 * was queued (its client got an error), or before a run it replaced in the queue was ended. Such a run ends
 * `interrupted`, so none stays pending. A `running` run its thread does not hold is a rollback's leftover (the
 * thread was freed, the record not yet deleted): it goes. (Any other running run is held by its thread until its
 * record says how it ended: its takeover finishes it.)
 */
export async function recoverRun(
  m: Machinery,
  tenantId: string,
  run: RunRecord,
): Promise<RunRecord | undefined> {
  // Nothing about a run changed within a lease's time can be stalled yet (a lease lapses a lease's time after
  // the claim, and a run's record changes at its claim): such reads cost no read of the thread.
  if (m.now() - run.updatedAt < m.options.leaseMs) return run;
  const record = await m.options.threads.get(tenantId, run.threadId);
  if (record && (await recover(m, tenantId, run.threadId, record))) return run;
  return settleOrphan(m, tenantId, run, record);
}

/**
 * recoverRun for a page of a thread's runs, with the thread's record as the caller read it: the thread once,
 * then each run its thread does not know of (see recoverRun). A run whose creation's process died before it was
 * queued is listed, never read by its id (its client got no id): listing it must end it too.
 */
export async function recoverListedRuns(
  m: Machinery,
  tenantId: string,
  record: ThreadRecord,
  runs: RunRecord[],
): Promise<RunRecord[]> {
  const now = m.now();
  const stale = (run: RunRecord) =>
    !FINAL_RUN_STATUSES.includes(run.status) && now - run.updatedAt >= m.options.leaseMs;
  if (!runs.some(stale)) return runs;
  if (await recover(m, tenantId, record.threadId, record)) return runs;
  const settled = await Promise.all(
    runs.map((run) => (stale(run) ? settleOrphan(m, tenantId, run, record) : run)),
  );
  return settled.filter((run): run is RunRecord => run !== undefined);
}

/** A run as recoverRun leaves it once its thread needs no recovery (see there). */
async function settleOrphan(
  m: Machinery,
  tenantId: string,
  run: RunRecord,
  record: ThreadRecord | undefined,
): Promise<RunRecord | undefined> {
  const onThread =
    record !== undefined &&
    (record.leaseOwner === run.runId ||
      record.continuing === run.runId ||
      record.runQueue.includes(run.runId));
  if (onThread || FINAL_RUN_STATUSES.includes(run.status)) return run;
  // The run as read may predate the thread as read: a run that ended between the two reads (its record says how
  // before its thread is freed) is read again, after the thread, before anything is taken for an orphan.
  const current = await m.options.runs.getRun(tenantId, run.threadId, run.runId);
  if (!current || FINAL_RUN_STATUSES.includes(current.status)) return current;
  if (current.status === "running") {
    // Only a rollback frees a thread before its run's record says how the run ended (it deletes the record next):
    // its process died in between, with the run's checkpoints gone already.
    m.options.logger.warn(
      { thread: run.threadId, run: run.runId },
      "rolled-back run's record deleted",
    );
    await m.options.runs.deleteRun(tenantId, run.threadId, run.runId);
    m.endings.ended(run.runId);
    return undefined;
  }
  const status = "interrupted";
  m.options.logger.warn({ thread: run.threadId, run: run.runId, status }, "orphaned run ended");
  const ended = await m.options.runs.updateRun(
    tenantId,
    run.threadId,
    run.runId,
    { status },
    m.now(),
  );
  const final = ended ?? { ...current, status };
  m.endings.ended(run.runId, final);
  return final;
}

/** Recovers those of the threads given that need it; says how many. */
export async function recoverThreads(
  m: Machinery,
  threads: AsyncIterable<ThreadRef>,
): Promise<number> {
  let recovered = 0;
  for await (const { tenantId, threadId } of threads) {
    if (await recover(m, tenantId, threadId)) recovered += 1;
  }
  return recovered;
}

/**
 * The job again once the lease of a thread that says RUNNING lapsed, when that is within this job's time (a
 * claim then finds the run stalled, unless its leg renewed the lease meanwhile); undefined otherwise. A job
 * Lambda retries right after its worker died finds the dead leg's lease still live.
 */
export async function watchLease(
  m: Machinery,
  job: RunJob,
  deadline: number,
): Promise<RunJob | undefined> {
  const record = await m.options.threads.get(job.tenantId, job.threadId);
  if (!record || record.status !== "RUNNING" || !isLeased(record, m.now())) return undefined;
  const lapse = record.leaseExpiresAt! + 1;
  if (lapse > deadline - MIN_LEG_MS) return undefined;
  await sleep(lapse - m.now());
  const after = await m.options.threads.get(job.tenantId, job.threadId);
  // Renewed meanwhile: its leg is alive and goes on by itself.
  return after && stalledRunOf(after, m.now()) !== undefined ? job : undefined;
}

/**
 * A job Lambda gave up on (its retries failed): the run it was for, when no leg holds it any more, ends in
 * error and frees its thread, so nothing stays `running` past its lease.
 */
export async function recordFailedJob(m: Machinery, job: RunJob): Promise<void> {
  const record = await m.options.threads.get(job.tenantId, job.threadId);
  if (!record) return;
  const runId = job.runId ?? record.leaseOwner ?? record.continuing;
  if (runId === undefined) return;
  if (record.leaseOwner === runId && (record.leaseExpiresAt ?? 0) >= m.now()) return;
  const run = await m.options.runs.getRun(job.tenantId, job.threadId, runId);
  if (!run || FINAL_RUN_STATUSES.includes(run.status)) return;
  const claimed: ClaimedRun = { runId, previous: record };
  await endRun(
    m,
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
  await m.options.dispatcher.dispatch({ tenantId: job.tenantId, threadId: job.threadId });
}

/**
 * A stalled run, or runs queued behind no holder for a lease's time (a dispatch already under way claims them
 * sooner): nobody will start them unless asked.
 */
export function needsRecovery(record: ThreadRecord, now: number, leaseMs: number): boolean {
  if (stalledRunOf(record, now) !== undefined) return true;
  return (
    record.runQueue.length > 0 &&
    holderOf(record, now) === undefined &&
    now - record.updatedAt >= leaseMs
  );
}
