import { InvalidRequestError } from "../../../src/shared/errors";
import {
  assertSchedule,
  latestFireAtOrBefore,
  nextFireAfter,
} from "../../../src/runtime/crons/schedule";

const at = (iso: string) => Date.parse(iso);

describe("cron schedules", () => {
  it("gives the next fire strictly after a time and the latest at or before it, in UTC", () => {
    expect(nextFireAfter("* * * * *", undefined, at("2026-01-01T00:03:00Z"))).toBe(
      at("2026-01-01T00:04:00Z"),
    );
    expect(latestFireAtOrBefore("* * * * *", undefined, at("2026-01-01T00:03:00Z"))).toBe(
      at("2026-01-01T00:03:00Z"),
    );
    expect(latestFireAtOrBefore("*/5 * * * *", undefined, at("2026-01-01T00:09:59Z"))).toBe(
      at("2026-01-01T00:05:00Z"),
    );
  });

  it("reads a schedule in its time zone, summer time included", () => {
    // 09:00 in Paris: 08:00 UTC in winter, 07:00 UTC in summer.
    expect(nextFireAfter("0 9 * * *", "Europe/Paris", at("2026-01-10T12:00:00Z"))).toBe(
      at("2026-01-11T08:00:00Z"),
    );
    expect(nextFireAfter("0 9 * * *", "Europe/Paris", at("2026-07-10T12:00:00Z"))).toBe(
      at("2026-07-11T07:00:00Z"),
    );
  });

  it.each([
    ["three fields", "* * *", /5 fields/],
    ["six fields (seconds)", "0 * * * * *", /5 fields/],
    ["a minute out of range", "61 * * * *", /valid cron expression/],
    ["a date that never comes", "0 0 30 2 *", /valid cron expression/],
    ["not a string", 42, /5 fields/],
  ])("refuses %s, naming the field", (_, schedule, message) => {
    expect(() => assertSchedule(schedule, undefined)).toThrow(InvalidRequestError);
    expect(() => assertSchedule(schedule, undefined)).toThrow(message);
  });

  it("refuses a time zone that is not an IANA zone", () => {
    expect(() => assertSchedule("* * * * *", "Mars/Olympus")).toThrow(/Invalid timezone/);
    expect(assertSchedule(" 0 9 * * 1-5 ", "America/New_York")).toBe("0 9 * * 1-5");
  });
});
