import { InvalidEventError } from "../shared/errors";
import { RECOVERY_SWEEP_KIND, type RecoverySweepEvent } from "../shared/worker-events";
import { assembleRuntime, flushCallbacks, type HandlerOptions } from "./assembly";
import { fireDueCrons } from "./crons/fire";
import { parseRunJob, type RunJobEvent } from "./runs/dispatchers";
import type { RunJob } from "./runs/run-manager";
import type { HandlerContext } from "./types";
import { WORKER_END_MARGIN_MS } from "../shared/limits";

/**
 * What the worker function handles: a run job, an SQS batch of jobs Lambda could not run, or the scheduled
 * recovery sweep.
 */
export type WorkerEvent =
  RunJobEvent | { Records: Array<{ body?: string; messageId?: string }> } | RecoverySweepEvent;

export type WorkerHandler = (event: unknown, context?: HandlerContext) => Promise<WorkerResult>;

export interface WorkerResult {
  /** The job's runs were worked on (or, for a failure record, the failure was recorded). */
  jobs: number;
  /** SQS records (by message id) that could not be handled: Lambda returns them to the queue. */
  batchItemFailures: Array<{ itemIdentifier: string }>;
  /** A recovery sweep: the threads whose stalled or waiting runs it set going again. */
  recovered?: number;
  /** A recovery sweep: the runs it created for due crons, and the crons whose fire failed (retried later). */
  crons?: { fired: number; failed: number };
}

/**
 * The worker function's handler: runs background runs, one leg per invocation (up to the function's timeout
 * less a margin), handing over to a next invocation when a run needs more. Its on-failure destination (an SQS
 * queue feeding this same function) brings back the jobs Lambda gave up on after its retries: their runs are
 * recorded as failed, so nothing stays `running` past its lease.
 */
export function createWorkerHandler(options: HandlerOptions): WorkerHandler {
  const runtime = assembleRuntime(options);
  const manager = runtime.runs;
  if (!manager) {
    throw new InvalidEventError(
      "configuration",
      "expected a checkpointer (TABLE_NAME) for the worker: background runs need thread and run records",
    );
  }
  return async (event, lambdaContext) => {
    const remaining = lambdaContext?.getRemainingTimeInMillis?.() ?? 15 * 60 * 1000;
    const processDeadline = Date.now() + remaining;
    const legDeadline = processDeadline - Math.max(WORKER_END_MARGIN_MS, runtime.deadlineMarginMs);
    const records = (event as { Records?: unknown })?.Records;
    if (Array.isArray(records)) {
      const failures: WorkerResult["batchItemFailures"] = [];
      for (const record of records as Array<{ body?: string; messageId?: string }>) {
        try {
          await manager.recordFailedJob(failedJobOf(record.body));
        } catch (error) {
          runtime.logger.error(
            { err: { name: (error as Error)?.name } },
            "failed run job not recorded",
          );
          if (record.messageId) failures.push({ itemIdentifier: record.messageId });
        }
      }
      return { jobs: records.length - failures.length, batchItemFailures: failures };
    }
    if ((event as { kind?: unknown })?.kind === RECOVERY_SWEEP_KIND) {
      const recovered = await manager.sweep();
      // The same scheduled event fires the due crons: one invocation a minute serves both.
      const crons = await fireDueCrons(runtime, runtime.cronClock());
      runtime.logger.info({ recovered, crons }, "recovery sweep");
      return { jobs: 0, recovered, crons, batchItemFailures: [] };
    }
    const job = parseRunJob(event);
    try {
      await manager.work(job, { legDeadline, processDeadline });
    } finally {
      if (runtime.environment.langsmithTracing) await flushCallbacks(runtime.logger);
    }
    return { jobs: 1, batchItemFailures: [] };
  };
}

/** The job inside a Lambda destination record (`requestPayload`), as the failure queue delivers it. */
function failedJobOf(body: string | undefined): RunJob {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body ?? "");
  } catch {
    throw new InvalidEventError("Records[].body", "expected a Lambda destination record (JSON)");
  }
  return parseRunJob((parsed as { requestPayload?: unknown })?.requestPayload);
}
