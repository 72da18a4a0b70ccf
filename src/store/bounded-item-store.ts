import { StoreCapacityError, type StoreCapacityLimit } from "../shared/errors";
import { compareCodePoints } from "../shared/order";
import { isExpired } from "../table/expiry";
import { storeItemSortKey, storeNamespacePrefix } from "../table/keys";
import type { ItemExpiry } from "./item-ttl";
import type { ResolvedInMemoryStoreConfig } from "./in-memory-store-config";
import {
  compareNamespaces,
  isUnder,
  type NamespaceCollector,
  type StoreAddress,
} from "./namespaces";
import { vectorBytes } from "./semantic-index";
import type { ExpiryRenewal, PreparedWrite, StoreBackend, StoredItem } from "./store-backend";
import { parseStoreValue } from "./value-json";

export interface InMemoryStoreStats {
  items: number;
  /** Bytes of every item's JSON, vectors and key. */
  totalBytes: number;
  /** Items removed: idle longer than `idleTtlSeconds`, or past their own TTL. */
  expirations: { idle: number; ttl: number };
  /** Writes refused, by the limit they would have passed. */
  rejections: Record<StoreCapacityLimit, number>;
}

export interface StorePurgeResult {
  items: number;
  bytes: number;
}

/** One stored item (exported for the types of the storage's methods only). */
export interface InMemoryStoreEntry {
  readonly id: string;
  readonly tenant: string;
  /** The item's key in DynamoDB's layout: ordering by it is DynamoDBStore's order. */
  readonly sk: string;
  readonly namespace: string[];
  readonly key: string;
  json: string;
  vectors: Float32Array[];
  bytes: number;
  createdAt: number;
  updatedAt: number;
  expiry: ItemExpiry | undefined;
  lastUsedAt: number;
}

/**
 * The bounded in-memory store's storage, shared by the store's tenant views, and every guardrail on it. Methods
 * are synchronous: a check and its change cannot interleave with another call. Items sit in a Map in
 * least-recently-used order, so idle expiry takes them from its front without scanning.
 */
export class BoundedItemStore {
  private readonly entries = new Map<string, InMemoryStoreEntry>();
  private readonly byTenant = new Map<string, Map<string, InMemoryStoreEntry>>();
  private readonly idleTtlMs: number;
  private totalBytes = 0;
  private readonly expirations = { idle: 0, ttl: 0 };
  private readonly rejections: Record<StoreCapacityLimit, number> = {
    maxItems: 0,
    maxTotalBytes: 0,
  };

  constructor(
    readonly limits: Readonly<ResolvedInMemoryStoreConfig>,
    private readonly now: () => number,
  ) {
    this.idleTtlMs = limits.idleTtlSeconds * 1000;
  }

  /** The storage seen by one tenant, as a store backend. */
  backendFor(tenant: string): StoreBackend {
    return new TenantView(this, tenant);
  }

  read(tenant: string, address: StoreAddress, nowMs: number): StoredItem | undefined {
    this.expireIdle(nowMs);
    const entry = this.liveEntry(tenant, storeItemSortKey(address.namespace, address.key), nowMs);
    if (!entry) return undefined;
    this.touch(entry, nowMs);
    return toStoredItem(entry);
  }

  /** Live entries of a tenant under a namespace prefix, in key order (a snapshot: later writes do not show). */
  range(tenant: string, prefix: readonly string[], nowMs: number): InMemoryStoreEntry[] {
    this.expireIdle(nowMs);
    const start = storeNamespacePrefix(prefix);
    const found: InMemoryStoreEntry[] = [];
    for (const entry of this.byTenant.get(tenant)?.values() ?? []) {
      if (!entry.sk.startsWith(start)) continue;
      if (isExpired(entry.expiry?.expiresAt, nowMs)) this.expire(entry);
      else found.push(entry);
    }
    return found.sort((a, b) => compareCodePoints(a.sk, b.sk));
  }

