/**
 * `memory-table/store`: LangGraph's long-term memory store (`BaseStore`) on the Memory Table table, and its
 * bounded in-memory twin for the dev server and tests. Both are bound to one tenant and behave alike.
 */
export { DynamoDBStore } from "./dynamodb-store";
export type { DynamoDBStoreOptions } from "./dynamodb-store-options";
export { BoundedInMemoryStore, type BoundedInMemoryStoreOptions } from "./bounded-in-memory-store";
export type { InMemoryStoreStats, StorePurgeResult } from "./bounded-item-store";
export type { InMemoryStoreConfig } from "./in-memory-store-config";
export type { StoreListNamespacesOptions, StoreSearchOptions } from "./tenant-store";
export type { StoreTtlConfig } from "./item-ttl";
export type { StoreIndexConfig } from "./semantic-index";
