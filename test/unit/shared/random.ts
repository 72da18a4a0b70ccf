/**
 * Deterministic randomness for property checks: a small seeded generator (mulberry32) and generators of the
 * strings that stress key encoding and ordering. Every run sees the same cases, so a failure always reproduces.
 */

export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max], both included. */
  int(min: number, max: number): number;
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T;
  /** True with probability `p`. */
  chance(p: number): boolean;
}

export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => items[Math.floor(next() * items.length)]!,
    chance: (p) => next() < p,
  };
}

/**
 * Code points at the edges that matter: everything up to `$` (escaped by the key encoding, `#` among them), the
 * first characters left as they are, UTF-8 length boundaries, both sides of the surrogate block (where UTF-16
 * order and code point order disagree) and astral characters.
 */
const EDGE_CODE_POINTS = [
  0x00, 0x01, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x40, 0x41, 0x61, 0x62, 0x7c, 0x7e, 0x7f,
  0x80, 0x9f, 0xa0, 0xe9, 0x7ff, 0x800, 0x4e2d, 0xd7ff, 0xe000, 0xe001, 0xfffd, 0xffff, 0x10000,
  0x1f600, 0x1f601, 0x10fffd, 0x10ffff,
];

// C0 and C1 controls: well-formed, but refused in identifiers.
const isControl = (code: number): boolean => code <= 0x1f || (code >= 0x7f && code <= 0x9f);

const IDENTIFIER_CODE_POINTS = EDGE_CODE_POINTS.filter((code) => !isControl(code));

function randomCodePoint(random: Random, pool: readonly number[]): number {
  if (random.chance(0.7)) return random.pick(pool);
  // Any scalar value of the same pool's kind: outside the surrogate block, and outside controls when the pool is.
  for (;;) {
    const code = random.chance(0.5) ? random.int(0, 0xffff) : random.int(0x10000, 0x10ffff);
    if (code >= 0xd800 && code <= 0xdfff) continue;
    if (pool === IDENTIFIER_CODE_POINTS && isControl(code)) continue;
    return code;
  }
}

function randomString(random: Random, pool: readonly number[], maxCodePoints: number): string {
  const length = random.int(0, maxCodePoints);
  let value = "";
  for (let index = 0; index < length; index += 1) {
    value += String.fromCodePoint(randomCodePoint(random, pool));
  }
  return value;
}

/** A well-formed string of up to `maxCodePoints` code points (control characters included). */
export function wellFormedString(random: Random, maxCodePoints = 8): string {
  return randomString(random, EDGE_CODE_POINTS, maxCodePoints);
}

/** A non-empty string that assertIdentifier accepts (no control characters), of up to `maxCodePoints`. */
export function identifierString(random: Random, maxCodePoints = 8): string {
  let value = "";
  while (value === "") value = randomString(random, IDENTIFIER_CODE_POINTS, maxCodePoints);
  return value;
}

/**
 * A pair of strings that often share a prefix, or where one is a prefix of the other: the cases where an order
 * or an encoding goes wrong, which independent random strings rarely reach.
 */
export function relatedPair(
  random: Random,
  make: (random: Random) => string = wellFormedString,
): [string, string] {
  const a = make(random);
  const points = [...a];
  const shared = points.slice(0, random.int(0, points.length)).join("");
  const b = random.chance(0.15) ? a : shared + (random.chance(0.2) ? "" : make(random));
  return random.chance(0.5) ? [a, b] : [b, a];
}

export function sign(value: number): -1 | 0 | 1 {
  return value < 0 ? -1 : value > 0 ? 1 : 0;
}

/** DynamoDB's order of string keys: by UTF-8 bytes. */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}
