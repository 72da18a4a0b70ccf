import type { Logger } from "pino";
import type { ApiHandler } from "../runtime/handler";
import type { ThreadRef } from "../runtime/runs/run-manager";

export interface RunRecovery {
  /** Stops the schedule (a sweep under way finishes on its own). */
  stop(): void;
}

/**
 * Recovers the runs a crashed process left behind, now and every `everyMs`: the dev server's table (DynamoDB
 * Local, or a real one) outlives the server, so a run that was running when it died is taken over from its last
 * checkpoint (or ends in error) and the runs queued behind it go on, with no new request for them. Sweeps never
 * overlap, and a failed sweep is logged and tried again at the next tick.
 */
export function recoverRunsPeriodically(
  handler: Pick<ApiHandler, "recoverRuns">,
  /** Where to look: the threads whose runs are not at rest (read anew at each sweep). */
  unsettledThreads: () => AsyncIterable<ThreadRef>,
  everyMs: number,
  logger: Pick<Logger, "info" | "warn">,
): RunRecovery {
  let sweeping = false;
  const sweep = async () => {
    if (sweeping) return;
    sweeping = true;
    try {
      const recovered = await handler.recoverRuns(unsettledThreads());
      if (recovered > 0) logger.info({ threads: recovered }, "runs of a stopped process recovered");
    } catch (error) {
      logger.warn({ err: { name: (error as Error)?.name } }, "run recovery failed; retried later");
    } finally {
      sweeping = false;
    }
  };
  void sweep();
  const timer = setInterval(() => void sweep(), everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
