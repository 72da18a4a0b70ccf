import { uuid6 } from "@langchain/langgraph-checkpoint";
import { InvalidIdentifierError } from "../../../src/shared/errors";
import { compareCodePoints } from "../../../src/shared/order";
import {
  assertCheckpointKey,
  assertNamespace,
  checkpointItemRange,
  checkpointPrefix,
  checkpointSortKey,
  chunkSortKey,
  decodeKeyPart,
  encodeKeyPart,
  MAX_CHUNKS,
  MAX_SEQUENCE_LENGTH,
  MAX_SORT_KEY_BYTES,
  NESTED_CHECKPOINT_PREFIX,
  parseAnyThreadPartitionKey,
  parseRunEventSortKey,
  parseSortKey,
  parseThreadPartitionKey,
  ROOT_CHECKPOINT_PREFIX,
  runEventRange,
  runEventSortKey,
  THREAD_RECORD_SK,
  tenantPartitionKey,
  threadPartitionKey,
  unsettledShard,
  writesSortKey,
} from "../../../src/table/keys";
import {
  compareUtf8,
  identifierString,
  relatedPair,
  seededRandom,
  sign,
  wellFormedString,
} from "../shared/random";

const LONGEST_SEQUENCE = "z".repeat(MAX_SEQUENCE_LENGTH);
const bytes = (value: string): number => Buffer.byteLength(value, "utf8");

/** DynamoDB's BETWEEN on a string sort key: both bounds included, compared by UTF-8 bytes. */
const between = (key: string, low: string, high: string): boolean =>
  compareUtf8(low, key) <= 0 && compareUtf8(key, high) <= 0;

/** Every key one checkpoint owns beyond its own: writes and chunks, with short and long sequences. */
function ownItemKeys(checkpointSk: string): string[] {
  return [
    writesSortKey(checkpointSk, "0"),
    writesSortKey(checkpointSk, "a1"),
    writesSortKey(checkpointSk, LONGEST_SEQUENCE),
    chunkSortKey(checkpointSk, "0", 0),
    chunkSortKey(checkpointSk, "a1", 7),
    chunkSortKey(checkpointSk, LONGEST_SEQUENCE, MAX_CHUNKS - 1),
  ];
}

// Ids where one is a prefix of another, with every kind of next character: below `#` (escaped), `#` and `$`
// themselves (escaped), just above `$` (kept), letters, non-ASCII and astral.
const TRICKY_IDS = [
  "a",
  "a ",
  "a!",
  'a"',
  "a#",
  "a#w#1",
  "a#x#1#0000",
  "a$",
  "a$d",
  "a%",
  "a%20",
  "a0",
  "aa",
  "a~",
  "aé",
  "a\ue000",
  "a😀",
  "b",
  "#",
  "$",
  " ",
  "%",
  "😀",
  "\uffff",
  "1ef0a7c2-5d3b-6a1e-8000-0123456789ab",
  "1ef0a7c2-5d3b-6a1e-8001-0123456789ab",
];
const NAMESPACES = ["", "a", "a#b", "a|b", "node:1|sub:2", "a$", "a ", "a😀", "b"];

