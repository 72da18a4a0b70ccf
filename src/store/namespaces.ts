import { compareCodePoints } from "../shared/order";
import { NAMESPACE_WILDCARD } from "./validation";

/**
 * Namespace order and `listNamespaces`, the same in every store. Namespaces are ordered label by label by code
 * point, a namespace before its children; items by namespace, then key. It is the order of the items' sort keys
 * in DynamoDB (keys.ts), so a store reads a namespace range in this order and can stop early.
 *
 * Differences from InMemoryStore, which sorts namespaces by `labels.join(":")` with `localeCompare`: results come
 * in code-point order, the order DynamoDB gives them.
 */

export interface StoreAddress {
  readonly namespace: readonly string[];
  readonly key: string;
}

export function compareNamespaces(a: readonly string[], b: readonly string[]): number {
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index += 1) {
    const order = compareCodePoints(a[index]!, b[index]!);
    if (order !== 0) return order;
  }
  return a.length - b.length;
}

export function compareStoreAddresses(a: StoreAddress, b: StoreAddress): number {
  return compareNamespaces(a.namespace, b.namespace) || compareCodePoints(a.key, b.key);
}

/** True when `namespace` starts with `prefix` (a namespace is under itself). */
export function isUnder(namespace: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= namespace.length && prefix.every((label, i) => namespace[i] === label);
}

/** One `listNamespaces` call, checked. */
export interface NamespaceListing {
  prefix?: readonly string[];
  suffix?: readonly string[];
  maxDepth?: number;
  limit: number;
  offset: number;
}

/**
 * What a walker may skip after a namespace was offered: every namespace starting with `labels`, or only the
 * offered namespace's own items (its children may still match). `stop` once the page is full.
 */
export type NamespaceSkip =
  { kind: "stop" } | { kind: "own-items" } | { kind: "subtree"; labels: readonly string[] };

/**
 * Collects a listing's page from namespaces offered in order (each namespace of a live item, at least once),
 * and tells the walker what it can skip: a store reads one item per distinct result rather than every item.
 */
export class NamespaceCollector {
  /** The labels before the prefix's first wildcard: only namespaces under them can match. */
  readonly range: readonly string[];
  private readonly collected: string[][] = [];
  private last: readonly string[] | undefined;
  private matched = 0;

  constructor(private readonly listing: NamespaceListing) {
    const prefix = listing.prefix ?? [];
    const wildcard = prefix.indexOf(NAMESPACE_WILDCARD);
    this.range = wildcard < 0 ? prefix : prefix.slice(0, wildcard);
  }

  /** True once the page is full (or asks for nothing): walkers stop, or need not start. */
  get done(): boolean {
    return this.collected.length >= this.listing.limit;
  }

  get results(): string[][] {
    return this.collected;
  }

  offer(namespace: readonly string[]): NamespaceSkip {
    if (this.done) return { kind: "stop" };
    const { prefix, suffix, maxDepth } = this.listing;
    if (prefix) {
      for (let index = 0; index < prefix.length; index += 1) {
        // Shorter than the prefix: this namespace cannot match, its children may.
        if (index >= namespace.length) return { kind: "own-items" };
        const label = prefix[index];
        if (label !== NAMESPACE_WILDCARD && label !== namespace[index]) {
          return { kind: "subtree", labels: namespace.slice(0, index + 1) };
        }
      }
    }
    if (suffix && !matchesSuffix(namespace, suffix)) return { kind: "own-items" };
    const result = maxDepth === undefined ? namespace : namespace.slice(0, maxDepth);
    // Results arrive in order (truncating keeps it), so a repeated one is always the previous one.
    if (this.last === undefined || compareNamespaces(this.last, result) !== 0) {
      this.last = result;
      this.matched += 1;
      if (this.matched > this.listing.offset) this.collected.push([...result]);
    }
    if (this.done) return { kind: "stop" };
    // Every namespace under a truncated result gives that result again, or nothing.
    return maxDepth !== undefined && namespace.length >= maxDepth
      ? { kind: "subtree", labels: result }
      : { kind: "own-items" };
  }
}

function matchesSuffix(namespace: readonly string[], suffix: readonly string[]): boolean {
  if (suffix.length > namespace.length) return false;
  const start = namespace.length - suffix.length;
  return suffix.every((label, i) => label === NAMESPACE_WILDCARD || label === namespace[start + i]);
}
