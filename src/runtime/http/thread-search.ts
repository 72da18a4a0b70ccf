import { assertPathIdentifier } from "../../shared/identifiers";
import { jsonContains } from "../../shared/json-containment";
import {
  THREAD_SORT_FIELDS,
  type ThreadRecord,
  type ThreadSortField,
  type ThreadStatus,
} from "../../shared/threads";
import { InvalidRequestError } from "../../shared/errors";
import { describe, describeValue } from "./http";
import { toWireJson } from "../runs/wire-json";
import { integerField, objectField, type RouteContext } from "./route-context";
import { optionalEnum } from "./run-body";
import { SEARCH_STATUSES, sdkStatus, threadJson } from "./serialize";
import { readThreadState } from "./thread-state";

/**
 * `threads.search` and `threads.count` as LangGraph Server answers them: filters by status, ids, metadata and
 * values (jsonb containment), sorted by any thread field, paged, with `select`ed fields. Records come from the
 * store's index in creation (or, for inbox statuses, update) order: a search in that order stops reading once its
 * page is full; any other order, and every count, reads all matching records, at most SCAN_LIMIT of them.
 */

/** Most records a search or count reads; beyond it the request is refused rather than answered partly. */
export const SCAN_LIMIT = 10_000;
/** Most threads whose state a `values` filter reads (one checkpoint read each). */
export const VALUES_SCAN_LIMIT = 1_000;
export const MAX_SEARCH_LIMIT = 1_000;
export const MAX_SEARCH_OFFSET = SCAN_LIMIT;
/** Threads whose state is read at once (values of a page, a values filter). */
const STATE_READS_IN_FLIGHT = 16;

const SELECTABLE_FIELDS = [
  "thread_id",
  "created_at",
  "updated_at",
  "metadata",
  "config",
  "context",
  "status",
  "values",
  "interrupts",
] as const;

interface ThreadFilter {
  status?: ThreadStatus;
  ids?: string[];
  metadata?: Record<string, unknown>;
  values?: Record<string, unknown>;
}

export async function searchThreads(
  context: RouteContext,
): Promise<{ threads: Record<string, unknown>[]; next?: number }> {
  const { body } = context;
  const filter = parseFilter(body);
  const limit = integerField(body, "limit", 10, 1, MAX_SEARCH_LIMIT);
  const offset = integerField(body, "offset", 0, 0, MAX_SEARCH_OFFSET);
  const sortBy: ThreadSortField = optionalEnum(body, "sort_by", THREAD_SORT_FIELDS) ?? "created_at";
  const sortOrder = optionalEnum(body, "sort_order", ["asc", "desc"] as const) ?? "desc";
  const select = parseSelect(body.select);

  const store = context.engine.store("Searching threads");
  const scan = store.scan({ tenantId: context.tenantId, ...filter, order: sortOrder });
  const now = Date.now();
  const inOrder = scan.orderedBy === sortBy;
  // In the index's order, only offset + limit matches (and one more, to know a next page exists) are read.
  const wanted = inOrder ? offset + limit + 1 : SCAN_LIMIT;
  const matches = await collect(context, scan.records, filter, wanted);
  if (!inOrder) matches.sort(comparator(sortBy, sortOrder, now));
  const page = matches.slice(offset, offset + limit);
  const wantsValues = select === undefined || select.includes("values");
  const values = wantsValues ? await readValues(context, page) : [];
  const threads = page.map((record, index) => {
    const full = threadJson(record, now, wantsValues ? values[index] : undefined);
    return select ? pick(full, select) : full;
  });
  return {
    threads,
    ...(matches.length > offset + limit ? { next: offset + limit } : {}),
  };
}

export async function countThreads(context: RouteContext): Promise<number> {
  const filter = parseFilter(context.body, false);
  const store = context.engine.store("Counting threads");
  const scan = store.scan({ tenantId: context.tenantId, ...filter, order: "desc" });
  return (await collect(context, scan.records, filter, SCAN_LIMIT)).length;
}

