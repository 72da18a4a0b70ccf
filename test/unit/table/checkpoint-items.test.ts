import {
  CHUNK_BYTES,
  ITEM_BUDGET_BYTES,
  ITEM_KIND,
  MAX_CHUNKED_BYTES,
  chunkItems,
  chunkKeys,
  estimateItemBytes,
  joinChunks,
  type CheckpointItem,
  type ChunkItem,
  type WritesItem,
} from "../../../src/table/checkpoint-items";
import {
  MAX_CHUNKS,
  MAX_SEQUENCE_LENGTH,
  MAX_SORT_KEY_BYTES,
  checkpointItemRange,
  checkpointSortKey,
  parseSortKey,
  threadPartitionKey,
} from "../../../src/table/keys";
import { compareUtf8, seededRandom, type Random } from "../shared/random";

const PK = threadPartitionKey("acme", "thread-1");
const CHECKPOINT_SK = checkpointSortKey("", "1ef0a7c2-5d3b-6a1e-8000-0123456789ab");
const SEQUENCE = "k3x9";
const GENERATION = "0123456789abcdef";
const DYNAMODB_ITEM_LIMIT = 400 * 1024;

/** Bytes that differ at every offset a chunk boundary could fall on (a seeded xorshift stream, not a pattern). */
function payload(size: number, seed: number): Uint8Array {
  const words = new Uint32Array(Math.ceil(size / 4));
  let state = (seed * 0x9e3779b1) >>> 0 || 1;
  for (let index = 0; index < words.length; index += 1) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    words[index] = state >>> 0;
  }
  return new Uint8Array(words.buffer, 0, size);
}

const sameBytes = (a: Uint8Array | undefined, b: Uint8Array): boolean =>
  a !== undefined && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b));

/** What a Query or BatchGet hands back: chunk bytes by sort key. */
const byKey = (items: ChunkItem[]): Map<string, Uint8Array> =>
  new Map(items.map((item) => [item.sk, item.d]));

describe("chunkItems and joinChunks", () => {
  it.each([
    ["empty", 0],
    ["one byte", 1],
    ["one byte short of a chunk", CHUNK_BYTES - 1],
    ["exactly one chunk", CHUNK_BYTES],
    ["one byte over a chunk", CHUNK_BYTES + 1],
    ["3.2 MB", Math.round(3.2 * 1024 * 1024)],
  ])("round-trips a payload of %s (%i bytes)", (_, size) => {
    const bytes = payload(size, size + 1);
    const items = chunkItems(PK, CHECKPOINT_SK, SEQUENCE, GENERATION, bytes);
    expect(items).toHaveLength(Math.ceil(size / CHUNK_BYTES));
    items.forEach((item, index) => {
      expect(item).toMatchObject({ pk: PK, k: ITEM_KIND.chunk, g: GENERATION });
      expect(parseSortKey(item.sk)).toMatchObject({
        kind: "chunk",
        checkpointSk: CHECKPOINT_SK,
        sequence: SEQUENCE,
        index,
      });
      // Every chunk is full but the last, which holds the rest.
      const expected = index < items.length - 1 ? CHUNK_BYTES : size - index * CHUNK_BYTES;
      expect(item.d.byteLength).toBe(expected);
    });
    const joined = joinChunks(CHECKPOINT_SK, SEQUENCE, items.length, byKey(items));
    expect(joined).toBeInstanceOf(Uint8Array);
    expect(joined!.byteLength).toBe(size);
    expect(sameBytes(joined, bytes)).toBe(true);
  });

  it("joins chunks by their keys, whatever order they were read in", () => {
    const bytes = payload(3 * CHUNK_BYTES + 17, 5);
    const items = chunkItems(PK, CHECKPOINT_SK, SEQUENCE, GENERATION, bytes);
    const shuffled = new Map([...byKey(items)].reverse());
    expect(sameBytes(joinChunks(CHECKPOINT_SK, SEQUENCE, items.length, shuffled), bytes)).toBe(
      true,
    );
  });

  it("returns undefined when any one chunk is missing", () => {
    const bytes = payload(Math.round(3.2 * 1024 * 1024), 6);
    const items = chunkItems(PK, CHECKPOINT_SK, SEQUENCE, GENERATION, bytes);
    expect(items.length).toBeGreaterThan(10);
    for (let missing = 0; missing < items.length; missing += 1) {
      const chunks = byKey(items);
      chunks.delete(items[missing]!.sk);
      expect(joinChunks(CHECKPOINT_SK, SEQUENCE, items.length, chunks)).toBeUndefined();
    }
    // A count larger than what was written also means a chunk is missing.
    expect(joinChunks(CHECKPOINT_SK, SEQUENCE, items.length + 1, byKey(items))).toBeUndefined();
  });

  it("does not take another write's or another checkpoint's chunks for its own", () => {
    const bytes = payload(2 * CHUNK_BYTES, 7);
    const items = chunkItems(PK, CHECKPOINT_SK, SEQUENCE, GENERATION, bytes);
    const otherCheckpoint = checkpointSortKey("", "1ef0a7c2-5d3b-6a1e-8000-0123456789ac");
    expect(joinChunks(CHECKPOINT_SK, "other", items.length, byKey(items))).toBeUndefined();
    expect(joinChunks(otherCheckpoint, SEQUENCE, items.length, byKey(items))).toBeUndefined();
  });

  it("numbers chunks so their keys sort in chunk order, inside the checkpoint's key range", () => {
    const items = chunkItems(PK, CHECKPOINT_SK, SEQUENCE, GENERATION, payload(11 * CHUNK_BYTES, 8));
    const keys = items.map((item) => item.sk);
    expect([...keys].sort(compareUtf8)).toEqual(keys);
    const { low, high } = checkpointItemRange(CHECKPOINT_SK);
    for (const key of keys) {
      expect(compareUtf8(low, key)).toBeLessThan(0);
      expect(compareUtf8(key, high)).toBeLessThan(0);
    }
  });

  it("makes at most MAX_CHUNKS chunks, and refuses a payload that needs more", () => {
    // A stand-in with the size of the largest payloads (gigabytes): chunking reads only its length and slices.
    const huge = (byteLength: number) =>
      ({ byteLength, subarray: () => new Uint8Array(0) }) as unknown as Uint8Array;
    expect(
      chunkItems(PK, CHECKPOINT_SK, SEQUENCE, GENERATION, huge(MAX_CHUNKED_BYTES)),
    ).toHaveLength(MAX_CHUNKS);
    expect(() =>
      chunkItems(PK, CHECKPOINT_SK, SEQUENCE, GENERATION, huge(MAX_CHUNKED_BYTES + 1)),
    ).toThrow(RangeError);
  });

  it("joins zero chunks into an empty payload", () => {
    const joined = joinChunks(CHECKPOINT_SK, SEQUENCE, 0, new Map());
    expect(joined).toBeInstanceOf(Uint8Array);
    expect(joined!.byteLength).toBe(0);
  });
});

