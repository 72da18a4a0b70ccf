import { randomUUID } from "node:crypto";
import { withoutAccess } from "../auth/request-access";
import type { CronRecord, CronStore } from "../../shared/crons";
import {
  CheckpointerRequiredError,
  CronNotFoundError,
  CronsDisabledError,
  CronQuotaExceededError,
  InvalidRequestError,
} from "../../shared/errors";
import { assertPathIdentifier } from "../../shared/identifiers";
import { jsonContains } from "../../shared/json-containment";
import { assertSchedule, nextFireAfter } from "../crons/schedule";
import { json, noContent } from "./http";
import { threadIdFrom, type RouteContext, type RouteHandler } from "./route-context";
import { parseRunBody } from "./run-body";
import { runAssistant } from "./runs-face";
import {
  CRON_PAYLOAD_FIELDS,
  cronCountSchema,
  cronCreateSchema,
  cronSearchSchema,
  cronUpdateSchema,
} from "./schemas/cron-schemas";
import { parseRequest } from "./schemas/request-schema";

/**
 * Crons on the LangGraph Server face (the SDK's `client.crons`): create (stateless, or on a thread), search,
 * count, update and delete. Everything a cron's fires need is checked before it is stored: the schedule and time
 * zone, the end time, the run payload (as a run request is), the assistant, the thread and the tenant's quota.
 * Firing is src/runtime/crons/fire.ts's.
 */

/** Largest run payload a cron keeps (it lives in one table item, at most 400 KB with the rest). */
export const MAX_CRON_PAYLOAD_BYTES = 256 * 1024;
/** Writes an update retries against a sweep that claimed or settled a fire meanwhile. */
const MAX_UPDATE_ATTEMPTS = 5;

export const createCron: RouteHandler = async (context) => {
  const cron = await newCron(context, undefined);
  return json(200, cronJson(cron));
};

export const createThreadCron: RouteHandler = async (context) => {
  const threadId = threadIdFrom(context.params.thread_id);
  context.log.thread = threadId;
  const cron = await newCron(context, threadId);
  return json(200, cronJson(cron));
};

export const searchCrons: RouteHandler = async (context) => {
  const query = parseRequest(cronSearchSchema, context.body);
  const matching = await matchingCrons(context, query);
  const sortBy = query.sort_by ?? "created_at";
  const direction = query.sort_order === "asc" ? 1 : -1;
  const keyOf = (cron: CronRecord): string | number =>
    ({
      cron_id: cron.cronId,
      assistant_id: cron.assistantId,
      thread_id: cron.threadId ?? "",
      created_at: cron.createdAt,
      updated_at: cron.updatedAt,
      next_run_date: cron.nextRunAt ?? Number.MAX_SAFE_INTEGER,
    })[sortBy];
  matching.sort((a, b) => {
    const [x, y] = [keyOf(a), keyOf(b)];
    // Ties in the sort field fall back on the id, so pages never overlap.
    if (x === y) return a.cronId < b.cronId ? -direction : direction;
    return x < y ? -direction : direction;
  });
  const offset = query.offset ?? 0;
  const page = matching.slice(offset, offset + (query.limit ?? 10));
  const select = query.select;
  return json(
    200,
    page.map((cron) => {
      const body: Record<string, unknown> = { ...cronJson(cron), now: new Date().toISOString() };
      if (!select) return cronJson(cron);
      return Object.fromEntries(
        Object.entries(body).filter(([field]) => select.includes(field as never)),
      );
    }),
  );
};

export const countCrons: RouteHandler = async (context) => {
  const query = parseRequest(cronCountSchema, context.body);
  return json(200, (await matchingCrons(context, query)).length);
};

export const updateCron: RouteHandler = async (context) => {
  const crons = cronStore(context);
  const cronId = assertPathIdentifier("cron_id", context.params.cron_id);
  const changes = parseRequest(cronUpdateSchema, context.body);
  if (changes.enabled === true && !context.cronsEnabled) throw new CronsDisabledError();
  for (let attempt = 1; ; attempt++) {
    const current = await crons.get(context.tenantId, cronId);
    if (!current) throw new CronNotFoundError(cronId);
    const updated = updatedCron(context, current, changes);
    if (await crons.save(updated, current.revision)) return json(200, cronJson(updated));
    // A sweep claimed or settled a fire meanwhile: apply the change to what it wrote.
    if (attempt >= MAX_UPDATE_ATTEMPTS)
      throw new Error("cron changed by every attempt to update it");
  }
};

