import { compareCodePoints } from "../../../src/shared/order";
import { compareUtf8, relatedPair, seededRandom, sign, wellFormedString } from "./random";

describe("compareCodePoints", () => {
  it("puts astral characters above U+E000..U+FFFF, where JavaScript's `<` puts them below", () => {
    const astral = "\u{10000}";
    for (const bmp of ["\ue000", "\uf8ff", "\ufffd", "\uffff"]) {
      // UTF-16 code units: the high surrogate 0xD800 is below 0xE000...
      expect(astral < bmp).toBe(true);
      // ...but by code point (and by UTF-8 bytes, DynamoDB's order) U+10000 is above.
      expect(sign(compareCodePoints(astral, bmp))).toBe(1);
      expect(sign(compareCodePoints(bmp, astral))).toBe(-1);
      expect(sign(compareUtf8(astral, bmp))).toBe(1);
    }
  });

  it("agrees with `<` below the surrogate block", () => {
    expect(sign(compareCodePoints("a", "b"))).toBe(-1);
    expect(sign(compareCodePoints("\ud7ff", "\u0800"))).toBe(1);
    expect(sign(compareCodePoints("\ud7ff", "\u{10000}"))).toBe(-1);
  });

  it("orders a prefix before the longer string and equal strings as equal", () => {
    expect(sign(compareCodePoints("", "a"))).toBe(-1);
    expect(sign(compareCodePoints("ab", "a"))).toBe(1);
    expect(sign(compareCodePoints("😀", "😀a"))).toBe(-1);
    expect(compareCodePoints("", "")).toBe(0);
    expect(compareCodePoints("a😀\ue000", "a😀\ue000")).toBe(0);
  });

  it("orders astral characters among themselves by code point", () => {
    const ordered = ["\u{10000}", "\u{103ff}", "\u{10400}", "\u{1f600}", "\u{1f601}", "\u{10ffff}"];
    for (let i = 0; i < ordered.length; i += 1) {
      for (let j = 0; j < ordered.length; j += 1) {
        expect(sign(compareCodePoints(ordered[i]!, ordered[j]!))).toBe(sign(i - j));
      }
    }
  });

  it("equals UTF-8 byte order for random well-formed strings", () => {
    const random = seededRandom(0x0de7);
    // Disagreements are collected rather than asserted one by one: the first few are the useful report.
    const disagreements: Array<{ a: string; b: string }> = [];
    for (let iteration = 0; iteration < 20_000; iteration += 1) {
      const [a, b] = relatedPair(random, (r) => wellFormedString(r, 6));
      const expected = sign(compareUtf8(a, b));
      if (
        sign(compareCodePoints(a, b)) !== expected ||
        sign(compareCodePoints(b, a)) !== -expected
      ) {
        disagreements.push({ a, b });
      }
    }
    expect(disagreements.slice(0, 5)).toEqual([]);
  });

  it("sorts a random list exactly as DynamoDB orders the same strings", () => {
    const random = seededRandom(42);
    const values = Array.from({ length: 2_000 }, () => wellFormedString(random, 5));
    const byCodePoint = [...values].sort(compareCodePoints);
    const byUtf8 = [...values].sort(compareUtf8);
    expect(byCodePoint).toEqual(byUtf8);
  });
});