describe("chunkKeys", () => {
  it("lists exactly the keys chunkItems writes, in the same order", () => {
    for (const size of [0, 1, CHUNK_BYTES, CHUNK_BYTES + 1, 5 * CHUNK_BYTES - 3]) {
      const items = chunkItems(PK, CHECKPOINT_SK, SEQUENCE, GENERATION, payload(size, size));
      expect(chunkKeys(PK, CHECKPOINT_SK, SEQUENCE, items.length)).toEqual(
        items.map((item) => ({ pk: item.pk, sk: item.sk })),
      );
    }
  });
});

// An independent, careful computation of DynamoDB's item size, from its documented rules.
type AttributeValue =
  | string
  | number
  | boolean
  | null
  | Uint8Array
  | AttributeValue[]
  | { [name: string]: AttributeValue };

/**
 * A number takes one byte per two significant digits plus one; the digits are paired from the decimal point,
 * so an odd alignment can take one more (counted here, to stay on the large side of the real size).
 */
function numberBytes(value: number): number {
  const [mantissa] = Math.abs(value).toExponential().split("e");
  const digits = mantissa!.replace(".", "").replace(/0+$/, "").length || 1;
  return Math.ceil(digits / 2) + 2;
}

function valueBytes(value: AttributeValue): number {
  if (typeof value === "string") return Buffer.byteLength(value, "utf8");
  if (typeof value === "number") return numberBytes(value);
  if (typeof value === "boolean" || value === null) return 1;
  if (value instanceof Uint8Array) return value.byteLength;
  // Lists and maps: 3 bytes, and 1 byte per element (plus the name of each map entry).
  if (Array.isArray(value))
    return 3 + value.reduce<number>((sum, element) => sum + 1 + valueBytes(element), 0);
  return (
    3 +
    Object.entries(value).reduce(
      (sum, [name, element]) => sum + 1 + Buffer.byteLength(name, "utf8") + valueBytes(element),
      0,
    )
  );
}

/** An item's size: each attribute's name and value. */
function itemBytes(item: Record<string, AttributeValue>): number {
  return Object.entries(item).reduce(
    (sum, [name, value]) => sum + Buffer.byteLength(name, "utf8") + valueBytes(value),
    0,
  );
}

const STRINGS = ["", "a", "ascii text", "é", "日本語", "😀😀", "mixed é 日 😀", "$#|:"];

function randomValue(random: Random, depth: number): AttributeValue {
  const kind = random.int(0, depth > 0 ? 7 : 5);
  switch (kind) {
    case 0:
      return random.pick(STRINGS).repeat(random.int(0, 40));
    case 1:
      return random.pick([0, 1, -1, 7.5, 0.1 + 0.2, 123456789012345680, 1e21, -2.5e-7, 2 ** 53]);
    case 2:
      return random.chance(0.5);
    case 3:
      return null;
    case 4:
    case 5:
      return payload(random.int(0, 300), random.int(0, 1_000_000));
    case 6:
      return Array.from({ length: random.int(0, 5) }, () => randomValue(random, depth - 1));
    default:
      return Object.fromEntries(
        Array.from({ length: random.int(0, 5) }, (_, index) => [
          `${random.pick(STRINGS)}${index}`,
          randomValue(random, depth - 1),
        ]),
      );
  }
}

