import {
  BaseStore,
  type Item,
  type MatchCondition,
  type Operation,
  type OperationResults,
  type SearchItem,
} from "@langchain/langgraph-checkpoint";
import { StoreValueTooLargeError } from "../shared/errors";
import { planBatch, type BatchStep } from "./batch-plan";
import type { StoreTtlPolicy } from "./item-ttl";
import { NamespaceCollector } from "./namespaces";
import {
  checkOperations,
  type CheckedOperation,
  type CheckedSearch,
  type StoreSearchOperation,
} from "./operations";
import { SearchCollector } from "./search-results";
import { vectorBytes, type SemanticIndex } from "./semantic-index";
import {
  toLangGraphItem,
  type ExpiryRenewal,
  type PreparedWrite,
  type StoreBackend,
  type StoredItem,
} from "./store-backend";
import { assertStoreNamespace } from "./validation";
import { MAX_ITEM_PAYLOAD_BYTES } from "./value-json";

/** What a store's behaviour depends on besides its backend. */
export interface StoreSettings {
  ttl: StoreTtlPolicy;
  index: SemanticIndex | undefined;
  maxValueBytes: number;
  /** Clock in epoch milliseconds. */
  now: () => number;
}

export interface StoreSearchOptions {
  filter?: Record<string, unknown>;
  limit?: number;
  offset?: number;
  query?: string;
  /** Renew the TTL of the returned items (default: the store's `ttl.refreshOnRead`). */
  refreshTtl?: boolean | null;
}

export interface StoreListNamespacesOptions {
  prefix?: string[];
  suffix?: string[];
  maxDepth?: number;
  limit?: number;
  offset?: number;
}

/**
 * A LangGraph `BaseStore` bound to one tenant: every operation checked whole before anything runs, then run on a
 * backend in the order planBatch gives. The stores differ only in their backend.
 */
export abstract class TenantStore extends BaseStore {
  protected abstract readonly backend: StoreBackend;
  protected abstract readonly settings: StoreSettings;

