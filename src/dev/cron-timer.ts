import type { Logger } from "pino";
import type { ApiHandler } from "../runtime/handler";

export interface CronTimer {
  /** Stops the timer (a sweep under way finishes on its own). */
  stop(): void;
}

/**
 * The dev server's cron sweeper: fires due crons in this process every `everyMs` (both backends), as the
 * worker's scheduled sweep does in AWS. Sweeps never overlap; a failed one is logged and tried at the next tick.
 */
export function fireCronsPeriodically(
  handler: Pick<ApiHandler, "fireDueCrons">,
  everyMs: number,
  logger: Pick<Logger, "info" | "warn">,
): CronTimer {
  let sweeping = false;
  const sweep = async () => {
    if (sweeping) return;
    sweeping = true;
    try {
      const { fired, failed } = await handler.fireDueCrons();
      if (fired > 0 || failed > 0) logger.info({ fired, failed }, "crons fired");
    } catch (error) {
      logger.warn({ err: { name: (error as Error)?.name } }, "cron sweep failed; retried later");
    } finally {
      sweeping = false;
    }
  };
  const timer = setInterval(() => void sweep(), everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
