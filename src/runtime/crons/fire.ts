import { v5 as uuid5 } from "@langchain/core/utils/uuid";
import type { CronRecord, CronRef } from "../../shared/crons";
import { MemoryTableError, TableError } from "../../shared/errors";
import { startRun } from "../http/runs-face";
import type { RouteContext } from "../http/route-context";
import { latestFireAtOrBefore, nextFireAfter } from "./schedule";

/**
 * Firing due crons: one function for every sweeper (the worker's scheduled sweep in AWS, the dev server's timer),
 * given the time to fire at, so a test can move the clock.
 *
 * Exactly once per fire, among any number of sweepers:
 * 1. Claim: one write, conditioned on the cron's revision, records the fire (`pendingFire`, its scheduled time)
 *    and moves the cron's sweep time a few minutes on; of two sweepers that read the cron, one wins.
 * 2. The run is created as POST /threads/{id}/runs (or POST /runs) creates one, its metadata naming the cron
 *    and the fire (`cron_id`, `cron_scheduled_at`); a stateless fire's thread id is derived from the cron and
 *    the fire's time, so every attempt of one fire names one thread.
 * 3. Settle: a second conditional write clears the claim and sets the next fire.
 * A sweeper that finds a claim left standing (its claimer died between 1 and 3) looks for the fire's run on its
 * thread first and creates it only when it is not there. A missed span (no sweep for minutes) fires once, for
 * the latest scheduled time in it, as LangGraph Platform does; a disabled cron or one past its end never fires.
 */

/** How long a claimed fire waits for its claimer before another sweeper checks on it. */
export const CLAIM_RETRY_MS = 3 * 60_000;
/** Settle attempts against writers (a PATCH) that change the cron between the claim and the settle. */
const MAX_SETTLE_ATTEMPTS = 5;
/** Runs of a thread read to find a fire's run on a retry (the newest first). */
const FIRE_LOOKUP_RUNS = 50;
/** Crons fired at once by one sweep. */
const FIRE_CONCURRENCY = 16;
/** Time given to create a fire's run (a few table requests). */
const FIRE_BUDGET_MS = 60_000;
// Namespace of stateless fires' thread ids (uuid5 of the tenant, cron and fire time): any fixed UUID.
const FIRE_THREAD_NAMESPACE = "2f0c6f0e-5d55-4c52-9d1b-0a3b5fb0c7e1";

/** What a sweep needs of the runtime: everything a route has but the request. */
export type CronSweepRuntime = Omit<
  RouteContext,
  "tenantId" | "params" | "body" | "query" | "headers" | "remainingMs" | "log" | "requestId"
>;

export interface CronSweepResult {
  /** Runs created. */
  fired: number;
  /** Crons whose fire failed for a reason that may pass (the table); retried at the next sweep after the claim. */
  failed: number;
}

/** Fires every cron due at `now` (epoch ms) once; a failure of one cron never stops the others. */
export async function fireDueCrons(
  runtime: CronSweepRuntime,
  now: number,
): Promise<CronSweepResult> {
  const result: CronSweepResult = { fired: 0, failed: 0 };
  if (!runtime.crons || !runtime.runs || !runtime.cronsEnabled) return result;
  const due: CronRef[] = [];
  for await (const ref of runtime.crons.due(now)) due.push(ref);
  // A few fires at a time: ten thousand crons due at the top of an hour take seconds, not minutes.
  let next = 0;
  const lane = async () => {
    while (next < due.length) {
      const ref = due[next++]!;
      try {
        if (await fireOne(runtime, ref, now)) result.fired += 1;
      } catch (error) {
        result.failed += 1;
        runtime.logger.warn(
          { tenant: ref.tenantId, cron: ref.cronId, err: { name: (error as Error)?.name } },
          "cron fire failed; retried after its claim lapses",
        );
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(FIRE_CONCURRENCY, due.length) }, lane));
  return result;
}