describe("encodeKeyPart and decodeKeyPart", () => {
  it("escapes every character up to `$` as `$` and one of `@`..`d`, and leaves the rest", () => {
    expect(encodeKeyPart("\u0000")).toBe("$@");
    expect(encodeKeyPart(" ")).toBe("$`");
    expect(encodeKeyPart("#")).toBe("$c");
    expect(encodeKeyPart("$")).toBe("$d");
    expect(encodeKeyPart("%")).toBe("%");
    expect(encodeKeyPart("a#b$c d")).toBe("a$cb$dc$`d");
    expect(encodeKeyPart("😀é")).toBe("😀é");
    expect(encodeKeyPart("")).toBe("");
  });

  it("round-trips every character up to `$` and random well-formed strings", () => {
    for (let code = 0; code <= 0x25; code += 1) {
      const value = `x${String.fromCharCode(code)}y`;
      expect(decodeKeyPart(encodeKeyPart(value))).toBe(value);
    }
    const random = seededRandom(11);
    const failures: string[] = [];
    for (let iteration = 0; iteration < 5_000; iteration += 1) {
      const value = wellFormedString(random, 10);
      if (decodeKeyPart(encodeKeyPart(value)) !== value) failures.push(value);
    }
    expect(failures).toEqual([]);
  });

  it("never produces `#`, and every encoded character sorts above `#`", () => {
    const random = seededRandom(12);
    const offending: string[] = [];
    for (let iteration = 0; iteration < 5_000; iteration += 1) {
      const value = wellFormedString(random, 10);
      const encoded = encodeKeyPart(value);
      if (encoded.includes("#") || [...encoded].some((c) => compareUtf8(c, "#") <= 0)) {
        offending.push(value);
      }
    }
    expect(offending).toEqual([]);
  });

  it("preserves order: encoded parts compare by UTF-8 bytes as the ids do by code point", () => {
    const random = seededRandom(13);
    const disagreements: Array<{ a: string; b: string }> = [];
    for (let iteration = 0; iteration < 10_000; iteration += 1) {
      const [a, b] = relatedPair(random, (r) => wellFormedString(r, 6));
      if (sign(compareCodePoints(a, b)) !== sign(compareUtf8(encodeKeyPart(a), encodeKeyPart(b)))) {
        disagreements.push({ a, b });
      }
    }
    expect(disagreements.slice(0, 5)).toEqual([]);
  });

  it("preserves order across every pair of escaped and kept characters", () => {
    const characters = [
      ...Array.from({ length: 0x30 }, (_, code) => String.fromCharCode(code)),
      "~",
      "é",
      "\ue000",
      "😀",
    ];
    const disagreements: string[][] = [];
    for (const a of characters) {
      for (const b of characters) {
        for (const [x, y] of [
          [a, b],
          [`${a}z`, b],
          [a, `${b}\u0000`],
        ] as const) {
          if (
            sign(compareUtf8(encodeKeyPart(x), encodeKeyPart(y))) !== sign(compareCodePoints(x, y))
          ) {
            disagreements.push([x, y]);
          }
        }
      }
    }
    expect(disagreements).toEqual([]);
  });
});

describe("thread partition keys", () => {
  it("is `<tenant>#<encoded thread id>` and parses back to the thread id", () => {
    expect(threadPartitionKey("acme", "t-1")).toBe("acme#t-1");
    for (const thread of ["t-1", "a#b", "$", "a b", "100%", "😀", "#", "x".repeat(256)]) {
      const pk = threadPartitionKey("acme", thread);
      expect(pk.startsWith("acme#")).toBe(true);
      expect(parseThreadPartitionKey("acme", pk)).toBe(thread);
    }
  });

  it("does not parse another tenant's key, even when one tenant id is a prefix of the other", () => {
    const pk = threadPartitionKey("acme", "t-1");
    expect(parseThreadPartitionKey("acm", pk)).toBeUndefined();
    expect(parseThreadPartitionKey("acmex", pk)).toBeUndefined();
    expect(parseThreadPartitionKey("other", pk)).toBeUndefined();
    expect(parseThreadPartitionKey("acme", threadPartitionKey("acme2", "t-1"))).toBeUndefined();
    // A thread id starting like another tenant's prefix does not make its key another tenant's.
    expect(parseThreadPartitionKey("a", threadPartitionKey("ab", "#c"))).toBeUndefined();
  });

  it("fits DynamoDB's partition key limit for the longest accepted ids", () => {
    for (const [tenant, thread] of [
      ["日".repeat(256), "日".repeat(256)],
      ["t".repeat(256), "$".repeat(256)],
      ["😀".repeat(128), "😀".repeat(128)],
    ]) {
      const pk = threadPartitionKey(tenant!, thread!);
      expect(bytes(pk)).toBeLessThanOrEqual(2048);
      expect(parseThreadPartitionKey(tenant!, pk)).toBe(thread);
    }
  });

  it("refuses a key over 2,048 bytes", () => {
    expect(() => threadPartitionKey("acme", "x".repeat(2048))).toThrow(InvalidIdentifierError);
  });
});

