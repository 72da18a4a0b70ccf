import type { BaseStore } from "@langchain/langgraph-checkpoint";
import { InvalidConfigurationError } from "../shared/errors";
import { BoundedInMemoryStore } from "../store/bounded-in-memory-store";
import { TenantStore } from "../store/tenant-store";
import type { TableBacking } from "./table-backing";
import type { StoreOption } from "./types";

/**
 * The tenant's store for each request, checked: a TenantStore must be bound to the caller's tenant, and any
 * other store must not be one already given for another tenant (one instance would show each tenant's items to
 * the other). Undefined for `store: false`.
 */
export function resolveStore(
  option: StoreOption | undefined,
  table: TableBacking | undefined,
): ((tenantId: string) => BaseStore) | undefined {
  if (option === false) return undefined;
  if (option === undefined) {
    if (table) return table.storeFor;
    // State lives as long as the container: the dev server's and tests' store, bounded by its guardrails.
    const memory = new BoundedInMemoryStore();
    return (tenantId) => memory.forTenant(tenantId);
  }
  if (typeof option !== "function") {
    const got = isStore(option)
      ? "a store instance (one instance would be every tenant's: give (tenantId) => store)"
      : `a ${option === null ? "null" : typeof option}`;
    throw new InvalidConfigurationError(
      "store",
      `expected a function (tenantId) => store, or false, got ${got}`,
    );
  }
  const tenantOf = new WeakMap<BaseStore, string>();
  return (tenantId) => {
    const store: unknown = option(tenantId);
    if (!isStore(store)) {
      throw new InvalidConfigurationError(
        "store",
        `expected the function to return a LangGraph store (BaseStore) for tenant ${tenantId}, got ${store === null ? "null" : typeof store}`,
      );
    }
    if (store instanceof TenantStore) {
      if (store.tenantId !== tenantId) {
        throw new InvalidConfigurationError(
          "store",
          // The other tenant's id stays out: a graph's error message reaches the caller.
          `expected the store for tenant ${tenantId}, got one bound to ${store.tenantId === "" ? "no named tenant (give memoryStore.forTenant(tenantId))" : "another tenant"}`,
        );
      }
      return store;
    }
    const previous = tenantOf.get(store);
    if (previous !== undefined && previous !== tenantId) {
      throw new InvalidConfigurationError(
        "store",
        `expected a store per tenant, got for tenant ${tenantId} the store already given for another tenant`,
      );
    }
    tenantOf.set(store, tenantId);
    return store;
  };
}

/** Duck-typed: a project may load its own copy of LangGraph's classes. */
function isStore(value: unknown): value is BaseStore {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { batch?: unknown }).batch === "function"
  );
}
