import type { SearchItem } from "@langchain/langgraph-checkpoint";
import { StoreSearchTooBroadError } from "../shared/errors";
import { matchesStoreFilter } from "./filter";
import type { CheckedSearch } from "./operations";
import { bestSimilarity } from "./semantic-index";
import { toLangGraphSearchItem, type RangeHint, type StoredItem } from "./store-backend";

/**
 * One search's page, from the items under its prefix offered in namespace-then-key order. Without a query the
 * page is the filter's matches in that order, from `offset`, and reading stops once the page is full. With a
 * query every item under the prefix is read (up to the cap), the matches are ranked by similarity (highest
 * first, ties in key order), items without vectors follow in key order, and the page is taken from that list.
 *
 * Difference from InMemoryStore, which returns matches in insertion order: results come in key order (the order
 * a DynamoDB Query reads them, which lets a search stop early).
 */
export class SearchCollector {
  readonly hint: RangeHint;
  private readonly page: StoredItem[] = [];
  private readonly candidates: StoredItem[] = [];
  private matched = 0;
  private offered = 0;

  constructor(
    private readonly search: CheckedSearch,
    private readonly queryVector: Float32Array | undefined,
    private readonly maxCandidates: number,
  ) {
    const filtered = search.filter !== undefined;
    this.hint = queryVector
      ? { wanted: undefined, filtered, cap: maxCandidates }
      : { wanted: search.offset + search.limit, filtered, cap: undefined };
  }

  /** True when the page is known without reading anything (a limit of 0). */
  get empty(): boolean {
    return this.search.limit === 0;
  }

  /** Takes the next item in order; false once nothing more is needed. */
  offer(item: StoredItem): boolean {
    if (this.queryVector) {
      this.offered += 1;
      if (this.offered > this.maxCandidates) throw new StoreSearchTooBroadError(this.maxCandidates);
      if (matchesStoreFilter(item.value, this.search.filter)) this.candidates.push(item);
      return true;
    }
    if (!matchesStoreFilter(item.value, this.search.filter)) return true;
    this.matched += 1;
    if (this.matched > this.search.offset) this.page.push(item);
    return this.page.length < this.search.limit;
  }

  /** The items returned (the ones a refreshing read renews). */
  get returned(): StoredItem[] {
    return this.queryVector ? this.ranked().map(({ item }) => item) : this.page;
  }

  results(): SearchItem[] {
    if (!this.queryVector) return this.page.map((item) => toLangGraphSearchItem(item));
    return this.ranked().map(({ item, score }) => toLangGraphSearchItem(item, score));
  }

  private rankedPage: Array<{ item: StoredItem; score: number | undefined }> | undefined;

  private ranked(): Array<{ item: StoredItem; score: number | undefined }> {
    if (this.rankedPage) return this.rankedPage;
    const scored = this.candidates.map((item) => ({
      item,
      score: bestSimilarity(this.queryVector!, item.vectors),
    }));
    // Array.prototype.sort is stable: equal scores keep key order, and unscored items keep it after them.
    scored.sort((a, b) => {
      if (a.score === undefined || b.score === undefined) {
        return (a.score === undefined ? 1 : 0) - (b.score === undefined ? 1 : 0);
      }
      return b.score - a.score;
    });
    this.rankedPage = scored.slice(this.search.offset, this.search.offset + this.search.limit);
    return this.rankedPage;
  }
}
