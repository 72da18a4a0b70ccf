import { z } from "zod";
import { ON_RUN_COMPLETED } from "../../../shared/crons";
import { describeValue } from "../http";
import { expecting, fieldList, integer, jsonObject, oneOf, optional } from "./request-schema";

/**
 * Request bodies of the cron routes (LangGraph Platform's CronCreate, CronUpdate, CronSearch, CronCount). The run
 * each fire makes is checked as a run request is (run-body.ts) before anything is stored.
 */

/** The run fields a cron keeps as its payload (RunCreate's, as the SDK's crons client sends them). */
export const CRON_PAYLOAD_FIELDS = [
  "input",
  "config",
  "context",
  "interrupt_before",
  "interrupt_after",
  "webhook",
  "multitask_strategy",
  "checkpoint_during",
  "durability",
  "stream_mode",
  "stream_subgraphs",
  "stream_resumable",
] as const;

export const CRON_SORT_FIELDS = [
  "cron_id",
  "assistant_id",
  "thread_id",
  "created_at",
  "updated_at",
  "next_run_date",
] as const;

export const CRON_FIELDS = [
  "cron_id",
  "assistant_id",
  "thread_id",
  "on_run_completed",
  "end_time",
  "schedule",
  "timezone",
  "created_at",
  "updated_at",
  "payload",
  "user_id",
  "next_run_date",
  "metadata",
  "enabled",
  "now",
] as const;

export const MAX_CRON_PAGE = 1000;

/** An ISO 8601 date-time with its offset (`2026-01-01T00:00:00Z`), read as epoch ms. */
const dateTime = z
  .string(expecting("an ISO 8601 date-time"))
  .refine(
    (value) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value) && !Number.isNaN(Date.parse(value)),
    {
      error: (issue) => `expected an ISO 8601 date-time, got ${describeValue(issue.input)}`,
    },
  )
  .transform((value) => Date.parse(value));

const cronFields = {
  timezone: optional(z.string(expecting("an IANA time zone"))),
  enabled: optional(z.boolean(expecting("a boolean"))),
  on_run_completed: optional(oneOf(ON_RUN_COMPLETED)),
  metadata: optional(jsonObject()),
};

export const cronCreateSchema = z.looseObject({
  ...cronFields,
  // Checked by assertSchedule, which says what a schedule must be.
  schedule: z.unknown(),
  end_time: optional(dateTime),
});

/** `end_time: null` clears the end (absent leaves it as it is). */
export const cronUpdateSchema = z.looseObject({
  ...cronFields,
  schedule: optional(z.string(expecting("a cron expression"))),
  end_time: dateTime.nullable().optional(),
  timezone: z.string(expecting("an IANA time zone")).nullable().optional(),
});

export const cronCountSchema = z.looseObject({
  assistant_id: optional(z.string(expecting("a string"))),
  thread_id: optional(z.string(expecting("a string"))),
  enabled: optional(z.boolean(expecting("a boolean"))),
  metadata: optional(jsonObject()),
});

export const cronSearchSchema = cronCountSchema.extend({
  limit: optional(integer(1, MAX_CRON_PAGE)),
  offset: optional(integer(0, Number.MAX_SAFE_INTEGER)),
  sort_by: optional(oneOf(CRON_SORT_FIELDS)),
  sort_order: optional(oneOf(["asc", "desc"])),
  select: optional(fieldList(CRON_FIELDS)),
});
