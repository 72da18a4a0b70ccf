import type {
  BaseStore,
  Item,
  ListNamespacesOperation,
  SearchItem,
} from "@langchain/langgraph-checkpoint";
import { AuthRefusedError, InvalidRequestError } from "../../shared/errors";
import type {
  StoreGetOperation,
  StorePutOperation,
  StoreSearchOperation,
} from "../../store/operations";
import { allows, currentAccess, type AuthDecision } from "./request-access";

/**
 * The long-term store's routes under the request's `store:*` handlers, as LangGraph Server applies them: a
 * handler may rewrite the namespace (and the key, and a put's value), and its filters are matched against an
 * item's value with its `namespace` and `key` beside it. An item the filters exclude is a missing one (404 for a
 * change of it, null for a read); writing one the filters would exclude is 403. A search or a namespace listing
 * passes over excluded items inside its own read loop, page by page of the store's results, so a page of N holds N
 * allowed items when they exist. Outside a request, or with no handler, the store's own operations.
 */

/** Store results a filtered search reads per store call. */
export const FILTERED_SCAN_PAGE = 1_000;
/** Store results a filtered search reads at most before it is refused (422): narrow the namespace. */
export const FILTERED_SCAN_LIMIT = 10_000;

type ItemDecision = AuthDecision<Record<string, unknown>>;

function itemAllowed(
  decision: ItemDecision,
  namespace: readonly string[],
  key?: string,
  value?: Record<string, unknown> | null,
): boolean {
  return allows(decision, { ...(value ?? {}), namespace, ...(key === undefined ? {} : { key }) });
}

function namespaceOf(decision: ItemDecision, fallback: string[]): string[] {
  const namespace = decision.value.namespace;
  return Array.isArray(namespace) && namespace.every((label) => typeof label === "string")
    ? (namespace as string[])
    : fallback;
}

function keyOf(decision: ItemDecision, fallback: string): string {
  return typeof decision.value.key === "string" ? decision.value.key : fallback;
}

export async function authorizedPut(store: BaseStore, op: StorePutOperation): Promise<void> {
  const access = currentAccess();
  if (access) {
    const decision = await access.decide("store:put", {
      namespace: op.namespace,
      key: op.key,
      value: op.value,
    });
    const namespace = namespaceOf(decision, op.namespace);
    const key = keyOf(decision, op.key);
    const value = (decision.value.value as Record<string, unknown> | null | undefined) ?? op.value;
    if (decision.pattern) {
      const existing = await store.get(namespace, key);
      if (existing && !itemAllowed(decision, existing.namespace, existing.key, existing.value)) {
        throw new AuthRefusedError(404, "Item not found");
      }
      if (!itemAllowed(decision, namespace, key, value)) {
        throw new AuthRefusedError(403, "Forbidden: the auth handlers exclude this item");
      }
    }
    op = { ...op, namespace, key, value };
  }
  await store.batch([op]);
}

export async function authorizedGet(store: BaseStore, op: StoreGetOperation): Promise<Item | null> {
  const access = currentAccess();
  if (!access) return (await store.batch([op]))[0] ?? null;
  const decision = await access.decide("store:get", { namespace: op.namespace, key: op.key });
  const namespace = namespaceOf(decision, op.namespace);
  const key = keyOf(decision, op.key);
  const [item] = await store.batch([{ ...op, namespace, key }]);
  if (!item) return null;
  return itemAllowed(decision, item.namespace, item.key, item.value) ? item : null;
}

export async function authorizedDelete(
  store: BaseStore,
  op: { namespace: string[]; key: string },
): Promise<void> {
  const access = currentAccess();
  let { namespace, key } = op;
  if (access) {
    const decision = await access.decide("store:delete", { namespace, key });
    namespace = namespaceOf(decision, namespace);
    key = keyOf(decision, key);
    if (decision.pattern) {
      const existing = await store.get(namespace, key);
      if (existing && !itemAllowed(decision, existing.namespace, existing.key, existing.value)) {
        throw new AuthRefusedError(404, "Item not found");
      }
      if (!existing && !itemAllowed(decision, namespace, key)) {
        throw new AuthRefusedError(403, "Forbidden: the auth handlers exclude this item");
      }
    }
  }
  await store.batch([{ namespace, key, value: null }]);
}

export async function authorizedSearch(
  store: BaseStore,
  op: StoreSearchOperation,
): Promise<SearchItem[]> {
  const access = currentAccess();
  if (!access) return (await store.batch([op]))[0] ?? [];
  const decision = await access.decide("store:search", {
    namespace: op.namespacePrefix,
    filter: op.filter ?? null,
    limit: op.limit ?? null,
    offset: op.offset ?? null,
    query: op.query ?? null,
  });
  const search = { ...op, namespacePrefix: namespaceOf(decision, op.namespacePrefix) };
  if (!decision.pattern) return (await store.batch([search]))[0] ?? [];
  return collectAllowed(
    search.offset ?? 0,
    search.limit ?? 10,
    async (offset, limit) => {
      const [page] = await store.batch([{ ...search, offset, limit }]);
      return page ?? [];
    },
    (item) => itemAllowed(decision, item.namespace, item.key, item.value),
  );
}

export async function authorizedListNamespaces(
  store: BaseStore,
  op: ListNamespacesOperation,
): Promise<string[][]> {
  const access = currentAccess();
  if (!access) return (await store.batch([op]))[0] ?? [];
  const condition = (type: "prefix" | "suffix") =>
    op.matchConditions?.find((match) => match.matchType === type)?.path;
  const decision = await access.decide("store:list_namespaces", {
    namespace: condition("prefix") ?? null,
    suffix: condition("suffix") ?? null,
    max_depth: op.maxDepth ?? null,
    limit: op.limit,
    offset: op.offset,
  });
  const prefix = decision.value.namespace;
  const list: ListNamespacesOperation = Array.isArray(prefix)
    ? {
        ...op,
        matchConditions: [
          ...(op.matchConditions ?? []).filter((match) => match.matchType !== "prefix"),
          { matchType: "prefix", path: prefix as string[] },
        ],
      }
    : op;
  if (!decision.pattern) return (await store.batch([list]))[0] ?? [];
  return collectAllowed(
    op.offset,
    op.limit,
    async (offset, limit) => {
      const [page] = await store.batch([{ ...list, offset, limit }]);
      return page ?? [];
    },
    (namespace) => itemAllowed(decision, namespace),
  );
}

/** Reads the store's results page by page until `offset + limit` pass `allowed`; at most FILTERED_SCAN_LIMIT. */
async function collectAllowed<T>(
  offset: number,
  limit: number,
  read: (offset: number, limit: number) => Promise<T[]>,
  allowed: (result: T) => boolean,
): Promise<T[]> {
  const wanted = offset + limit;
  const matches: T[] = [];
  let scanned = 0;
  while (matches.length < wanted) {
    if (scanned >= FILTERED_SCAN_LIMIT) {
      throw new InvalidRequestError(
        "namespace",
        `the auth handlers' filters would read more than ${FILTERED_SCAN_LIMIT} store results; narrow the namespace`,
      );
    }
    const page = await read(scanned, Math.min(FILTERED_SCAN_PAGE, FILTERED_SCAN_LIMIT - scanned));
    scanned += page.length;
    matches.push(...page.filter(allowed));
    if (page.length < FILTERED_SCAN_PAGE) break;
  }
  return matches.slice(offset, wanted);
}
