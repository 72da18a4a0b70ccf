/**
 * A small seeded PRNG (mulberry32) for property-style tests: every run draws the same cases, so a failure
 * names a seed and case that reproduce it, and no dependency is needed.
 */
export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max], both included. */
  int(min: number, max: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** `length` incompressible bytes (a view of a shared pool, so megabytes cost nothing to draw). */
  bytes(length: number): Uint8Array;
}

const POOL_BYTES = 2 * 1024 * 1024;
// Bound once: a global looked up inside Jest's sandbox costs about a microsecond per call.
const imul = Math.imul;
const floor = Math.floor;

export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = imul(t ^ (t >>> 15), t | 1);
    t ^= t + imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const words = new Uint32Array(POOL_BYTES / 4);
  for (let index = 0; index < words.length; index += 1) words[index] = next() * 4294967296;
  const pool = new Uint8Array(words.buffer);
  const int = (min: number, max: number): number => min + floor(next() * (max - min + 1));
  return {
    next,
    int,
    chance: (p) => next() < p,
    pick: (items) => items[int(0, items.length - 1)]!,
    bytes: (length) => {
      if (length > POOL_BYTES) throw new RangeError(`at most ${POOL_BYTES} random bytes at once`);
      const offset = int(0, POOL_BYTES - length);
      return pool.subarray(offset, offset + length);
    },
  };
}

/** Byte equality without Jest's element-by-element diff (payloads are megabytes). */
export function sameBytes(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(
    Buffer.from(b.buffer, b.byteOffset, b.byteLength),
  );
}
