import {
  BaseStore,
  type Item,
  type Operation,
  type OperationResults,
  type SearchItem,
} from "@langchain/langgraph-checkpoint";

// Forwarded calls pass on every argument: a tenant store takes more options than BaseStore declares (a put's
// `ttl`, a read's `refreshTtl`).
type Forward<R> = (...args: unknown[]) => Promise<R>;

/**
 * A long-term memory store that forwards every call to the store of the request in progress (the caller's
 * tenant's), so graphs compiled once per container with it still read and write each tenant's own items.
 * LangGraph calls `batch` only (through its own batching wrapper); the other methods serve nodes and factories
 * that use the store directly. Each method is async, so a call outside a request rejects as a store's would.
 */
export class ScopedStore extends BaseStore {
  /** `current` gives the request's store, or throws when there is none. */
  constructor(private readonly current: () => BaseStore) {
    super();
  }

  override async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    return this.current().batch(operations);
  }

  override async get(
    namespace: string[],
    key: string,
    ...options: unknown[]
  ): Promise<Item | null> {
    const store = this.current();
    return (store.get as Forward<Item | null>).call(store, namespace, key, ...options);
  }

  override async search(
    namespacePrefix: string[],
    options?: Parameters<BaseStore["search"]>[1],
  ): Promise<SearchItem[]> {
    return this.current().search(namespacePrefix, options);
  }

  override async put(
    namespace: string[],
    key: string,
    value: Record<string, unknown>,
    index?: false | string[],
    ...options: unknown[]
  ): Promise<void> {
    const store = this.current();
    return (store.put as Forward<void>).call(store, namespace, key, value, index, ...options);
  }

  override async delete(namespace: string[], key: string): Promise<void> {
    return this.current().delete(namespace, key);
  }

  override async listNamespaces(
    options?: Parameters<BaseStore["listNamespaces"]>[0],
  ): Promise<string[][]> {
    return this.current().listNamespaces(options);
  }
}