async function fireOne(runtime: CronSweepRuntime, ref: CronRef, now: number): Promise<boolean> {
  const crons = runtime.crons!;
  const cron = await crons.get(ref.tenantId, ref.cronId);
  if (!cron || !cron.enabled || cron.dueAt === undefined || cron.dueAt > now) return false;
  const retrying = cron.pendingFire !== undefined;
  const fireAt = cron.pendingFire ?? fireTimeOf(cron, now);
  if (fireAt === undefined) {
    // Its end came before its next fire: it never fires again, and leaves the sweep's index.
    await settle(runtime, cron, undefined, now);
    return false;
  }
  const claimed: CronRecord = {
    ...cron,
    pendingFire: fireAt,
    dueAt: now + CLAIM_RETRY_MS,
    revision: cron.revision + 1,
  };
  if (!(await crons.save(claimed, cron.revision))) return false; // another sweeper has it
  let fired = false;
  try {
    if (!retrying || !(await fireExists(runtime, cron, fireAt))) {
      await createFireRun(runtime, cron, fireAt);
      fired = true;
    }
  } catch (error) {
    // The table or anything unexpected: the claim stays, and the fire is tried again after it lapses.
    if (!(error instanceof MemoryTableError) || error instanceof TableError) throw error;
    // A refusal (the assistant or thread is gone, the thread is busy and the payload says reject): this fire is
    // skipped, as a request refused the same way would be; the cron goes on with its next fire.
    runtime.logger.warn(
      { tenant: cron.tenantId, cron: cron.cronId, err: { name: error.name } },
      "cron fire refused",
    );
  }
  await settle(runtime, claimed, fireAt, now);
  return fired;
}

/** The fire a sweep at `now` makes: the latest scheduled time not after now (nor after the cron's end). */
function fireTimeOf(cron: CronRecord, now: number): number | undefined {
  if (cron.nextRunAt === undefined) return undefined;
  const until = Math.min(now, cron.endTime ?? Number.POSITIVE_INFINITY);
  if (until < cron.nextRunAt) return undefined;
  return latestFireAtOrBefore(cron.schedule, cron.timezone, until);
}

/** Clears the claim of `fireAt` and sets the next fire, over whatever changed the cron since it was read. */
async function settle(
  runtime: CronSweepRuntime,
  read: CronRecord,
  fireAt: number | undefined,
  now: number,
): Promise<void> {
  const crons = runtime.crons!;
  let current: CronRecord | undefined = read;
  for (let attempt = 0; attempt < MAX_SETTLE_ATTEMPTS && current; attempt++) {
    const next = nextFireAfter(current.schedule, current.timezone, now);
    const nextRunAt = current.endTime !== undefined && next > current.endTime ? undefined : next;
    const settled: CronRecord = {
      ...current,
      pendingFire: undefined,
      nextRunAt,
      dueAt: current.enabled ? nextRunAt : undefined,
      revision: current.revision + 1,
    };
    if (await crons.save(settled, current.revision)) return;
    current = await crons.get(read.tenantId, read.cronId);
    // Deleted, or settled by another sweeper: nothing left to do.
    if (current && current.pendingFire !== fireAt) return;
  }
}

/** The thread a fire runs on: the cron's, or one derived from the cron and the fire's time. */
export function fireThreadId(cron: CronRecord, fireAt: number): string {
  return (
    cron.threadId ?? uuid5(`${cron.tenantId}\n${cron.cronId}\n${fireAt}`, FIRE_THREAD_NAMESPACE)
  );
}

/** Whether a run of this fire is on its thread already (a claimer that died after creating it). */
async function fireExists(
  runtime: CronSweepRuntime,
  cron: CronRecord,
  fireAt: number,
): Promise<boolean> {
  const runs = await runtime.runs!.runStore.listRuns({
    tenantId: cron.tenantId,
    threadId: fireThreadId(cron, fireAt),
    limit: FIRE_LOOKUP_RUNS,
    offset: 0,
  });
  const scheduledAt = new Date(fireAt).toISOString();
  return runs.some(
    (run) => run.metadata.cron_id === cron.cronId && run.metadata.cron_scheduled_at === scheduledAt,
  );
}

/** Creates the fire's run exactly as a client's POST /threads/{id}/runs (POST /runs, stateless) would. */
async function createFireRun(
  runtime: CronSweepRuntime,
  cron: CronRecord,
  fireAt: number,
): Promise<void> {
  const threadId = fireThreadId(cron, fireAt);
  const stateless = cron.threadId === undefined;
  const deadline = Date.now() + FIRE_BUDGET_MS;
  const context: RouteContext = {
    ...runtime,
    tenantId: cron.tenantId,
    params: stateless ? {} : { thread_id: threadId },
    body: {
      ...cron.payload,
      assistant_id: cron.assistantId,
      metadata: {
        ...cron.metadata,
        cron_id: cron.cronId,
        cron_scheduled_at: new Date(fireAt).toISOString(),
      },
      ...(stateless ? { on_completion: cron.onRunCompleted ?? "delete" } : {}),
    },
    query: {},
    headers: {},
    get remainingMs() {
      return Math.max(0, deadline - Date.now());
    },
    log: {},
    requestId: `cron-${cron.cronId}-${fireAt}`,
  };
  await startRun(context, threadId, stateless, false);
}