  /** The tenant every item of this store belongs to. */
  abstract readonly tenantId: string;

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const checked = checkOperations(operations, {
      maxValueBytes: this.settings.maxValueBytes,
      index: this.settings.index,
    });
    const nowMs = this.settings.now();
    // Everything that can fail on input (values, embeddings) is done before the first request.
    const [writes, queryVectors] = await Promise.all([
      this.prepareWrites(checked, nowMs),
      this.embedQueries(checked),
    ]);
    const results: unknown[] = new Array(checked.length).fill(undefined);
    for (const step of planBatch(checked)) {
      await this.runStep(step, writes, queryVectors, nowMs, results);
    }
    return results as OperationResults<Op>;
  }

  /** One item, or null; `refreshTtl` renews its TTL (default: the store's `ttl.refreshOnRead`). */
  override async get(
    namespace: string[],
    key: string,
    options: { refreshTtl?: boolean | null } = {},
  ): Promise<Item | null> {
    const [item] = await this.batch([{ namespace, key, refreshTtl: options?.refreshTtl }]);
    return item as Item | null;
  }

  /**
   * Stores `value` (a JSON object) at `key`: `index` as LangGraph's (`false` embeds nothing), `options.ttl` in
   * minutes (`null`: never expires; absent: the store's `ttl.defaultTtl`).
   */
  override async put(
    namespace: string[],
    key: string,
    value: Record<string, unknown>,
    index?: false | string[],
    options: { ttl?: number | null } = {},
  ): Promise<void> {
    assertStoreNamespace("namespace", namespace);
    await this.batch([{ namespace, key, value, index, ttl: options?.ttl }]);
  }

  override async delete(namespace: string[], key: string): Promise<void> {
    await this.batch([{ namespace, key, value: null }]);
  }

  override async search(
    namespacePrefix: string[],
    searchOptions?: StoreSearchOptions,
  ): Promise<SearchItem[]> {
    const options = searchOptions ?? {};
    const search: StoreSearchOperation = {
      namespacePrefix,
      filter: options.filter,
      limit: options.limit,
      offset: options.offset,
      query: options.query,
      refreshTtl: options.refreshTtl,
    };
    const [items] = await this.batch([search]);
    return items ?? [];
  }

  override async listNamespaces(listOptions?: StoreListNamespacesOptions): Promise<string[][]> {
    const options = listOptions ?? {};
    const matchConditions: MatchCondition[] = [];
    if (options.prefix !== undefined)
      matchConditions.push({ matchType: "prefix", path: options.prefix });
    if (options.suffix !== undefined)
      matchConditions.push({ matchType: "suffix", path: options.suffix });
    const [namespaces] = await this.batch([
      {
        matchConditions,
        maxDepth: options.maxDepth,
        limit: options.limit as number,
        offset: options.offset as number,
      },
    ]);
    return namespaces as string[][];
  }

  /** Serialized values, vectors and expiries of the batch's puts, all before any write. */
  private async prepareWrites(
    checked: readonly CheckedOperation[],
    nowMs: number,
  ): Promise<Map<CheckedOperation, PreparedWrite>> {
    const index = this.settings.index;
    const puts = checked.filter((op) => op.kind === "put");
    const texts = puts.map((op) =>
      op.value && index ? index.textsOf(op.value.data, op.index) : [],
    );
    const vectors =
      index && texts.some((t) => t.length > 0)
        ? await index.embedDocuments(texts)
        : texts.map(() => []);
    const prepared = new Map<CheckedOperation, PreparedWrite>();
    puts.forEach((op, i) => {
      if (!op.value) {
        prepared.set(op, { kind: "delete", namespace: op.namespace, key: op.key });
        return;
      }
      const payload = op.value.serialized.bytes + vectorBytes(vectors[i]!);
      if (payload > MAX_ITEM_PAYLOAD_BYTES) {
        throw new StoreValueTooLargeError(
          MAX_ITEM_PAYLOAD_BYTES,
          payload,
          "value's JSON with its embedding vectors",
        );
      }
      prepared.set(op, {
        kind: "put",
        namespace: op.namespace,
        key: op.key,
        json: op.value.serialized.json,
        bytes: op.value.serialized.bytes,
        vectors: vectors[i]!,
        expiry: this.settings.ttl.expiryOnWrite(nowMs, op.ttl),
      });
    });
    return prepared;
  }

  private async embedQueries(
    checked: readonly CheckedOperation[],
  ): Promise<Map<string, Float32Array>> {
    const queries = checked.flatMap((op) => (op.kind === "search" && op.query ? [op.query] : []));
    if (queries.length === 0 || !this.settings.index) return new Map();
    return this.settings.index.embedQueries(queries);
  }

  private async runStep(
    step: BatchStep,
    writes: ReadonlyMap<CheckedOperation, PreparedWrite>,
    queryVectors: ReadonlyMap<string, Float32Array>,
    nowMs: number,
    results: unknown[],
  ): Promise<void> {
    const renewals: ExpiryRenewal[] = [];
    const renew = (item: StoredItem | undefined, refreshTtl: boolean | undefined) => {
      if (!item || !this.settings.ttl.refreshes(refreshTtl)) return;
      const expiresAt = this.settings.ttl.renewal(item.expiry, nowMs);
      if (expiresAt !== undefined) {
        renewals.push({ namespace: item.namespace, key: item.key, read: item.expiry!, expiresAt });
      }
    };
    await Promise.all([
      (async () => {
        if (step.gets.length === 0) return;
        const items = await this.backend.readItems(
          step.gets.map(({ op }) => op),
          nowMs,
        );
        step.gets.forEach(({ position, op }, i) => {
          const item = items[i];
          results[position] = item ? toLangGraphItem(item) : null;
          renew(item, op.refreshTtl);
        });
      })(),
      ...step.searches.map(async ({ position, op }) => {
        const collector = await this.collectSearch(op, queryVectors, nowMs);
        results[position] = collector.results();
        for (const item of collector.returned) renew(item, op.refreshTtl);
      }),
      ...step.listings.map(async ({ position, op }) => {
        const collector = new NamespaceCollector(op.listing);
        if (!collector.done) await this.backend.walkNamespaces(collector, nowMs);
        results[position] = collector.results;
      }),
    ]);
    if (renewals.length > 0) await this.backend.renew(distinctRenewals(renewals), nowMs);
    if (step.writes.size > 0) {
      await this.backend.write(
        [...step.writes.values()].map((op) => writes.get(op)!),
        nowMs,
      );
    }
  }

  private async collectSearch(
    op: CheckedSearch,
    queryVectors: ReadonlyMap<string, Float32Array>,
    nowMs: number,
  ): Promise<SearchCollector> {
    const collector = new SearchCollector(
      op,
      op.query === undefined ? undefined : queryVectors.get(op.query),
      this.settings.index?.maxCandidates ?? Number.POSITIVE_INFINITY,
    );
    if (collector.empty) return collector;
    for await (const item of this.backend.readRange(op.prefix, nowMs, collector.hint)) {
      if (!collector.offer(item)) break;
    }
    return collector;
  }
}

/** One renewal per item (a batch may read an item twice). */
function distinctRenewals(renewals: ExpiryRenewal[]): ExpiryRenewal[] {
  const byItem = new Map<string, ExpiryRenewal>();
  for (const renewal of renewals) {
    byItem.set(JSON.stringify([renewal.namespace, renewal.key]), renewal);
  }
  return [...byItem.values()];
}
