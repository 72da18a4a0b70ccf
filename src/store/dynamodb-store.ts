import { StoreItems } from "../table/store-items";
import { DynamoDBStoreBackend } from "./dynamodb-store-backend";
import { resolveStoreOptions, type DynamoDBStoreOptions } from "./dynamodb-store-options";
import type { StoreBackend } from "./store-backend";
import { TenantStore, type StoreSettings } from "./tenant-store";

/**
 * LangGraph's long-term memory store (`BaseStore`) on the Memory Table table, bound to one tenant: every key
 * starts with the tenant, so another tenant's store cannot read, list, search or delete these items even with
 * the same namespaces. Create one per request with the tenant from the verified JWT; share the table context
 * (or the DynamoDB client) per container. Pass it to `compile({ store })`; graphs read it from `config.store`.
 *
 * Semantics (shared with BoundedInMemoryStore): LangGraph's InMemoryStore's, with the differences the modules
 * name: results in key order, deep-equality filters without type coercion, values stored as JSON, per-item TTL.
 */
export class DynamoDBStore extends TenantStore {
  readonly tenantId: string;
  protected readonly backend: StoreBackend;
  protected readonly settings: StoreSettings;

  constructor(options: DynamoDBStoreOptions) {
    super();
    const resolved = resolveStoreOptions(options);
    this.tenantId = resolved.tenantId;
    this.settings = {
      ttl: resolved.ttl,
      index: resolved.index,
      maxValueBytes: resolved.maxValueBytes,
      now: resolved.table.now,
    };
    this.backend = new DynamoDBStoreBackend(
      new StoreItems(resolved.table.client),
      resolved.tenantId,
      resolved.index?.dims,
    );
  }
}