  use(entry: InMemoryStoreEntry, nowMs: number): StoredItem | undefined {
    if (!this.entries.has(entry.id) || isExpired(entry.expiry?.expiresAt, nowMs)) return undefined;
    this.touch(entry, nowMs);
    return toStoredItem(entry);
  }

  /** Applies a step's writes, all or none: the limits are checked on the result before anything changes. */
  write(tenant: string, writes: readonly PreparedWrite[], nowMs: number): void {
    this.expireIdle(nowMs);
    const tenantEntries = this.byTenant.get(tenant);
    let itemDelta = 0;
    let byteDelta = 0;
    for (const write of writes) {
      const current = tenantEntries?.get(storeItemSortKey(write.namespace, write.key));
      const live = current && !isExpired(current.expiry?.expiresAt, nowMs) ? current : undefined;
      if (current && !live) this.expire(current);
      const bytes = write.kind === "put" ? entryBytes(write) : 0;
      itemDelta += (write.kind === "put" ? 1 : 0) - (live ? 1 : 0);
      byteDelta += bytes - (live?.bytes ?? 0);
    }
    if (itemDelta > 0 && this.entries.size + itemDelta > this.limits.maxItems) {
      this.purgeExpired();
      if (this.entries.size + itemDelta > this.limits.maxItems) {
        this.reject("maxItems", this.entries.size + itemDelta);
      }
    }
    if (byteDelta > 0 && this.totalBytes + byteDelta > this.limits.maxTotalBytes) {
      this.purgeExpired();
      if (this.totalBytes + byteDelta > this.limits.maxTotalBytes) {
        this.reject("maxTotalBytes", this.totalBytes + byteDelta);
      }
    }
    // Nothing below throws: the checks above are the only way out without a change.
    for (const write of writes) {
      const sk = storeItemSortKey(write.namespace, write.key);
      const current = this.byTenant.get(tenant)?.get(sk);
      if (write.kind === "delete") {
        if (current) this.remove(current);
        continue;
      }
      const bytes = entryBytes(write);
      if (current) {
        this.totalBytes += bytes - current.bytes;
        Object.assign(current, {
          json: write.json,
          vectors: write.vectors,
          bytes,
          updatedAt: nowMs,
          expiry: write.expiry,
        });
        this.touch(current, nowMs);
        continue;
      }
      const entry: InMemoryStoreEntry = {
        id: `${tenant}\u0000${sk}`,
        tenant,
        sk,
        namespace: [...write.namespace],
        key: write.key,
        json: write.json,
        vectors: write.vectors,
        bytes,
        createdAt: nowMs,
        updatedAt: nowMs,
        expiry: write.expiry,
        lastUsedAt: nowMs,
      };
      this.entries.set(entry.id, entry);
      let entries = this.byTenant.get(tenant);
      if (!entries) this.byTenant.set(tenant, (entries = new Map()));
      entries.set(sk, entry);
      this.totalBytes += bytes;
    }
  }

  renew(tenant: string, renewal: ExpiryRenewal): void {
    const entry = this.byTenant.get(tenant)?.get(storeItemSortKey(renewal.namespace, renewal.key));
    if (
      entry?.expiry?.expiresAt === renewal.read.expiresAt &&
      entry.expiry.ttlMinutes === renewal.read.ttlMinutes
    ) {
      entry.expiry = { ...entry.expiry, expiresAt: renewal.expiresAt };
    }
  }

  /** Removes every item idle longer than the idle TTL or past its own TTL now; scans every item. */
  purgeExpired(): StorePurgeResult {
    const nowMs = this.now();
    const result: StorePurgeResult = { items: 0, bytes: 0 };
    for (const entry of this.entries.values()) {
      const idle = nowMs - entry.lastUsedAt >= this.idleTtlMs;
      if (!idle && !isExpired(entry.expiry?.expiresAt, nowMs)) continue;
      result.items += 1;
      result.bytes += entry.bytes;
      if (idle) {
        this.remove(entry);
        this.expirations.idle += 1;
      } else {
        this.expire(entry);
      }
    }
    return result;
  }

