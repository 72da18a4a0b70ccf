/**
 * `memory-table/store`: LangGraph's long-term memory store (`BaseStore`) on the Memory Table table, and its
 * bounded in-memory twin for the dev server and tests. Both are bound to one tenant and behave alike.
 */
export { DynamoDBStore } from "./dynamodb-store";
export type { DynamoDBStoreOptions } from "./dynamodb-store-options";
export { BoundedInMemoryStore, type BoundedInMemoryStoreOptions } from "./bounded-in-memory-store";
export type { InMemoryStoreStats, StorePurgeResult } from "./bounded-item-store";
export {
  DEFAULT_IN_MEMORY_STORE_CONFIG,
  resolveInMemoryStoreConfig,
  type InMemoryStoreConfig,
} from "./in-memory-store-config";
export {
  TenantStore,
  type StoreListNamespacesOptions,
  type StoreSearchOptions,
} from "./tenant-store";
export type { StoreTtlConfig } from "./item-ttl";
export { DEFAULT_MAX_CANDIDATES, type StoreIndexConfig } from "./semantic-index";
export type {
  StoreGetOperation,
  StoreOperation,
  StorePutOperation,
  StoreSearchOperation,
} from "./operations";
export { DEFAULT_LIST_LIMIT, DEFAULT_SEARCH_LIMIT } from "./operations";
export {
  MAX_PAGE_LIMIT,
  MAX_PAGE_OFFSET,
  MAX_TTL_MINUTES,
  NAMESPACE_WILDCARD,
  RESERVED_ROOT_LABEL,
} from "./validation";
export { DEFAULT_MAX_VALUE_BYTES, MAX_ITEM_PAYLOAD_BYTES, MAX_VALUE_BYTES } from "./value-json";
export { WALK_FIRST_PAGE, WALK_MAX_PAGE } from "./dynamodb-store-backend";
