import type { BaseStore, Item, MatchCondition, SearchItem } from "@langchain/langgraph-checkpoint";
// The store's modules, not its package entry: that one also exports the DynamoDB store, and a handler on an
// in-memory checkpointer never loads the AWS SDK.
import {
  DEFAULT_LIST_LIMIT,
  DEFAULT_SEARCH_LIMIT,
  type StoreGetOperation,
  type StorePutOperation,
  type StoreSearchOperation,
} from "../../store/operations";
import { MAX_PAGE_LIMIT, MAX_PAGE_OFFSET, RESERVED_ROOT_LABEL } from "../../store/validation";
import { InvalidRequestError, StoreRequiredError } from "../../shared/errors";
import { describe, describeValue, json, noContent } from "./http";
import {
  integerField,
  objectField,
  optionalString,
  type RouteContext,
  type RouteHandler,
} from "./route-context";

/**
 * The long-term memory store on the LangGraph Server face (`client.store.*` of `@langchain/langgraph-sdk`), each
 * route on the caller's tenant's store: another tenant's items, under the same namespaces, are out of reach. The
 * request's shape is checked here (422) and the store checks the rest before anything is read or written
 * (InvalidStoreOperationError, 422); an item answers with `created_at`/`updated_at` as ISO strings.
 */

export const putStoreItem: RouteHandler = async (context) => {
  const { body } = context;
  const put: StorePutOperation = {
    namespace: namespaceField(body.namespace, "namespace", { forPut: true }),
    key: keyField(body.key),
    value: valueField(body.value),
    index: indexField(body.index),
    ttl: ttlField(body.ttl),
  };
  await storeOf(context, "Writing to the store").batch([put]);
  return noContent();
};

export const getStoreItem: RouteHandler = async (context) => {
  const { query } = context;
  // The SDK sends the namespace's labels joined with "." (labels never contain one).
  const namespace = query.namespace ? query.namespace.split(".") : [];
  const get: StoreGetOperation = {
    namespace: namespaceField(namespace, "namespace"),
    key: keyField(query.key),
    refreshTtl: booleanQuery("refresh_ttl", query.refresh_ttl),
  };
  const [item] = await storeOf(context, "Reading the store").batch([get]);
  return json(200, item ? itemJson(item) : null);
};

export const deleteStoreItem: RouteHandler = async (context) => {
  const { body } = context;
  const namespace = namespaceField(body.namespace ?? [], "namespace");
  const key = keyField(body.key);
  await storeOf(context, "Deleting from the store").batch([{ namespace, key, value: null }]);
  return noContent();
};

export const searchStoreItems: RouteHandler = async (context) => {
  const { body } = context;
  const search: StoreSearchOperation = {
    namespacePrefix: namespaceField(body.namespace_prefix, "namespace_prefix", {
      allowEmpty: true,
    }),
    filter: objectField(body, "filter"),
    limit: integerField(body, "limit", DEFAULT_SEARCH_LIMIT, 0, MAX_PAGE_LIMIT),
    offset: integerField(body, "offset", 0, 0, MAX_PAGE_OFFSET),
    query: optionalString(body, "query"),
    refreshTtl: optionalBoolean(body, "refresh_ttl"),
  };
  const [items] = await storeOf(context, "Searching the store").batch([search]);
  return json(200, { items: (items ?? []).map(itemJson) });
};

export const listStoreNamespaces: RouteHandler = async (context) => {
  const { body } = context;
  const matchConditions: MatchCondition[] = [];
  for (const matchType of ["prefix", "suffix"] as const) {
    if (body[matchType] === undefined || body[matchType] === null) continue;
    // "*" matches any one label here; the store reads it so.
    const path = namespaceField(body[matchType], matchType, { allowEmpty: true });
    matchConditions.push({ matchType, path });
  }
  const [namespaces] = await storeOf(context, "Listing the store's namespaces").batch([
    {
      matchConditions,
      maxDepth: maxDepthField(body.max_depth),
      limit: integerField(body, "limit", DEFAULT_LIST_LIMIT, 0, MAX_PAGE_LIMIT),
      offset: integerField(body, "offset", 0, 0, MAX_PAGE_OFFSET),
    },
  ]);
  return json(200, { namespaces });
};

