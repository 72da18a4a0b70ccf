import { Fn, Token } from "../cdktf";
import { InvalidConfigurationError } from "../../src/shared/errors";
import { ENVIRONMENT } from "../../src/runtime/environment";
import type { Flag } from "./expressions";

/**
 * Whether the deployment fires crons, as the functions that run graphs read it: `"true"` or `"false"`.
 *
 * Crons need no AWS resource of their own: they live in the table, and the worker fires the due ones on every
 * recovery sweep (the EventBridge rule of `recovery_sweep_schedule`, every minute by default). So the module's
 * `create_crons` switch is this variable: with `"false"` the worker fires none and the API refuses to create or
 * enable one.
 */
export const CRONS_ENABLED = ENVIRONMENT.cronsEnabled;

/** `"true"`/`"false"` for the switch, known now or at plan. */
export function cronsEnabledValue(createCrons: Flag): string {
  if (typeof createCrons === "boolean") return String(createCrons);
  return Token.asString(Fn.conditional(createCrons, "true", "false"));
}

/** Why a schedule is required with crons: the sweep is what fires them. */
export const CRON_SWEEP_RULE =
  "a schedule with create_crons = true (the recovery sweep fires the due crons: without it no cron would ever fire), or create_crons = false";

/** Crons on need the sweep's schedule: refuse a literal null or "" with them (the HCL module validates the same). */
export function assertCronSweep(
  createCrons: Flag | undefined,
  schedule: string | null | undefined,
): void {
  if (createCrons === false) return;
  if (typeof createCrons !== "boolean" && createCrons !== undefined) return;
  if (schedule === null || schedule === "") {
    throw new InvalidConfigurationError(
      "recovery_sweep_schedule",
      `expected ${CRON_SWEEP_RULE}, got ${JSON.stringify(schedule)}`,
    );
  }
}