export const deleteCron: RouteHandler = async (context) => {
  const cronId = assertPathIdentifier("cron_id", context.params.cron_id);
  if (!(await cronStore(context).delete(context.tenantId, cronId))) {
    throw new CronNotFoundError(cronId);
  }
  return noContent();
};

/** A cron as the SDK's Cron type has it. */
export function cronJson(cron: CronRecord): Record<string, unknown> {
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  return {
    cron_id: cron.cronId,
    assistant_id: cron.assistantId,
    thread_id: cron.threadId ?? null,
    on_run_completed: cron.threadId === undefined ? (cron.onRunCompleted ?? "delete") : null,
    end_time: iso(cron.endTime),
    schedule: cron.schedule,
    timezone: cron.timezone ?? null,
    created_at: iso(cron.createdAt),
    updated_at: iso(cron.updatedAt),
    payload: cron.payload,
    // A cron's user, if any, is in its metadata, where the auth handlers stamp it (owner-only: `owner`).
    user_id: null,
    next_run_date: cron.enabled ? iso(cron.nextRunAt) : null,
    metadata: cron.metadata,
    enabled: cron.enabled,
  };
}

async function newCron(context: RouteContext, threadId: string | undefined): Promise<CronRecord> {
  const crons = cronStore(context);
  if (!context.cronsEnabled) throw new CronsDisabledError();
  const fields = parseRequest(cronCreateSchema, context.body);
  const schedule = assertSchedule(fields.schedule, fields.timezone);
  const now = Date.now();
  const endTime = fields.end_time;
  assertEndAhead(endTime, now);
  const payload = payloadOf(context.body, {});
  checkPayload(context, payload, context.body.assistant_id);
  const assistant = await runAssistant(context, context.body.assistant_id);
  context.log.assistant = assistant.assistantId;
  if (threadId !== undefined) await context.engine.requireThread(context.tenantId, threadId);
  const nextRunAt = nextFireAfter(schedule, fields.timezone, now);
  if (endTime !== undefined && nextRunAt > endTime) {
    throw new InvalidRequestError(
      "end_time",
      `expected a time after the schedule's first fire (${new Date(nextRunAt).toISOString()}), got ${new Date(endTime).toISOString()}`,
    );
  }
  // The quota counts what is stored; two creates at once may both pass it (a cron or so over, never unbounded).
  // Every cron of the tenant counts, whoever's: read past the auth handlers' filters.
  const existing = await withoutAccess(() => crons.list(context.tenantId));
  if (existing.length >= context.maxCronsPerTenant) {
    throw new CronQuotaExceededError(context.maxCronsPerTenant);
  }
  const enabled = fields.enabled ?? true;
  const cron: CronRecord = {
    tenantId: context.tenantId,
    cronId: randomUUID(),
    assistantId: assistant.assistantId,
    threadId,
    onRunCompleted: threadId === undefined ? (fields.on_run_completed ?? "delete") : undefined,
    schedule,
    timezone: fields.timezone,
    endTime,
    enabled,
    payload,
    metadata: fields.metadata ?? {},
    createdAt: now,
    updatedAt: now,
    nextRunAt,
    pendingFire: undefined,
    dueAt: enabled ? nextRunAt : undefined,
    revision: 1,
  };
  // A random id never exists: a refusal here would be a collision, answered as an unexpected error.
  if (!(await crons.save(cron, "new"))) throw new Error("cron id collision");
  return cron;
}