describe("estimateItemBytes", () => {
  const inline = (seed: number, size: number) => ({
    t: "json",
    z: 0 as const,
    v: payload(size, seed),
  });

  const checkpoint: CheckpointItem = {
    pk: threadPartitionKey("テナント", "スレッド😀"),
    sk: checkpointSortKey("agent:1ef0|tools:9ab", "1ef0a7c2-5d3b-6a1e-8000-0123456789ab"),
    k: ITEM_KIND.checkpoint,
    g: GENERATION,
    q: SEQUENCE,
    p: "1ef0a7c2-5d3b-6a1e-7fff-0123456789ab",
    cp: inline(1, 900),
    md: { t: "json", z: 1, v: payload(120, 2) },
    lc: '{"messages":"1ef0…","日本":"x"}',
    vals: {
      messages: { ...inline(3, 4000), ver: "00000000000000000000000000000002.0.123" },
      "ünïcödé 😀": { ...inline(4, 10), ver: "1" },
      empty: { ...inline(5, 0), ver: "" },
    },
    sp: 3,
    w: [{ q: "a1", v: payload(64, 6) }, { q: "a2", n: 2 }, { q: "a3" }],
  };
  const writes: WritesItem = {
    pk: PK,
    sk: `${CHECKPOINT_SK}#w#${SEQUENCE}`,
    k: ITEM_KIND.writes,
    g: GENERATION,
    ws: [
      { q: "b1", v: payload(2000, 7) },
      { q: "b2", n: 10_000 },
    ],
  };
  const chunk = chunkItems(PK, CHECKPOINT_SK, SEQUENCE, GENERATION, payload(CHUNK_BYTES, 8))[0]!;

  it.each([
    ["a checkpoint item with inline values, metadata and writes", checkpoint],
    ["a writes item", writes],
    ["a full chunk item", chunk],
    [
      "nested maps and lists",
      {
        pk: "p",
        sk: "s",
        deep: { a: { b: { c: [1, [2, [3, { d: "日本" }]], {}, []] } } },
        lists: [[], [[]], [null, true, false], ["😀", payload(10, 9)]],
        numbers: [0, -0.5, 1e21, 0.1 + 0.2, Number.MAX_SAFE_INTEGER, -1.7976931348623157e308],
      },
    ],
    ["strings only", { pk: "日本語".repeat(100), sk: "😀".repeat(100), s: "" }],
    ["binary only", { pk: "p", sk: "s", b: payload(1000, 10), e: new Uint8Array(0) }],
  ])("is at least the careful size of %s", (_, item) => {
    const careful = itemBytes(item as unknown as Record<string, AttributeValue>);
    expect(estimateItemBytes(item)).toBeGreaterThanOrEqual(careful);
  });

  it("is at least the careful size of random nested items", () => {
    const random = seededRandom(0x5123);
    const under: unknown[] = [];
    for (let iteration = 0; iteration < 500; iteration += 1) {
      const item: Record<string, AttributeValue> = { pk: PK, sk: CHECKPOINT_SK };
      for (let attribute = random.int(0, 6); attribute > 0; attribute -= 1) {
        item[`${random.pick(STRINGS)}${attribute}`] = randomValue(random, 4);
      }
      const careful = itemBytes(item);
      const estimate = estimateItemBytes(item);
      if (estimate < careful) under.push({ iteration, estimate, careful });
    }
    expect(under).toEqual([]);
  });

  it("counts strings and attribute names in UTF-8 bytes, not characters", () => {
    expect(estimateItemBytes("😀")).toBe(4);
    expect(estimateItemBytes("日本")).toBe(6);
    expect(estimateItemBytes({ é: "" })).toBeGreaterThanOrEqual(2);
    expect(estimateItemBytes({ é: "" }) - estimateItemBytes({ e: "" })).toBe(1);
  });

  it("keeps a chunk item with the longest keys within the item budget and DynamoDB's limit", () => {
    const longestPk = threadPartitionKey("日".repeat(256), "日".repeat(256));
    // The longest chunk key assertCheckpointKey lets through: 1,024 bytes with its `#x#<seq>#<nnnn>` suffix.
    const suffix = `#x#${"z".repeat(MAX_SEQUENCE_LENGTH)}#9999`;
    const item: ChunkItem = {
      pk: longestPk,
      sk: `n#${"n".repeat(MAX_SORT_KEY_BYTES - suffix.length - 4)}#c${suffix}`,
      k: ITEM_KIND.chunk,
      g: GENERATION,
      d: payload(CHUNK_BYTES, 11),
    };
    expect(Buffer.byteLength(item.sk)).toBe(MAX_SORT_KEY_BYTES);
    expect(estimateItemBytes(item)).toBeLessThanOrEqual(ITEM_BUDGET_BYTES);
    expect(ITEM_BUDGET_BYTES).toBeLessThan(DYNAMODB_ITEM_LIMIT);
  });
});