export const STORE_HANDLERS: Readonly<Record<string, RouteHandler>> = {
  "PUT /store/items": putStoreItem,
  "GET /store/items": getStoreItem,
  "DELETE /store/items": deleteStoreItem,
  "POST /store/items/search": searchStoreItems,
  "POST /store/namespaces": listStoreNamespaces,
};

/** The caller's tenant's store; 400 when the handler has none, as a stateless handler answers stateful routes. */
function storeOf(context: RouteContext, what: string): BaseStore {
  const store = context.engine.tenantStore(context.tenantId);
  if (!store) {
    throw new StoreRequiredError(what);
  }
  return store;
}

/** An item as LangGraph Server writes it: its fields, and the times as `created_at`/`updated_at` ISO strings. */
function itemJson(item: Item | SearchItem): Record<string, unknown> {
  const { createdAt, updatedAt, ...fields } = item;
  return { ...fields, created_at: isoTime(createdAt), updated_at: isoTime(updatedAt) };
}

function isoTime(value: Date | string | number): string {
  return new Date(value).toISOString();
}

/**
 * Namespace labels by LangGraph's rules as LangGraph Server checks them (non-empty strings without "."; a put's
 * root label is not LangGraph's own); the store checks the rest (length, characters, key size).
 */
function namespaceField(
  value: unknown,
  field: string,
  rules: { allowEmpty?: boolean; forPut?: boolean } = {},
): string[] {
  if (!Array.isArray(value)) {
    throw new InvalidRequestError(field, `expected an array of strings, got ${describe(value)}`);
  }
  if (value.length === 0 && !rules.allowEmpty) {
    throw new InvalidRequestError(field, `expected at least one label, got an empty array`);
  }
  value.forEach((label: unknown, index) => {
    if (typeof label !== "string" || label === "" || label.includes(".")) {
      throw new InvalidRequestError(
        `${field}[${index}]`,
        `expected a non-empty string without ".", got ${typeof label === "string" ? (label === "" ? "an empty string" : 'a string with "."') : describe(label)}`,
      );
    }
  });
  if (rules.forPut && value[0] === RESERVED_ROOT_LABEL) {
    throw new InvalidRequestError(
      field,
      `expected a root label other than "${RESERVED_ROOT_LABEL}" (reserved by LangGraph)`,
    );
  }
  return value as string[];
}

function keyField(value: unknown): string {
  if (typeof value !== "string" || value === "") {
    throw new InvalidRequestError(
      "key",
      `expected a non-empty string, got ${value === "" ? "an empty string" : describe(value)}`,
    );
  }
  return value;
}

function valueField(value: unknown): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidRequestError("value", `expected an object, got ${describe(value)}`);
  }
  return value as Record<string, unknown>;
}

/** A put's `index`: false (embed nothing), field paths, or absent/null (the store's own fields). */
function indexField(value: unknown): false | string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === false) return false;
  if (Array.isArray(value) && value.every((path) => typeof path === "string")) {
    return value as string[];
  }
  throw new InvalidRequestError(
    "index",
    `expected false, null or an array of field paths, got ${describeValue(value)}`,
  );
}

/** A put's `ttl` in minutes; null: never expires; absent: the store's default. The store checks its range. */
function ttlField(value: unknown): number | null | undefined {
  if (value === undefined || value === null || typeof value === "number") return value;
  throw new InvalidRequestError(
    "ttl",
    `expected a number of minutes or null, got ${describeValue(value)}`,
  );
}

function maxDepthField(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw new InvalidRequestError(
      "max_depth",
      `expected a positive integer, got ${describeValue(value)}`,
    );
  }
  return value;
}

function optionalBoolean(body: Record<string, unknown>, field: string): boolean | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") {
    throw new InvalidRequestError(field, `expected a boolean, got ${describeValue(value)}`);
  }
  return value;
}

/** A boolean query parameter as the SDK writes it (`true`/`false`); absent: undefined. */
function booleanQuery(field: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === "true") return true;
  if (value === "false") return false;
  throw new InvalidRequestError(field, `expected true or false, got ${describeValue(value)}`);
}
