/**
 * The assistant model of the LangGraph Server API: an assistant is a graph with its own config, context and
 * metadata, versioned (every change is a new version; any version can be made the one served). Every store of
 * assistants (the table's, the in-memory one) keeps this shape and applies these rules; none speaks HTTP.
 */

/** An assistant as served: its latest version's content. Times are epoch milliseconds. */
export interface AssistantRecord {
  assistantId: string;
  graphId: string;
  name: string;
  description: string | null;
  /** LangGraph config (`configurable`, `tags`, `recursion_limit`, ...), merged under a run's own. */
  config: Record<string, unknown>;
  /** Static runtime context, merged under a run's own. */
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
  /** The version served (not necessarily the newest: see setLatest). */
  version: number;
  createdAt: number;
  /** When the assistant last changed (a new version, or another version made the one served). */
  updatedAt: number;
}

/** One version of an assistant, as it was made. */
export interface AssistantVersion {
  assistantId: string;
  version: number;
  graphId: string;
  name: string;
  description: string | null;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
  createdAt: number;
}

/** A new assistant, validated (its id is free-form here; the runtime only mints and accepts UUIDs). */
export interface NewAssistant {
  assistantId: string;
  graphId: string;
  name: string;
  description: string | null;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
  now: number;
}

/**
 * What a patch changes. Every given field replaces the current one, except `metadata`, which is merged into it
 * key by key. A patch without changes still makes a new version.
 */
