import type {
  GetOperation,
  ListNamespacesOperation,
  PutOperation,
  SearchOperation,
} from "@langchain/langgraph-checkpoint";
import { MAX_SORT_KEY_BYTES, storeNamespacePrefix } from "../table/keys";
import { parseStoreFilter, type StoreFilter } from "./filter";
import type { NamespaceListing } from "./namespaces";
import type { SemanticIndex } from "./semantic-index";
import {
  assertIndexFields,
  assertItemKeyFits,
  assertMaxDepth,
  assertOptionalBoolean,
  assertPageNumber,
  assertQuery,
  assertStoreKey,
  assertStoreNamespace,
  assertTtlMinutes,
  describeStoreInput,
  fail,
  MAX_PAGE_LIMIT,
  MAX_PAGE_OFFSET,
} from "./validation";
import { serializeStoreValue, type StoreValueJson } from "./value-json";

/**
 * LangGraph's store operations, with the options the LangGraph server and SDK add (`ttl` on a put, `refreshTtl`
 * on reads), and their checked forms. A batch is checked whole before anything runs.
 */
export type StoreGetOperation = GetOperation & { refreshTtl?: boolean | null };
export type StorePutOperation = PutOperation & { ttl?: number | null };
export type StoreSearchOperation = SearchOperation & { refreshTtl?: boolean | null };
export type StoreOperation =
  StoreGetOperation | StorePutOperation | StoreSearchOperation | ListNamespacesOperation;

export const DEFAULT_SEARCH_LIMIT = 10;
export const DEFAULT_LIST_LIMIT = 100;

export interface CheckedGet {
  kind: "get";
  namespace: string[];
  key: string;
  refreshTtl: boolean | undefined;
}

export interface CheckedPut {
  kind: "put";
  namespace: string[];
  key: string;
  /** Undefined for a delete (`value: null`). */
  value: { data: Record<string, unknown>; serialized: StoreValueJson } | undefined;
  index: false | string[] | undefined;
  ttl: number | null | undefined;
}

export interface CheckedSearch {
  kind: "search";
  prefix: string[];
  filter: StoreFilter | undefined;
  limit: number;
  offset: number;
  query: string | undefined;
  refreshTtl: boolean | undefined;
}

export interface CheckedListing {
  kind: "list";
  listing: NamespaceListing;
}

export type CheckedOperation = CheckedGet | CheckedPut | CheckedSearch | CheckedListing;

export interface OperationRules {
  maxValueBytes: number;
  index: SemanticIndex | undefined;
}

/** Checks every operation of a batch; throws InvalidStoreOperationError (or a size error) before any request. */
export function checkOperations(
  operations: readonly unknown[],
  rules: OperationRules,
): CheckedOperation[] {
  if (!Array.isArray(operations)) {
    fail("operations", `expected an array, got ${describeStoreInput(operations)}`);
  }
  return operations.map((operation, index) => checkOperation(operation, index, rules));
}

function checkOperation(
  operation: unknown,
  index: number,
  rules: OperationRules,
): CheckedOperation {
  if (typeof operation !== "object" || operation === null || Array.isArray(operation)) {
    fail(
      `operations[${index}]`,
      `expected an operation object, got ${describeStoreInput(operation)}`,
    );
  }
  const op = operation as Record<string, unknown>;
  if ("namespacePrefix" in op) return checkSearch(op, rules);
  if ("matchConditions" in op || ("limit" in op && !("namespace" in op))) return checkListing(op);
  if ("namespace" in op && "key" in op) {
    return "value" in op ? checkPut(op, rules) : checkGet(op);
  }
  fail(
    `operations[${index}]`,
    "expected a get, put, search or listNamespaces operation, got an object that is none",
  );
}

function checkGet(op: Record<string, unknown>): CheckedGet {
  const namespace = assertStoreNamespace("namespace", op.namespace, { allowReservedRoot: true });
  const key = assertStoreKey(op.key);
  assertItemKeyFits(namespace, key);
  return {
    kind: "get",
    namespace,
    key,
    refreshTtl: assertOptionalBoolean("refreshTtl", op.refreshTtl),
  };
}