function parseFilter(body: Record<string, unknown>, withIds = true): ThreadFilter {
  const filter: ThreadFilter = {};
  if (body.status !== undefined && body.status !== null) {
    const status = typeof body.status === "string" ? SEARCH_STATUSES.get(body.status) : undefined;
    if (!status) {
      throw new InvalidRequestError(
        "status",
        `expected one of ${[...SEARCH_STATUSES.keys()].join(", ")}, got ${describeValue(body.status)}`,
      );
    }
    filter.status = status;
  }
  if (withIds && body.ids !== undefined && body.ids !== null) {
    if (!Array.isArray(body.ids) || body.ids.length > SCAN_LIMIT) {
      throw new InvalidRequestError(
        "ids",
        `expected a list of at most ${SCAN_LIMIT} thread ids, got ${describe(body.ids)}`,
      );
    }
    filter.ids = body.ids.map((id, index) => assertPathIdentifier(`ids[${index}]`, id));
  }
  const metadata = objectField(body, "metadata");
  if (metadata && Object.keys(metadata).length > 0) filter.metadata = metadata;
  const values = objectField(body, "values");
  if (values && Object.keys(values).length > 0) filter.values = values;
  return filter;
}

function parseSelect(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) {
    throw new InvalidRequestError("select", `expected a list of fields, got ${describe(value)}`);
  }
  for (const field of value) {
    if (!(SELECTABLE_FIELDS as readonly unknown[]).includes(field)) {
      throw new InvalidRequestError(
        "select",
        `expected fields among ${SELECTABLE_FIELDS.join(", ")}, got ${describeValue(field)}`,
      );
    }
  }
  return value as string[];
}

/** Reads records until `wanted` match (or the scan ends); over SCAN_LIMIT read, the request is refused. */
async function collect(
  context: RouteContext,
  records: AsyncIterable<ThreadRecord>,
  filter: ThreadFilter,
  wanted: number,
): Promise<ThreadRecord[]> {
  const matches: ThreadRecord[] = [];
  let read = 0;
  let pending: ThreadRecord[] = [];
  let stateReads = 0;
  const flush = async () => {
    // A values filter reads each candidate's state, a few at a time.
    stateReads += pending.length;
    if (stateReads > VALUES_SCAN_LIMIT) {
      throw new InvalidRequestError(
        "values",
        `the filter would read the state of more than ${VALUES_SCAN_LIMIT} threads; narrow the search with status, ids or metadata`,
      );
    }
    const values = await readValues(context, pending);
    pending.forEach((record, index) => {
      if (jsonContains(JSON.parse(toWireJson(values[index] ?? {})), filter.values))
        matches.push(record);
    });
    pending = [];
  };
  for await (const record of records) {
    read += 1;
    if (read > SCAN_LIMIT) {
      throw new InvalidRequestError(
        "search",
        `it would read more than ${SCAN_LIMIT} threads; narrow it with status, ids or metadata, or sort by created_at`,
      );
    }
    if (filter.metadata && !jsonContains(record.metadata, filter.metadata)) continue;
    if (filter.values) {
      pending.push(record);
      if (pending.length >= STATE_READS_IN_FLIGHT) await flush();
    } else {
      matches.push(record);
    }
    if (matches.length >= wanted) break;
  }
  if (pending.length > 0) await flush();
  return matches.slice(0, wanted);
}

/** The values of each thread (undefined for a thread never run), a few reads at a time. */
async function readValues(context: RouteContext, records: ThreadRecord[]): Promise<unknown[]> {
  const values: unknown[] = new Array(records.length);
  for (let start = 0; start < records.length; start += STATE_READS_IN_FLIGHT) {
    const batch = records.slice(start, start + STATE_READS_IN_FLIGHT);
    const states = await Promise.all(
      batch.map((record) =>
        record.status === undefined ? undefined : readThreadState(context, record),
      ),
    );
    states.forEach((state, index) => {
      values[start + index] = state?.values;
    });
  }
  return values;
}

function comparator(
  sortBy: ThreadSortField,
  order: "asc" | "desc",
  now: number,
): (a: ThreadRecord, b: ThreadRecord) => number {
  const key = (record: ThreadRecord): number | string => {
    switch (sortBy) {
      case "created_at":
        return record.createdAt;
      case "updated_at":
        return record.updatedAt;
      case "thread_id":
        return record.threadId;
      case "status":
        return sdkStatus(record, now);
    }
  };
  const sign = order === "asc" ? 1 : -1;
  return (a, b) => {
    const left = key(a);
    const right = key(b);
    const byKey = left < right ? -1 : left > right ? 1 : 0;
    // Ties in creation order, so pages never overlap.
    return sign * (byKey || a.createdAt - b.createdAt || (a.threadId < b.threadId ? -1 : 1));
  };
}

function pick(full: Record<string, unknown>, fields: string[]): Record<string, unknown> {
  return Object.fromEntries(fields.filter((field) => field in full).map((f) => [f, full[f]]));
}
