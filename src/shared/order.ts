/**
 * Compares strings by Unicode code point, the order DynamoDB gives string sort keys (it compares UTF-8 bytes).
 * JavaScript's `<` compares UTF-16 code units instead, which puts U+10000 and above before U+E000..U+FFFF; every
 * ordering of ids that must agree with a Query's order uses this one.
 */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index += 1) {
    const left = a.charCodeAt(index);
    const right = b.charCodeAt(index);
    if (left !== right) return codePointRank(left) - codePointRank(right);
  }
  return a.length - b.length;
}

// Surrogates (U+D800..U+DFFF) encode code points above U+FFFF: lift them above the rest of the BMP.
function codePointRank(unit: number): number {
  if (unit >= 0xe000) return unit - 0x800;
  if (unit >= 0xd800) return unit + 0x2000;
  return unit;
}