function checkPut(op: Record<string, unknown>, rules: OperationRules): CheckedPut {
  // `put()` refuses the reserved root label before it builds the operation; `batch()` accepts it, as LangGraph.
  const namespace = assertStoreNamespace("namespace", op.namespace, { allowReservedRoot: true });
  const key = assertStoreKey(op.key);
  assertItemKeyFits(namespace, key);
  const index = assertIndexFields("index", op.index);
  if (index && rules.index) rules.index.assertPaths("index", index);
  const ttl = assertTtlMinutes("ttl", op.ttl);
  if (op.value === null) return { kind: "put", namespace, key, value: undefined, index, ttl };
  const serialized = serializeStoreValue(op.value, rules.maxValueBytes);
  return {
    kind: "put",
    namespace,
    key,
    value: { data: op.value as Record<string, unknown>, serialized },
    index,
    ttl,
  };
}

function checkSearch(op: Record<string, unknown>, rules: OperationRules): CheckedSearch {
  const prefix = assertStoreNamespace("namespacePrefix", op.namespacePrefix, {
    allowEmpty: true,
    allowReservedRoot: true,
  });
  assertPrefixFits("namespacePrefix", prefix);
  const query = assertQuery(op.query);
  if (query !== undefined && !rules.index) {
    fail("query", "expected a store configured with an index (semantic search), got a query");
  }
  return {
    kind: "search",
    prefix,
    filter: parseStoreFilter(op.filter),
    limit: assertPageNumber("limit", op.limit, DEFAULT_SEARCH_LIMIT, MAX_PAGE_LIMIT),
    offset: assertPageNumber("offset", op.offset, 0, MAX_PAGE_OFFSET),
    query,
    refreshTtl: assertOptionalBoolean("refreshTtl", op.refreshTtl),
  };
}

function checkListing(op: Record<string, unknown>): CheckedListing {
  const listing: NamespaceListing = {
    maxDepth: assertMaxDepth(op.maxDepth),
    limit: assertPageNumber("limit", op.limit, DEFAULT_LIST_LIMIT, MAX_PAGE_LIMIT),
    offset: assertPageNumber("offset", op.offset, 0, MAX_PAGE_OFFSET),
  };
  const conditions = op.matchConditions;
  if (conditions === undefined || conditions === null) return { kind: "list", listing };
  if (!Array.isArray(conditions)) {
    fail("matchConditions", `expected an array, got ${describeStoreInput(conditions)}`);
  }
  conditions.forEach((condition: unknown, index) => {
    const field = `matchConditions[${index}]`;
    const { matchType, path } = (condition ?? {}) as { matchType?: unknown; path?: unknown };
    if (matchType !== "prefix" && matchType !== "suffix") {
      fail(
        `${field}.matchType`,
        `expected "prefix" or "suffix", got ${describeStoreInput(matchType)}`,
      );
    }
    if (listing[matchType] !== undefined) {
      fail(field, `expected at most one ${matchType} condition, got several`);
    }
    const labels = assertStoreNamespace(`${field}.path`, path, {
      allowEmpty: true,
      allowReservedRoot: true,
      allowWildcard: true,
    });
    if (matchType === "prefix") assertPrefixFits(`${field}.path`, labels);
    listing[matchType] = labels;
  });
  return { kind: "list", listing };
}

/** A prefix whose keys would pass the sort-key limit can match nothing; DynamoDB would refuse its Query. */
function assertPrefixFits(field: string, prefix: readonly string[]): void {
  const bytes = Buffer.byteLength(storeNamespacePrefix(prefix));
  if (bytes > MAX_SORT_KEY_BYTES) {
    fail(field, `expected a prefix of at most ${MAX_SORT_KEY_BYTES} bytes as a key, got ${bytes}`);
  }
}
