import { InvalidStoreOperationError } from "../../../src/shared/errors";
import { jsonEquals, matchesStoreFilter, parseStoreFilter } from "../../../src/store/filter";

const matches = (value: Record<string, unknown>, filter: Record<string, unknown>) =>
  matchesStoreFilter(value, parseStoreFilter(filter));

describe("store filters", () => {
  it("compares JSON values deeply, whatever the key order", () => {
    expect(jsonEquals({ a: [1, { b: null }], c: "x" }, { c: "x", a: [1, { b: null }] })).toBe(true);
    expect(jsonEquals({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(jsonEquals({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(jsonEquals([], {})).toBe(false);
    expect(jsonEquals(1, "1")).toBe(false);
    expect(jsonEquals(null, undefined)).toBe(false);
  });

  it("tells a missing field from a null one", () => {
    expect(matches({ a: null }, { a: null })).toBe(true);
    expect(matches({}, { a: null })).toBe(false);
    expect(matches({}, { a: { $eq: null } })).toBe(false);
    expect(matches({}, { a: { $ne: null } })).toBe(true);
    expect(matches({ a: null }, { a: { $exists: true } })).toBe(true);
    expect(matches({}, { a: { $in: [null] } })).toBe(false);
    expect(matches({}, { a: { $nin: [null] } })).toBe(true);
  });

  it("compares numbers with numbers and strings with strings by code point, nothing else", () => {
    expect(matches({ n: 5 }, { n: { $gt: 4, $lte: 5 } })).toBe(true);
    expect(matches({ n: "5" }, { n: { $gt: 4 } })).toBe(false);
    expect(matches({ n: 5 }, { n: { $gt: "4" } })).toBe(false);
    expect(matches({ n: null }, { n: { $lt: 1 } })).toBe(false);
    expect(matches({ d: "2026-05-01" }, { d: { $gte: "2026-01-01", $lt: "2027-01-01" } })).toBe(
      true,
    );
    // U+1F600 is above U+FFFF by code point (UTF-16 code units would say the opposite).
    expect(matches({ s: "\u{1F600}" }, { s: { $gt: "\uFFFF" } })).toBe(true);
  });

  it("looks only at top-level fields, as InMemoryStore does", () => {
    expect(matches({ a: { b: 1 } }, { "a.b": 1 })).toBe(false);
    expect(matches({ "a.b": 1 }, { "a.b": 1 })).toBe(true);
    expect(matches({ a: { b: 1 } }, { a: { b: 1 } })).toBe(true);
    expect(
      matches(Object.create({ inherited: 1 }) as Record<string, unknown>, { inherited: 1 }),
    ).toBe(false);
  });

  it("treats an empty filter as no filter, and refuses malformed ones", () => {
    expect(parseStoreFilter({})).toBeUndefined();
    expect(parseStoreFilter(undefined)).toBeUndefined();
    for (const [filter, message] of [
      ["x", "Invalid filter: expected an object of field conditions, got a string"],
      [{ a: { $lt: null } }, "Invalid filter.a.$lt: expected a number or a string, got null"],
      [{ a: { $gt: Number.NaN } }, "Invalid filter.a.$gt: expected a number or a string, got NaN"],
      [{ a: { $nin: {} } }, "Invalid filter.a.$nin: expected an array, got an object"],
      [{ a: { $where: "1" } }, "Invalid filter.a: expected operators among"],
    ] as const) {
      expect(() => parseStoreFilter(filter)).toThrow(InvalidStoreOperationError);
      expect(() => parseStoreFilter(filter)).toThrow(message);
    }
  });
});
