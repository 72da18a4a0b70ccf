import { NamespaceCollector, type NamespaceListing } from "../../../src/store/namespaces";

const listing = (options: Partial<NamespaceListing>): NamespaceListing => ({
  limit: 100,
  offset: 0,
  ...options,
});

describe("NamespaceCollector", () => {
  it("reads only under the prefix's labels before its first wildcard", () => {
    expect(new NamespaceCollector(listing({ prefix: ["a", "b", "*", "c"] })).range).toEqual([
      "a",
      "b",
    ]);
    expect(new NamespaceCollector(listing({ prefix: ["*", "b"] })).range).toEqual([]);
    expect(new NamespaceCollector(listing({})).range).toEqual([]);
  });

  it("tells a walker what it can skip", () => {
    const collector = new NamespaceCollector(listing({ prefix: ["a", "*", "c"] }));
    // Shorter than the prefix: only its own items are skipped, its children may match.
    expect(collector.offer(["a", "x"])).toEqual({ kind: "own-items" });
    // A fixed label differs: nothing under a/x/d can match.
    expect(collector.offer(["a", "x", "d", "e"])).toEqual({
      kind: "subtree",
      labels: ["a", "x", "d"],
    });
    // A match without maxDepth: its children are other namespaces, still to be offered.
    expect(collector.offer(["a", "x", "c"])).toEqual({ kind: "own-items" });
    expect(collector.results).toEqual([["a", "x", "c"]]);
  });

  it("skips everything under a truncated result, and lists it once", () => {
    const collector = new NamespaceCollector(listing({ maxDepth: 2 }));
    expect(collector.offer(["a"])).toEqual({ kind: "own-items" }); // shorter than maxDepth: children differ
    expect(collector.offer(["a", "b", "c"])).toEqual({ kind: "subtree", labels: ["a", "b"] });
    expect(collector.offer(["a", "b", "d"])).toEqual({ kind: "subtree", labels: ["a", "b"] });
    expect(collector.offer(["a", "c"])).toEqual({ kind: "subtree", labels: ["a", "c"] });
    expect(collector.results).toEqual([["a"], ["a", "b"], ["a", "c"]]);
  });

  it("skips the offset, stops once the page is full, and is done at once for a limit of 0", () => {
    const collector = new NamespaceCollector(listing({ suffix: ["x"], limit: 2, offset: 1 }));
    expect(collector.offer(["1", "x"]).kind).toBe("own-items");
    expect(collector.offer(["2", "y"]).kind).toBe("own-items");
    expect(collector.offer(["2", "x"]).kind).toBe("own-items");
    expect(collector.offer(["3", "x"]).kind).toBe("stop");
    expect(collector.done).toBe(true);
    expect(collector.offer(["4", "x"]).kind).toBe("stop");
    expect(collector.results).toEqual([
      ["2", "x"],
      ["3", "x"],
    ]);
    expect(new NamespaceCollector(listing({ limit: 0 })).done).toBe(true);
  });
});