describe("sort keys", () => {
  it("lays out the documented prefixes", () => {
    expect(checkpointPrefix("")).toBe(ROOT_CHECKPOINT_PREFIX);
    expect(checkpointPrefix("a#b")).toBe(`${NESTED_CHECKPOINT_PREFIX}a$cb#`);
    expect(checkpointSortKey("", "id")).toBe("c#id");
    expect(checkpointSortKey("node:1|sub:2", "id")).toBe("n#node:1|sub:2#id");
    expect(writesSortKey("c#id", "k3")).toBe("c#id#w#k3");
    expect(chunkSortKey("c#id", "k3", 7)).toBe("c#id#x#k3#0007");
  });

  it("parses every kind of key back, in root and nested namespaces, for ids with special characters", () => {
    expect(parseSortKey(THREAD_RECORD_SK)).toEqual({ kind: "record" });
    for (const namespace of NAMESPACES) {
      for (const checkpointId of TRICKY_IDS) {
        const checkpointSk = checkpointSortKey(namespace, checkpointId);
        const common = { namespace, checkpointId, checkpointSk };
        expect(parseSortKey(checkpointSk)).toEqual({ kind: "checkpoint", ...common });
        expect(parseSortKey(writesSortKey(checkpointSk, "0a"))).toEqual({
          kind: "writes",
          ...common,
          sequence: "0a",
        });
        expect(parseSortKey(writesSortKey(checkpointSk, LONGEST_SEQUENCE))).toEqual({
          kind: "writes",
          ...common,
          sequence: LONGEST_SEQUENCE,
        });
        for (const index of [0, 9, 10, MAX_CHUNKS - 1]) {
          expect(parseSortKey(chunkSortKey(checkpointSk, "q1", index))).toEqual({
            kind: "chunk",
            ...common,
            sequence: "q1",
            index,
          });
        }
      }
    }
  });

  it("parses keys of random namespaces and ids back", () => {
    const random = seededRandom(21);
    for (let iteration = 0; iteration < 1_000; iteration += 1) {
      const namespace = random.chance(0.3) ? "" : identifierString(random, 6);
      const checkpointId = identifierString(random, 8);
      const checkpointSk = checkpointSortKey(namespace, checkpointId);
      expect(parseSortKey(chunkSortKey(checkpointSk, "s", 3))).toEqual({
        kind: "chunk",
        namespace,
        checkpointId,
        checkpointSk,
        sequence: "s",
        index: 3,
      });
    }
  });

  it.each(["", "x", "c", "n", "n#a", "mm", "c#a#q#1", "c#a#w", "c#a#w#1#2", "c#a#x#1", "n#a#b#w"])(
    "refuses %j, which no Memory Table key looks like",
    (sk) => {
      expect(() => parseSortKey(sk)).toThrow(RangeError);
    },
  );

  it("bounds the chunk index to 0..9999 and refuses non-integers", () => {
    expect(chunkSortKey("c#a", "q", 0)).toBe("c#a#x#q#0000");
    expect(chunkSortKey("c#a", "q", MAX_CHUNKS - 1)).toBe("c#a#x#q#9999");
    for (const index of [-1, MAX_CHUNKS, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => chunkSortKey("c#a", "q", index)).toThrow(RangeError);
    }
  });

  it("accepts write sequences of lowercase letters and digits up to 32, and refuses others", () => {
    expect(writesSortKey("c#a", LONGEST_SEQUENCE)).toBe(`c#a#w#${LONGEST_SEQUENCE}`);
    for (const sequence of ["", "A", "a-b", "a#", "é", `${LONGEST_SEQUENCE}z`]) {
      expect(() => writesSortKey("c#a", sequence)).toThrow(RangeError);
      expect(() => chunkSortKey("c#a", sequence, 0)).toThrow(RangeError);
    }
  });
});

