import { assertPathIdentifier } from "../../shared/identifiers";
import { jsonContains } from "../../shared/json-containment";
import { type ThreadRecord, type ThreadSortField, type ThreadStatus } from "../../shared/threads";
import { InvalidRequestError } from "../../shared/errors";
import { toWireJson } from "../runs/wire-json";
import type { z } from "zod";
import type { RouteContext } from "./route-context";
import { parseRequest } from "./schemas/request-schema";
import { SCAN_LIMIT, threadCountSchema, threadSearchSchema } from "./schemas/thread-schemas";
import { SEARCH_STATUSES, sdkStatus, threadJson } from "./serialize";
import { readThreadState } from "./thread-state";

/**
 * `threads.search` and `threads.count` as LangGraph Server answers them: filters by status, ids, metadata and
 * values (jsonb containment), sorted by any thread field, paged, with `select`ed fields. Records come from the
 * store's index in creation (or, for inbox statuses, update) order: a search in that order stops reading once its
 * page is full; any other order, and every count, reads all matching records, at most SCAN_LIMIT of them.
 */

export { MAX_SEARCH_LIMIT, MAX_SEARCH_OFFSET, SCAN_LIMIT } from "./schemas/thread-schemas";
/** Most threads whose state a `values` filter reads (one checkpoint read each). */
export const VALUES_SCAN_LIMIT = 1_000;
/** Threads whose state is read at once (values of a page, a values filter). */
const STATE_READS_IN_FLIGHT = 16;

interface ThreadFilter {
  status?: ThreadStatus;
  ids?: string[];
  metadata?: Record<string, unknown>;
  values?: Record<string, unknown>;
}

export async function searchThreads(
  context: RouteContext,
): Promise<{ threads: Record<string, unknown>[]; next?: number }> {
  const body = parseRequest(threadSearchSchema, context.body);
  const filter = filterOf(body);
  if (body.ids !== undefined) {
    filter.ids = body.ids.map((id, index) => assertPathIdentifier(`ids[${index}]`, id));
  }
  const limit = body.limit ?? 10;
  const offset = body.offset ?? 0;
  const sortBy: ThreadSortField = body.sort_by ?? "created_at";
  const sortOrder = body.sort_order ?? "desc";
  const select = body.select as string[] | undefined;

  const store = context.engine.store("Searching threads");
  const asked = { ...askedFilter(body), limit, offset, ...(filter.ids ? { ids: filter.ids } : {}) };
  const scan = store.scan({ tenantId: context.tenantId, ...filter, order: sortOrder, asked });
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
  const body = parseRequest(threadCountSchema, context.body);
  const filter = filterOf(body);
  const store = context.engine.store("Counting threads");
  const scan = store.scan({
    tenantId: context.tenantId,
    ...filter,
    order: "desc",
    asked: askedFilter(body),
  });
  return (await collect(context, scan.records, filter, SCAN_LIMIT)).length;
}

/** The filter a count or search names; empty metadata or values filter nothing. */
function filterOf(body: z.output<typeof threadCountSchema>): ThreadFilter {
  const filter: ThreadFilter = {};
  if (body.status !== undefined) filter.status = SEARCH_STATUSES.get(body.status);
  if (body.metadata && Object.keys(body.metadata).length > 0) filter.metadata = body.metadata;
  if (body.values && Object.keys(body.values).length > 0) filter.values = body.values;
  return filter;
}

/** The filters a count or search names, as the client sent them (the `threads:search` handlers' value). */
function askedFilter(body: z.output<typeof threadCountSchema>): Record<string, unknown> {
  return {
    ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
    ...(body.values !== undefined ? { values: body.values } : {}),
    ...(body.status !== undefined ? { status: body.status } : {}),
  };
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
