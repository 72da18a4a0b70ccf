import type { Logger } from "pino";
import { InvalidEventError } from "../../shared/errors";
import type { RunDispatcher, RunJob, RunManager } from "./run-manager";

/** Marks the payload of a worker invocation, so the worker tells a job from any other event. */
export const RUN_JOB_KIND = "memory-table.run-job";

export interface RunJobEvent extends RunJob {
  kind: typeof RUN_JOB_KIND;
}

/** A job as the worker receives it; throws InvalidEventError for anything else. */
export function parseRunJob(event: unknown): RunJob {
  const candidate = event as Partial<RunJobEvent> | null;
  if (
    typeof candidate !== "object" ||
    candidate === null ||
    candidate.kind !== RUN_JOB_KIND ||
    typeof candidate.tenantId !== "string" ||
    typeof candidate.threadId !== "string" ||
    (candidate.runId !== undefined && typeof candidate.runId !== "string") ||
    (candidate.queuedRunId !== undefined && typeof candidate.queuedRunId !== "string")
  ) {
    throw new InvalidEventError(
      "event",
      `expected a run job ({kind: "${RUN_JOB_KIND}", tenantId, threadId})`,
    );
  }
  return {
    tenantId: candidate.tenantId,
    threadId: candidate.threadId,
    ...(candidate.runId !== undefined ? { runId: candidate.runId } : {}),
    ...(candidate.queuedRunId !== undefined ? { queuedRunId: candidate.queuedRunId } : {}),
  };
}

/**
 * Runs jobs in this process (the dev server, tests): each starts on the event loop's next turn with a leg budget
 * of its own, as a worker invocation would.
 */
export class InProcessDispatcher implements RunDispatcher {
  readonly inProcess = true;
  private manager: RunManager | undefined;
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly legBudgetMs: number,
    private readonly logger: Logger,
  ) {}

  attach(manager: RunManager): void {
    this.manager = manager;
  }

  async dispatch(job: RunJob): Promise<void> {
    const manager = this.manager;
    if (!manager) throw new Error("InProcessDispatcher used before a RunManager was attached");
    const work = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => {
        const deadline = Date.now() + this.legBudgetMs;
        return manager.work(job, { legDeadline: deadline, processDeadline: deadline });
      })
      .catch((error: unknown) => {
        this.logger.error(
          { thread: job.threadId, err: { name: (error as Error)?.name } },
          "background run job failed",
        );
      })
      .finally(() => this.running.delete(work));
    this.running.add(work);
  }

  /** Resolves when every job started so far (and those they started) has ended. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }
}