describe("key order", () => {
  it("orders checkpoint keys of one namespace as their ids by code point", () => {
    const random = seededRandom(31);
    const disagreements: string[][] = [];
    for (let iteration = 0; iteration < 3_000; iteration += 1) {
      const [a, b] = relatedPair(random, (r) => identifierString(r, 6));
      const namespace = random.pick(NAMESPACES);
      const [x, y] = [checkpointSortKey(namespace, a), checkpointSortKey(namespace, b)];
      if (sign(compareUtf8(x, y)) !== sign(compareCodePoints(a, b))) disagreements.push([a, b]);
    }
    expect(disagreements).toEqual([]);
  });

  it("puts a checkpoint's writes and chunks strictly between it and the next checkpoint", () => {
    for (const namespace of NAMESPACES) {
      const sorted = TRICKY_IDS.map((id) => checkpointSortKey(namespace, id)).sort(compareUtf8);
      for (let index = 0; index < sorted.length; index += 1) {
        const own = sorted[index]!;
        const next = sorted[index + 1];
        for (const key of ownItemKeys(own)) {
          expect(compareUtf8(own, key)).toBeLessThan(0);
          if (next !== undefined) expect([key, compareUtf8(key, next)]).toEqual([key, -1]);
        }
      }
    }
  });

  it("keeps each namespace's keys together, apart from the thread record and other namespaces", () => {
    const all = NAMESPACES.flatMap((namespace) =>
      TRICKY_IDS.flatMap((id) => {
        const sk = checkpointSortKey(namespace, id);
        return [sk, ...ownItemKeys(sk)].map((key) => ({ namespace, key }));
      }),
    ).sort((x, y) => compareUtf8(x.key, y.key));
    // Each namespace is one contiguous run of the sorted keys.
    const runs = all.map((entry) => entry.namespace).filter((ns, i, list) => ns !== list[i - 1]);
    expect(runs).toHaveLength(NAMESPACES.length);
    // The root checkpoints sit below the thread record, the nested ones above it.
    for (const { namespace, key } of all) {
      expect(sign(compareUtf8(key, THREAD_RECORD_SK))).toBe(namespace === "" ? -1 : 1);
    }
  });

  it("lets one descending Query from `m` down to `c#` return the record, then the latest checkpoint's items, then it", () => {
    const ids = TRICKY_IDS;
    const latestId = [...ids].sort(compareCodePoints).at(-1)!;
    const latestSk = checkpointSortKey("", latestId);
    const keys = [
      THREAD_RECORD_SK,
      ...NAMESPACES.flatMap((namespace) =>
        ids.flatMap((id) => {
          const sk = checkpointSortKey(namespace, id);
          return [sk, ...ownItemKeys(sk)];
        }),
      ),
    ];
    const descending = keys
      .filter((key) => between(key, ROOT_CHECKPOINT_PREFIX, THREAD_RECORD_SK))
      .sort((x, y) => compareUtf8(y, x));
    const latestItems = ownItemKeys(latestSk);
    expect(descending[0]).toBe(THREAD_RECORD_SK);
    expect(new Set(descending.slice(1, 1 + latestItems.length))).toEqual(new Set(latestItems));
    expect(descending[1 + latestItems.length]).toBe(latestSk);
    expect(descending.every((key) => key === THREAD_RECORD_SK || key.startsWith("c#"))).toBe(true);
  });
});

