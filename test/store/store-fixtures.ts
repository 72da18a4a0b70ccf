import { Embeddings } from "@langchain/core/embeddings";
import type { TenantStore } from "../../src/store/tenant-store";
import type { StoreIndexConfig } from "../../src/store/semantic-index";
import type { StoreTtlConfig } from "../../src/store/item-ttl";

/**
 * What the store behaviour suite needs of a store implementation: fresh stores (each its own tenant, so tests
 * never see each other's items) on one clock, and another tenant's store on the same storage.
 */
export interface StoreOptionsUnderTest {
  ttl?: StoreTtlConfig;
  index?: StoreIndexConfig;
  maxValueBytes?: number;
}

export interface StoreHarness {
  /** A store of a new tenant, reading `clock`. */
  create(clock: TestClock, options?: StoreOptionsUnderTest): TenantStore;
  /** The store of another new tenant on the same storage (table, or in-memory storage) as `store`. */
  otherTenant(store: TenantStore, clock: TestClock, options?: StoreOptionsUnderTest): TenantStore;
}

/**
 * A clock the tests move by hand. It starts at the real time, on a whole second (expiries are whole epoch
 * seconds, so the tests know exactly when an item expires), and only moves forward (DynamoDB Local's own TTL
 * process never removes an item the test still expects).
 */
export class TestClock {
  private current = Math.ceil(Date.now() / 1000) * 1000;
  readonly now = (): number => this.current;

  advance(milliseconds: number): void {
    if (milliseconds < 0) throw new RangeError("the test clock only moves forward");
    this.current += milliseconds;
  }

  advanceMinutes(minutes: number): void {
    this.advance(minutes * 60_000);
  }
}

/** The words the fake embeddings know; each is one dimension. */
export const VOCABULARY = [
  "tea",
  "coffee",
  "green",
  "black",
  "milk",
  "sugar",
  "cat",
  "dog",
  "pet",
  "food",
  "travel",
  "train",
  "plane",
  "window",
  "aisle",
  "seat",
] as const;

/**
 * Deterministic embeddings for tests: a text's vector counts each vocabulary word in it, so which items are
 * similar to a query is known in advance. Records every call.
 */
export class WordCountEmbeddings extends Embeddings {
  readonly documentCalls: string[][] = [];
  readonly queryCalls: string[] = [];

  constructor(private readonly dims: number = VOCABULARY.length) {
    super({});
  }

  async embedDocuments(documents: string[]): Promise<number[][]> {
    this.documentCalls.push([...documents]);
    return documents.map((text) => this.vector(text));
  }

  async embedQuery(document: string): Promise<number[]> {
    this.queryCalls.push(document);
    return this.vector(document);
  }

  private vector(text: string): number[] {
    const words = text.toLowerCase().split(/[^a-z]+/);
    const vector = VOCABULARY.map((word) => words.filter((w) => w === word).length);
    return vector
      .slice(0, this.dims)
      .concat(new Array(Math.max(0, this.dims - vector.length)).fill(0));
  }
}

/** Embeddings that answer with vectors of the wrong size (a misconfigured index). */
export class WrongSizeEmbeddings extends Embeddings {
  constructor() {
    super({});
  }

  async embedDocuments(documents: string[]): Promise<number[][]> {
    return documents.map(() => [1, 2, 3]);
  }

  async embedQuery(): Promise<number[]> {
    return [1, 2, 3];
  }
}