export interface AssistantChanges {
  graphId?: string;
  name?: string;
  description?: string;
  config?: Record<string, unknown>;
  context?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

/** Fields assistants can be listed by (LangGraph Server's `sort_by`). */
export const ASSISTANT_SORT_FIELDS = [
  "assistant_id",
  "graph_id",
  "name",
  "created_at",
  "updated_at",
] as const;
export type AssistantSortField = (typeof ASSISTANT_SORT_FIELDS)[number];

export interface AssistantFilter {
  /** Exactly this graph. */
  graphId?: string;
  /** Names containing this, ignoring case. */
  name?: string;
  /** Metadata containing this (JSON containment: nested objects match key by key). */
  metadata?: Record<string, unknown>;
}

export interface AssistantSearch extends AssistantFilter {
  limit: number;
  offset: number;
  sortBy: AssistantSortField;
  sortOrder: "asc" | "desc";
}

/** One page of a search and how many assistants matched in all. */
export interface AssistantPage {
  assistants: AssistantRecord[];
  total: number;
}

export interface AssistantVersionQuery {
  /** Versions whose metadata contains this. */
  metadata?: Record<string, unknown>;
  limit: number;
  offset: number;
}

/** What a create did: `created`, or nothing because the id was taken (`assistant` is then the one there). */
export interface PutAssistantResult {
  created: boolean;
  assistant: AssistantRecord;
}

export type SetLatestResult =
  | { status: "updated"; assistant: AssistantRecord }
  /** No such assistant. */
  | { status: "missing" }
  /** The assistant has no such version. */
  | { status: "no-version" };

/**
 * A tenant's assistants and their versions. Every method takes the tenant explicitly, so one store serves all
 * tenants of a container and no call can reach another tenant's assistant. Domain outcomes (missing, taken)
 * are results, never errors: the caller decides what they mean.
 */
export interface AssistantStore {
  /** Creates the assistant at version 1 unless its id is taken (then it changes nothing). */
  put(tenantId: string, assistant: NewAssistant): Promise<PutAssistantResult>;
  get(tenantId: string, assistantId: string): Promise<AssistantRecord | undefined>;
  /** Makes a new version (the newest number plus one) from the served one and serves it; undefined when missing. */
  patch(
    tenantId: string,
    assistantId: string,
    changes: AssistantChanges,
    now: number,
  ): Promise<AssistantRecord | undefined>;
  /** Removes the assistant with all its versions; false when there was none. */
  delete(tenantId: string, assistantId: string): Promise<boolean>;
  /** Matching assistants in the requested order, one page of them, and how many matched in all. */
  search(tenantId: string, query: AssistantSearch): Promise<AssistantPage>;
  count(tenantId: string, filter: AssistantFilter): Promise<number>;
  /** Versions, newest first; undefined when the assistant does not exist. */
  listVersions(
    tenantId: string,
    assistantId: string,
    query: AssistantVersionQuery,
  ): Promise<AssistantVersion[] | undefined>;
  /** Serves an existing version again (no new version is made). */
  setLatest(
    tenantId: string,
    assistantId: string,
    version: number,
    now: number,
  ): Promise<SetLatestResult>;
}

/** Largest assistant content (graph id, name, description, config, context, metadata) as JSON, in bytes. */
export const MAX_ASSISTANT_BYTES = 128 * 1024;

/** Bytes of an assistant's content as JSON: what MAX_ASSISTANT_BYTES bounds. */
export function assistantContentBytes(
  assistant: Pick<
    AssistantRecord,
    "graphId" | "name" | "description" | "config" | "context" | "metadata"
  >,
): number {
  return Buffer.byteLength(
    JSON.stringify([
      assistant.graphId,
      assistant.name,
      assistant.description,
      assistant.config,
      assistant.context,
      assistant.metadata,
    ]),
  );
}

/** The record a new assistant starts as: version 1. */
export function firstVersion(assistant: NewAssistant): AssistantRecord {
  return {
    assistantId: assistant.assistantId,
    graphId: assistant.graphId,
    name: assistant.name,
    description: assistant.description,
    config: assistant.config,
    context: assistant.context,
    metadata: assistant.metadata,
    version: 1,
    createdAt: assistant.now,
    updatedAt: assistant.now,
  };
}

/** The record after a patch: `version` is the new version's number. */
export function patchedAssistant(
  current: AssistantRecord,
  changes: AssistantChanges,
  version: number,
  now: number,
): AssistantRecord {
  return {
    ...current,
    graphId: changes.graphId ?? current.graphId,
    name: changes.name ?? current.name,
    description: changes.description ?? current.description,
    config: changes.config ?? current.config,
    context: changes.context ?? current.context,
    metadata: changes.metadata ? { ...current.metadata, ...changes.metadata } : current.metadata,
    version,
    updatedAt: now,
  };
}

/** The record serving `version` again (setLatest). */
export function servingVersion(
  current: AssistantRecord,
  version: AssistantVersion,
  now: number,
): AssistantRecord {
  return {
    ...current,
    graphId: version.graphId,
    name: version.name,
    description: version.description,
    config: version.config,
    context: version.context,
    metadata: version.metadata,
    version: version.version,
    updatedAt: now,
  };
}

/** The version a record serves, made at `createdAt`. */
export function versionOf(record: AssistantRecord, createdAt: number): AssistantVersion {
  return {
    assistantId: record.assistantId,
    version: record.version,
    graphId: record.graphId,
    name: record.name,
    description: record.description,
    config: record.config,
    context: record.context,
    metadata: record.metadata,
    createdAt,
  };
}

export function matchesAssistantFilter(
  assistant: Pick<AssistantRecord, "graphId" | "name" | "metadata">,
  filter: AssistantFilter,
): boolean {
  if (filter.graphId !== undefined && assistant.graphId !== filter.graphId) return false;
  if (
    filter.name !== undefined &&
    !assistant.name.toLowerCase().includes(filter.name.toLowerCase())
  ) {
    return false;
  }
  return filter.metadata === undefined || containsJson(assistant.metadata, filter.metadata);
}

/**
 * JSON containment as PostgreSQL's `jsonb @>` has it (LangGraph Server's metadata filters): an object contains
 * another when it has each of its keys with a value containing that key's value; an array contains another when
 * each element of the other is contained in one of its elements; scalars (and null) contain only themselves.
 */
export function containsJson(container: unknown, contained: unknown): boolean {
  if (Array.isArray(contained)) {
    return (
      Array.isArray(container) &&
      contained.every((wanted) => container.some((element) => containsJson(element, wanted)))
    );
  }
  if (isJsonObject(contained)) {
    return (
      isJsonObject(container) &&
      Object.entries(contained).every(
        ([key, wanted]) => Object.hasOwn(container, key) && containsJson(container[key], wanted),
      )
    );
  }
  return container === contained;
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Orders assistants by `sortBy`, ties by assistant id, the whole order reversed for `desc`. */
export function assistantOrder(
  sortBy: AssistantSortField,
  sortOrder: "asc" | "desc",
): (a: AssistantRecord, b: AssistantRecord) => number {
  const direction = sortOrder === "asc" ? 1 : -1;
  return (a, b) => {
    const primary = compare(sortValue(a, sortBy), sortValue(b, sortBy));
    return direction * (primary !== 0 ? primary : compare(a.assistantId, b.assistantId));
  };
}

function sortValue(assistant: AssistantRecord, sortBy: AssistantSortField): string | number {
  switch (sortBy) {
    case "assistant_id":
      return assistant.assistantId;
    case "graph_id":
      return assistant.graphId;
    case "name":
      return assistant.name;
    case "created_at":
      return assistant.createdAt;
    case "updated_at":
      return assistant.updatedAt;
  }
}

function compare(a: string | number, b: string | number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** One page of assistants matching a search (shared by the stores and the directory that joins them). */
export function searchPage(
  assistants: Iterable<AssistantRecord>,
  query: AssistantSearch,
): AssistantPage {
  const matching = [...assistants]
    .filter((assistant) => matchesAssistantFilter(assistant, query))
    .sort(assistantOrder(query.sortBy, query.sortOrder));
  return {
    assistants: matching.slice(query.offset, query.offset + query.limit),
    total: matching.length,
  };
}

/** One page of versions, newest first, matching a version query. */
export function versionPage(
  versions: Iterable<AssistantVersion>,
  query: AssistantVersionQuery,
): AssistantVersion[] {
  return [...versions]
    .filter(
      (version) => query.metadata === undefined || containsJson(version.metadata, query.metadata),
    )
    .sort((a, b) => b.version - a.version)
    .slice(query.offset, query.offset + query.limit);
}