describe("checkpointItemRange", () => {
  it("holds exactly the checkpoint's own keys among every key of the partition", () => {
    // Every key with its owning checkpoint key, and its UTF-8 bytes (encoded once: there are many compares).
    const keys = [{ key: THREAD_RECORD_SK, owner: THREAD_RECORD_SK }];
    for (const namespace of NAMESPACES) {
      for (const id of TRICKY_IDS) {
        const sk = checkpointSortKey(namespace, id);
        for (const key of [sk, ...ownItemKeys(sk)]) keys.push({ key, owner: sk });
      }
    }
    const encoded = keys.map((entry) => ({ ...entry, utf8: Buffer.from(entry.key) }));
    const strays: Array<{ checkpoint: string; key: string }> = [];
    for (const { key: sk } of keys) {
      if (sk === THREAD_RECORD_SK || parseSortKey(sk).kind !== "checkpoint") continue;
      const { low, high } = checkpointItemRange(sk);
      const [lowBytes, highBytes] = [Buffer.from(low), Buffer.from(high)];
      for (const { key, owner, utf8 } of encoded) {
        const inRange = Buffer.compare(lowBytes, utf8) <= 0 && Buffer.compare(utf8, highBytes) <= 0;
        if (inRange !== (owner === sk)) strays.push({ checkpoint: sk, key });
      }
    }
    expect(strays).toEqual([]);
  });

  it("holds exactly the own keys for random ids, many sharing prefixes", () => {
    const random = seededRandom(41);
    for (let round = 0; round < 40; round += 1) {
      const namespace = random.chance(0.5) ? "" : identifierString(random, 3);
      const base = identifierString(random, 3);
      const ids = new Set<string>([base]);
      while (ids.size < 12) ids.add(base + identifierString(random, 2));
      const owners = new Map<string, string>();
      for (const id of ids) {
        const sk = checkpointSortKey(namespace, id);
        for (const key of [sk, ...ownItemKeys(sk)]) owners.set(key, sk);
      }
      for (const id of ids) {
        const sk = checkpointSortKey(namespace, id);
        const { low, high } = checkpointItemRange(sk);
        const strays = [...owners].filter(
          ([key, owner]) => between(key, low, high) !== (owner === sk),
        );
        expect(strays).toEqual([]);
      }
    }
  });
});