function updatedCron(
  context: RouteContext,
  current: CronRecord,
  changes: ReturnType<typeof cronUpdateSchema.parse>,
): CronRecord {
  const now = Date.now();
  const timezone = changes.timezone === null ? undefined : (changes.timezone ?? current.timezone);
  const schedule = assertSchedule(changes.schedule ?? current.schedule, timezone);
  const endTime = changes.end_time === null ? undefined : (changes.end_time ?? current.endTime);
  if (changes.end_time !== undefined && changes.end_time !== null) assertEndAhead(endTime, now);
  const payload = payloadOf(context.body, current.payload);
  checkPayload(context, payload, current.assistantId);
  const enabled = changes.enabled ?? current.enabled;
  const rescheduled =
    schedule !== current.schedule ||
    timezone !== current.timezone ||
    endTime !== current.endTime ||
    (enabled && !current.enabled);
  let nextRunAt = rescheduled ? nextFireAfter(schedule, timezone, now) : current.nextRunAt;
  if (nextRunAt !== undefined && endTime !== undefined && nextRunAt > endTime)
    nextRunAt = undefined;
  return {
    ...current,
    schedule,
    timezone,
    endTime,
    enabled,
    onRunCompleted:
      current.threadId === undefined
        ? (changes.on_run_completed ?? current.onRunCompleted)
        : undefined,
    payload,
    metadata: changes.metadata ? { ...current.metadata, ...changes.metadata } : current.metadata,
    updatedAt: now,
    nextRunAt,
    // A claimed fire keeps its retry time (the sweep that claimed it settles it); re-enabled, it is checked now.
    dueAt: !enabled
      ? undefined
      : current.pendingFire !== undefined
        ? (current.dueAt ?? now)
        : nextRunAt,
    revision: current.revision + 1,
  };
}

function assertEndAhead(endTime: number | undefined, now: number): void {
  if (endTime !== undefined && endTime <= now) {
    throw new InvalidRequestError(
      "end_time",
      `expected a time in the future, got ${new Date(endTime).toISOString()}`,
    );
  }
}

/** The body's run fields over `base` (null removes one): what each fire's run request carries. */
function payloadOf(
  body: Record<string, unknown>,
  base: Record<string, unknown>,
): Record<string, unknown> {
  const payload = { ...base };
  for (const field of CRON_PAYLOAD_FIELDS) {
    if (!Object.hasOwn(body, field) || body[field] === undefined) continue;
    if (body[field] === null) delete payload[field];
    else payload[field] = body[field];
  }
  return payload;
}

/** The payload reads as a run request (the same checks, the webhook's host included), and fits an item. */
function checkPayload(
  context: RouteContext,
  payload: Record<string, unknown>,
  assistantId: unknown,
): void {
  parseRunBody({ ...payload, assistant_id: assistantId }, context.webhooks);
  const bytes = Buffer.byteLength(JSON.stringify(payload));
  if (bytes > MAX_CRON_PAYLOAD_BYTES) {
    throw new InvalidRequestError(
      "body",
      `expected a run payload of at most ${MAX_CRON_PAYLOAD_BYTES} bytes, got ${bytes}`,
    );
  }
}

async function matchingCrons(
  context: RouteContext,
  query: ReturnType<typeof cronCountSchema.parse>,
): Promise<CronRecord[]> {
  // A tenant's crons are one small partition (at most its quota): read whole, then filtered here.
  const crons = await cronStore(context).list(context.tenantId);
  return crons.filter(
    (cron) =>
      (query.assistant_id === undefined || cron.assistantId === query.assistant_id) &&
      (query.thread_id === undefined || cron.threadId === query.thread_id) &&
      (query.enabled === undefined || cron.enabled === query.enabled) &&
      (query.metadata === undefined || jsonContains(cron.metadata, query.metadata)),
  );
}

function cronStore(context: RouteContext): CronStore {
  if (!context.crons) throw new CheckpointerRequiredError("A cron");
  return context.crons;
}

export const CRON_HANDLERS: Readonly<Record<string, RouteHandler>> = {
  "POST /runs/crons": createCron,
  "POST /threads/{thread_id}/runs/crons": createThreadCron,
  "POST /runs/crons/search": searchCrons,
  "POST /runs/crons/count": countCrons,
  "PATCH /runs/crons/{cron_id}": updateCron,
  "DELETE /runs/crons/{cron_id}": deleteCron,
};
