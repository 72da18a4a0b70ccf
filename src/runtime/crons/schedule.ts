import { CronExpressionParser, type CronExpression } from "cron-parser";
import { InvalidRequestError } from "../../shared/errors";

/**
 * Cron schedules as LangGraph Platform takes them: five fields (minute, hour, day of month, month, day of week),
 * read in UTC unless the cron names an IANA time zone. Parsing is cron-parser's; this file only decides what is
 * accepted and answers the two questions a sweep asks (the next fire after a time, the latest at or before one).
 */

const FIELDS = 5;

/** Checks a schedule and a time zone; throws InvalidRequestError naming what is wrong. */
export function assertSchedule(schedule: unknown, timezone: string | undefined): string {
  if (typeof schedule !== "string" || schedule.trim().split(/\s+/).length !== FIELDS) {
    throw new InvalidRequestError(
      "schedule",
      `expected a cron expression of ${FIELDS} fields (minute hour day-of-month month day-of-week), got ${
        typeof schedule === "string" ? JSON.stringify(schedule.slice(0, 100)) : typeof schedule
      }`,
    );
  }
  assertTimezone(timezone);
  try {
    // A schedule that never matches (30 February) fails here too: it would never fire.
    expressionOf(schedule, timezone, Date.now()).next();
  } catch (error) {
    throw new InvalidRequestError(
      "schedule",
      `expected a valid cron expression, got ${JSON.stringify(schedule)} (${(error as Error).message})`,
    );
  }
  return schedule.trim();
}

export function assertTimezone(timezone: string | undefined): void {
  if (timezone === undefined) return;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
  } catch {
    throw new InvalidRequestError(
      "timezone",
      `expected an IANA time zone such as "Europe/Paris", got ${JSON.stringify(timezone.slice(0, 100))}`,
    );
  }
}

/** The first fire strictly after `afterMs` (epoch ms). */
export function nextFireAfter(
  schedule: string,
  timezone: string | undefined,
  afterMs: number,
): number {
  return expressionOf(schedule, timezone, afterMs).next().getTime();
}

/** The latest fire at or before `atMs` (epoch ms). */
export function latestFireAtOrBefore(
  schedule: string,
  timezone: string | undefined,
  atMs: number,
): number {
  // cron-parser's prev() is strictly before its current date: start one millisecond later.
  return expressionOf(schedule, timezone, atMs + 1)
    .prev()
    .getTime();
}

function expressionOf(schedule: string, timezone: string | undefined, at: number): CronExpression {
  return CronExpressionParser.parse(schedule, {
    currentDate: new Date(at),
    tz: timezone ?? "UTC",
  });
}