  stats(): InMemoryStoreStats {
    return {
      items: this.entries.size,
      totalBytes: this.totalBytes,
      expirations: { ...this.expirations },
      rejections: { ...this.rejections },
    };
  }

  private liveEntry(tenant: string, sk: string, nowMs: number): InMemoryStoreEntry | undefined {
    const entry = this.byTenant.get(tenant)?.get(sk);
    if (entry && isExpired(entry.expiry?.expiresAt, nowMs)) {
      this.expire(entry);
      return undefined;
    }
    return entry;
  }

  private reject(limit: StoreCapacityLimit, attempted: number): never {
    this.rejections[limit] += 1;
    throw new StoreCapacityError(limit, this.limits[limit], attempted);
  }

  /** Idle items sit at the front of the LRU order: stop at the first one still fresh (amortized O(1)). */
  private expireIdle(nowMs: number): void {
    for (const entry of this.entries.values()) {
      if (nowMs - entry.lastUsedAt < this.idleTtlMs) return;
      this.remove(entry);
      this.expirations.idle += 1;
    }
  }

  private expire(entry: InMemoryStoreEntry): void {
    this.remove(entry);
    this.expirations.ttl += 1;
  }

  private touch(entry: InMemoryStoreEntry, nowMs: number): void {
    entry.lastUsedAt = nowMs;
    // Re-inserting moves the item to the most-recently-used end of the Map's order.
    this.entries.delete(entry.id);
    this.entries.set(entry.id, entry);
  }

  private remove(entry: InMemoryStoreEntry): void {
    if (!this.entries.delete(entry.id)) return;
    const tenantEntries = this.byTenant.get(entry.tenant);
    tenantEntries?.delete(entry.sk);
    if (tenantEntries?.size === 0) this.byTenant.delete(entry.tenant);
    this.totalBytes -= entry.bytes;
  }
}

/** One tenant's view of the shared storage. */
class TenantView implements StoreBackend {
  constructor(
    private readonly storage: BoundedItemStore,
    private readonly tenant: string,
  ) {}

  async readItems(addresses: readonly StoreAddress[], nowMs: number) {
    return addresses.map((address) => this.storage.read(this.tenant, address, nowMs));
  }

  async *readRange(prefix: readonly string[], nowMs: number): AsyncGenerator<StoredItem> {
    for (const entry of this.storage.range(this.tenant, prefix, nowMs)) {
      const item = this.storage.use(entry, nowMs);
      if (item) yield item;
    }
  }

  async walkNamespaces(collector: NamespaceCollector, nowMs: number): Promise<void> {
    let skipped: readonly string[] | undefined;
    let previous: readonly string[] | undefined;
    for (const entry of this.storage.range(this.tenant, collector.range, nowMs)) {
      if (previous && compareNamespaces(previous, entry.namespace) === 0) continue;
      previous = entry.namespace;
      if (skipped && isUnder(entry.namespace, skipped)) continue;
      const skip = collector.offer(entry.namespace);
      if (skip.kind === "stop") return;
      skipped = skip.kind === "subtree" ? skip.labels : undefined;
    }
  }

  async write(writes: readonly PreparedWrite[], nowMs: number): Promise<void> {
    this.storage.write(this.tenant, writes, nowMs);
  }

  async renew(renewals: readonly ExpiryRenewal[]): Promise<void> {
    for (const renewal of renewals) this.storage.renew(this.tenant, renewal);
  }
}

function entryBytes(write: Extract<PreparedWrite, { kind: "put" }>): number {
  return (
    write.bytes +
    vectorBytes(write.vectors) +
    Buffer.byteLength(storeItemSortKey(write.namespace, write.key))
  );
}

function toStoredItem(entry: InMemoryStoreEntry): StoredItem {
  return {
    namespace: [...entry.namespace],
    key: entry.key,
    value: parseStoreValue(entry.json),
    createdAt: entry.createdAt,
    updatedAt: entry.updatedAt,
    ...(entry.expiry ? { expiry: { ...entry.expiry } } : {}),
    ...(entry.vectors.length > 0 ? { vectors: entry.vectors } : {}),
  };
}
