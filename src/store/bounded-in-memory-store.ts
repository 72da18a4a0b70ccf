import { InvalidConfigurationError } from "../shared/errors";
import { assertTenantId } from "../shared/identifiers";
import {
  BoundedItemStore,
  type InMemoryStoreStats,
  type StorePurgeResult,
} from "./bounded-item-store";
import { resolveInMemoryStoreConfig, type InMemoryStoreConfig } from "./in-memory-store-config";
import { StoreTtlPolicy, type StoreTtlConfig } from "./item-ttl";
import { SemanticIndex, type StoreIndexConfig } from "./semantic-index";
import type { StoreBackend } from "./store-backend";
import { TenantStore, type StoreSettings } from "./tenant-store";
import { describeStoreInput } from "./validation";

export interface BoundedInMemoryStoreOptions {
  /** Guardrails; every field optional (see {@link InMemoryStoreConfig} for the defaults). */
  config?: InMemoryStoreConfig;
  /** Per-item TTL: `defaultTtl` in minutes (default none) and `refreshOnRead` (default true). */
  ttl?: StoreTtlConfig;
  /** Semantic search: `{dims, embeddings, fields, maxCandidates}` (default none). */
  index?: StoreIndexConfig;
  /** Clock in epoch milliseconds for every TTL (default `Date.now`); tests inject one instead of sleeping. */
  now?: () => number;
}

const KNOWN_OPTIONS = new Set(["config", "ttl", "index", "now"]);

/** What the store and its tenant views share. */
interface SharedStorage {
  storage: BoundedItemStore;
  settings: StoreSettings;
}

// A tenant view is built with the storage of the store it comes from; the key cannot be named outside.
const TENANT_VIEW = Symbol("tenant view");
type ViewOptions = BoundedInMemoryStoreOptions & {
  [TENANT_VIEW]?: { shared: SharedStorage; tenantId: string };
};

/**
 * LangGraph's long-term memory store kept in process memory, with guardrails (idle TTL, item and byte caps,
 * value size; see {@link InMemoryStoreConfig}), for the dev server and tests. It behaves as DynamoDBStore does:
 * the same checks, filters, order, TTL rules and batch semantics (both run one shared behaviour suite).
 *
 * The instance itself is one tenant's store (an unnamed tenant of its own); `forTenant(id)` gives another
 * tenant's store on the same storage and guardrails, which never sees this one's items. State lives as long as
 * the process.
 */
export class BoundedInMemoryStore extends TenantStore {
  readonly tenantId: string;
  protected readonly backend: StoreBackend;
  protected readonly settings: StoreSettings;
  private readonly shared: SharedStorage;

  constructor(options: BoundedInMemoryStoreOptions = {}) {
    super();
    const view = (options as ViewOptions | null)?.[TENANT_VIEW];
    this.shared = view?.shared ?? createStorage(options);
    this.tenantId = view?.tenantId ?? "";
    this.settings = this.shared.settings;
    this.backend = this.shared.storage.backendFor(this.tenantId);
  }

  /** The store of `tenantId` on the same storage: its own items only, the same guardrails and settings. */
  forTenant(tenantId: string): BoundedInMemoryStore {
    const options: ViewOptions = {
      [TENANT_VIEW]: { shared: this.shared, tenantId: assertTenantId(tenantId) },
    };
    return new BoundedInMemoryStore(options);
  }

  /** Counts of what is stored (all tenants) and of every expiry and refusal so far. */
  stats(): InMemoryStoreStats {
    return this.shared.storage.stats();
  }

  /** Removes every idle or expired item now (all tenants) and says how much went. */
  purgeExpired(): StorePurgeResult {
    return this.shared.storage.purgeExpired();
  }
}

function createStorage(options: BoundedInMemoryStoreOptions): SharedStorage {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new InvalidConfigurationError(
      "options",
      `expected an object, got ${describeStoreInput(options)}`,
    );
  }
  for (const name of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(name)) {
      throw new InvalidConfigurationError(
        name,
        `expected one of ${[...KNOWN_OPTIONS].join(", ")}, got an unknown option`,
      );
    }
  }
  if (options.now !== undefined && typeof options.now !== "function") {
    throw new InvalidConfigurationError(
      "now",
      `expected a function, got ${describeStoreInput(options.now)}`,
    );
  }
  const config = resolveInMemoryStoreConfig(options.config);
  const now = options.now ?? Date.now;
  return {
    storage: new BoundedItemStore(config, now),
    settings: {
      ttl: new StoreTtlPolicy(options.ttl),
      index: options.index === undefined ? undefined : new SemanticIndex(options.index),
      maxValueBytes: config.maxValueBytes,
      now,
    },
  };
}
