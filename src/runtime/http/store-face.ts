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
import { StoreRequiredError } from "../../shared/errors";
import {
  authorizedDelete,
  authorizedGet,
  authorizedListNamespaces,
  authorizedPut,
  authorizedSearch,
} from "../auth/authorized-store";
import { json, noContent } from "./http";
import type { RouteContext, RouteHandler } from "./route-context";
import { parseRequest } from "./schemas/request-schema";
import {
  storeDeleteSchema,
  storeGetQuery,
  storeNamespacesSchema,
  storePutSchema,
  storeSearchSchema,
} from "./schemas/store-schemas";

/**
 * The long-term memory store on the LangGraph Server face (`client.store.*` of `@langchain/langgraph-sdk`), each
 * route on the caller's tenant's store: another tenant's items, under the same namespaces, are out of reach. The
 * request's shape is checked by its schema (schemas/store-schemas.ts, 422) and the store checks the rest before
 * anything is read or written (InvalidStoreOperationError, 422); an item answers with `created_at`/`updated_at`
 * as ISO strings. The project's `store:*` auth handlers apply through auth/authorized-store.ts.
 */

export const putStoreItem: RouteHandler = async (context) => {
  const body = parseRequest(storePutSchema, context.body);
  const put: StorePutOperation = {
    namespace: body.namespace,
    key: body.key,
    value: body.value,
    index: body.index,
    ttl: body.ttl,
  };
  await authorizedPut(storeOf(context, "Writing to the store"), put);
  return noContent();
};

export const getStoreItem: RouteHandler = async (context) => {
  const query = parseRequest(storeGetQuery, context.query);
  const get: StoreGetOperation = {
    namespace: query.namespace,
    key: query.key,
    refreshTtl: query.refresh_ttl,
  };
  const item = await authorizedGet(storeOf(context, "Reading the store"), get);
  return json(200, item ? itemJson(item) : null);
};

export const deleteStoreItem: RouteHandler = async (context) => {
  const { namespace, key } = parseRequest(storeDeleteSchema, context.body);
  await authorizedDelete(storeOf(context, "Deleting from the store"), { namespace, key });
  return noContent();
};

export const searchStoreItems: RouteHandler = async (context) => {
  const body = parseRequest(storeSearchSchema, context.body);
  const search: StoreSearchOperation = {
    namespacePrefix: body.namespace_prefix,
    filter: body.filter,
    limit: body.limit ?? DEFAULT_SEARCH_LIMIT,
    offset: body.offset ?? 0,
    query: body.query,
    refreshTtl: body.refresh_ttl,
  };
  const items = await authorizedSearch(storeOf(context, "Searching the store"), search);
  return json(200, { items: items.map(itemJson) });
};

export const listStoreNamespaces: RouteHandler = async (context) => {
  const body = parseRequest(storeNamespacesSchema, context.body);
  const matchConditions: MatchCondition[] = [];
  for (const matchType of ["prefix", "suffix"] as const) {
    // "*" matches any one label here; the store reads it so.
    const path = body[matchType];
    if (path !== undefined) matchConditions.push({ matchType, path });
  }
  const namespaces = await authorizedListNamespaces(
    storeOf(context, "Listing the store's namespaces"),
    {
      matchConditions,
      maxDepth: body.max_depth,
      limit: body.limit ?? DEFAULT_LIST_LIMIT,
      offset: body.offset ?? 0,
    },
  );
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