describe("assertCheckpointKey", () => {
  /** The longest key a write to this checkpoint can add: its last chunk with the longest sequence. */
  const longestKeyBytes = (namespace: string, checkpointId: string): number =>
    bytes(
      chunkSortKey(checkpointSortKey(namespace, checkpointId), LONGEST_SEQUENCE, MAX_CHUNKS - 1),
    );
  /** Whether the key is accepted; anything but an InvalidIdentifierError counts as neither. */
  const accepts = (namespace: string, checkpointId: string): boolean | "other error" => {
    try {
      assertCheckpointKey(namespace, checkpointId);
      return true;
    } catch (error) {
      return error instanceof InvalidIdentifierError ? false : "other error";
    }
  };

  it("accepts typical LangGraph ids: uuid6 checkpoint ids in root and nested namespaces", () => {
    const id = uuid6(-1);
    const task = "1ef0a7c2-5d3b-6a1e-8000-0123456789ab";
    for (const namespace of [
      "",
      `agent:${task}`,
      `agent:${task}|tools:${task}`,
      `supervisor:${task}|research_team:${task}|web_search_agent:${task}`,
    ]) {
      expect(assertNamespace(namespace)).toBe(namespace);
      expect(() => assertCheckpointKey(namespace, id)).not.toThrow();
    }
  });

  it("accepts exactly the keys whose longest write key fits 1,024 bytes (ASCII namespace)", () => {
    const id = "1ef0a7c2-5d3b-6a1e-8000-0123456789ab";
    // `n#` + namespace + `#` + id, then `#x#` + 32-character sequence + `#9999`.
    const fixed = 2 + 1 + id.length + 3 + MAX_SEQUENCE_LENGTH + 5;
    const fitting = "a".repeat(MAX_SORT_KEY_BYTES - fixed);
    expect(longestKeyBytes(fitting, id)).toBe(MAX_SORT_KEY_BYTES);
    expect(accepts(fitting, id)).toBe(true);
    expect(accepts(`${fitting}a`, id)).toBe(false);
    expect(() => assertCheckpointKey(`${fitting}a`, id)).toThrow(/at most 1024 bytes, got 1025/);
  });

  it("accepts a key exactly when every key a write adds fits, whatever the characters' UTF-8 widths", () => {
    // Escaped characters take two bytes, accented letters two, CJK three, astral four (two code units).
    const wrong: unknown[] = [];
    for (const unit of ["a", "$", "#", "é", "日", "😀", "a$日😀", "node:x|"]) {
      for (const id of ["x", "1ef0a7c2-5d3b-6a1e-8000-0123456789ab", unit.repeat(40)]) {
        const namespaceOf = (repeats: number) => unit.repeat(repeats);
        // The most repeats whose longest key fits (the longest key grows with the namespace).
        let low = 1;
        let high = 1100;
        while (low < high) {
          const middle = Math.ceil((low + high) / 2);
          if (longestKeyBytes(namespaceOf(middle), id) <= MAX_SORT_KEY_BYTES) low = middle;
          else high = middle - 1;
        }
        const samples = [1, Math.floor(low / 2), low - 2, low - 1, low, low + 1, low + 2, low + 50];
        for (const repeats of samples.filter((count) => count >= 1)) {
          const namespace = namespaceOf(repeats);
          const longest = longestKeyBytes(namespace, id);
          const accepted = accepts(namespace, id);
          if (accepted !== longest <= MAX_SORT_KEY_BYTES) {
            wrong.push({ unit, repeats, id: id.length, longest, accepted });
          }
          if (accepted) {
            const sk = checkpointSortKey(namespace, id);
            expect(bytes(writesSortKey(sk, LONGEST_SEQUENCE))).toBeLessThanOrEqual(1024);
          }
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("accepts every root checkpoint id an identifier allows", () => {
    for (const unit of ["a", "$", "日", "😀"]) {
      const id = unit.repeat(256 / unit.length);
      expect(longestKeyBytes("", id)).toBeLessThanOrEqual(MAX_SORT_KEY_BYTES);
      expect(() => assertCheckpointKey("", id)).not.toThrow();
    }
  });
});

describe("run event keys", () => {
  const runId = "1ef-run/with#odd:chars";

  it("reads back the sequence and part a key holds, and refuses another run's key", () => {
    expect(parseRunEventSortKey(runId, runEventSortKey(runId, 1234, 7))).toEqual({
      seq: 1234,
      part: 7,
    });
    expect(() => parseRunEventSortKey(runId, runEventSortKey("other-run", 1, 0))).toThrow(
      RangeError,
    );
  });

  it("orders keys as the stream, and a range from a sequence holds exactly the later parts", () => {
    const keys = [
      [0, 0],
      [0, 1],
      [9, 0],
      [10, 0],
      [123, 2],
    ].map(([seq, part]) => runEventSortKey(runId, seq!, part!));
    expect([...keys].sort(compareCodePoints)).toEqual(keys);
    const { low, high } = runEventRange(runId, 9);
    expect(keys.filter((key) => key >= low && key <= high)).toEqual(keys.slice(2));
    // A run whose id extends this one's is outside the range.
    const other = runEventSortKey(`${runId}2`, 0, 0);
    expect(other >= low && other <= high).toBe(false);
  });
});

describe("the threads-unsettled index's keys", () => {
  it("reads tenant and thread back from any thread's partition key, and nothing from other partitions", () => {
    for (const threadId of ["plain", "with#hash", "ünïcode/slash", "a"]) {
      expect(parseAnyThreadPartitionKey(threadPartitionKey("tenant-1", threadId))).toEqual({
        tenantId: "tenant-1",
        threadId,
      });
    }
    expect(
      parseAnyThreadPartitionKey(tenantPartitionKey("tenant-1", "assistants")),
    ).toBeUndefined();
    expect(parseAnyThreadPartitionKey("no-separator")).toBeUndefined();
  });

  it("spreads threads over the shards, always the same shard for one thread", () => {
    const shards = new Set<string>();
    for (let index = 0; index < 200; index++) {
      const pk = threadPartitionKey("tenant-1", `thread-${index}`);
      expect(unsettledShard(pk, 10)).toBe(unsettledShard(pk, 10));
      shards.add(unsettledShard(pk, 10));
    }
    expect([...shards].sort()).toEqual(
      Array.from({ length: 10 }, (_, shard) => `u${shard}`).sort(),
    );
  });
});
