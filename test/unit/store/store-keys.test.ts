import { compareCodePoints } from "../../../src/shared/order";
import { compareStoreAddresses } from "../../../src/store/namespaces";
import {
  parseStoreItemSortKey,
  storeItemSortKey,
  storeNamespacePrefix,
  storeOwnItemsPrefix,
  storePartitionKey,
  storePrefixEnd,
  threadPartitionKey,
} from "../../../src/table/keys";

// The store's keys (src/table/keys.ts): layout, round trips, and that DynamoDB's key order is the store's order.

/** Deterministic labels and keys with the characters the encoding treats specially. */
function* samples(): Generator<{ namespace: string[]; key: string }> {
  const alphabet = ["a", "b", "#", "$", "!", "%", " ", "é", "\u{1F600}", "\uFFFF", "\u0025", "~"];
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  const word = () =>
    Array.from({ length: 1 + (next() % 4) }, () => alphabet[next() % alphabet.length]).join("");
  for (let i = 0; i < 400; i += 1) {
    yield { namespace: Array.from({ length: 1 + (next() % 3) }, word), key: word() };
  }
}

describe("store keys", () => {
  it("lays items out as i#<labels>##<key> in the tenant's store partition", () => {
    expect(storePartitionKey("acme")).toBe("acme##store");
    expect(storeItemSortKey(["users", "u1"], "prefs")).toBe("i#users#u1##prefs");
    expect(storeItemSortKey(["a#b"], "k$")).toBe("i#a$cb##k$d");
    expect(storeNamespacePrefix([])).toBe("i#");
    expect(storeNamespacePrefix(["users"])).toBe("i#users#");
    expect(storeOwnItemsPrefix(["users"])).toBe("i#users##");
  });

  it("never gives the store partition a thread's partition key", () => {
    for (const threadId of ["store", "#store", "##store", "$store"]) {
      expect(threadPartitionKey("acme", threadId)).not.toBe(storePartitionKey("acme"));
    }
  });

  it("parses back every namespace and key, whatever characters they hold", () => {
    for (const sample of samples()) {
      expect(parseStoreItemSortKey(storeItemSortKey(sample.namespace, sample.key))).toEqual(sample);
    }
  });

  it("orders sort keys (by code point, as DynamoDB) exactly as the store orders items", () => {
    const items = [...samples()];
    const bySortKey = [...items].sort((a, b) =>
      compareCodePoints(storeItemSortKey(a.namespace, a.key), storeItemSortKey(b.namespace, b.key)),
    );
    const byAddress = [...items].sort(compareStoreAddresses);
    expect(bySortKey).toEqual(byAddress);
  });

  it("bounds a prefix's range: every key under it sorts before its end, every other key outside", () => {
    const sortKeys = [...samples()].map((item) => storeItemSortKey(item.namespace, item.key));
    const misplaced: string[] = [];
    let inside = 0;
    for (const { namespace } of [...samples()].slice(0, 50)) {
      for (const prefix of [
        storeNamespacePrefix(namespace.slice(0, 1)),
        storeOwnItemsPrefix(namespace),
      ]) {
        const end = storePrefixEnd(prefix);
        for (const sk of sortKeys) {
          const under = sk.startsWith(prefix);
          const between = compareCodePoints(sk, prefix) >= 0 && compareCodePoints(sk, end) <= 0;
          if (under !== between) misplaced.push(`${sk} for ${prefix}`);
          if (under) inside += 1;
        }
      }
    }
    expect(misplaced).toEqual([]);
    expect(inside).toBeGreaterThan(100); // the ranges held keys: the check was not vacuous
  });

  it("refuses what is not a store item key", () => {
    for (const sk of ["m", "c#123", "i#", "i##k", "i#a#", "i#a##", "i#a##k#x", "i#a#b"]) {
      expect(() => parseStoreItemSortKey(sk)).toThrow(RangeError);
    }
    expect(() => storeItemSortKey([], "k")).toThrow(RangeError);
    expect(() => storeItemSortKey(["a"], "")).toThrow(RangeError);
    expect(() => storeNamespacePrefix(["a", ""])).toThrow(RangeError);
    expect(() => storePrefixEnd("i#a")).toThrow(RangeError);
  });
});
