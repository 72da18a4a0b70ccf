import { isDeepStrictEqual } from "node:util";
import { brotliCompressSync } from "node:zlib";
import { decodePack, encodePack } from "../../../../src/checkpoint/dynamodb/pack";
import {
  MAX_INLINE_RECORD_BYTES,
  MAX_INLINE_VALUES_BYTES,
  MAX_INLINE_VALUE_BYTES,
  decodeLocations,
  decodePackParts,
  decodeWritesPack,
  planCheckpoint,
  planCommitBatch,
  planWriteRecord,
  type CheckpointPlan,
  type CheckpointPlanInput,
  type CommitRecord,
  type NewValue,
  type PendingWritePayload,
  type SpilledPart,
  type WritesPackHeader,
} from "../../../../src/checkpoint/dynamodb/write-planner";
import {
  CHUNK_BYTES,
  ITEM_BUDGET_BYTES,
  estimateItemBytes,
  joinChunks,
  type CheckpointItem,
  type EncodedPayload,
  type WriteRecord,
  type WritesItem,
} from "../../../../src/table/checkpoint-items";
import { checkpointSortKey, chunkSortKey, writesSortKey } from "../../../../src/table/keys";
import { seededRandom, sameBytes, type Random } from "./random";

const PK = "acme#thread-1";
const CHECKPOINT_ID = "1ef0a2b3-c4d5-6e7f-8a9b-0c1d2e3f4a5b";
const PARENT_ID = "1ef0a2b3-c4d5-6e7e-8a9b-0c1d2e3f4a5b";
const SK = checkpointSortKey("", CHECKPOINT_ID);
// The saver's sequences are 22 lowercase hex digits; keys allow up to 32.
const SEQUENCE = "0000018f2a3b4c5d0001abcdef";
const GENERATION = "g-1";

function payload(v: Uint8Array, t = "json", z: 0 | 1 = 0): EncodedPayload {
  return { t, z, v };
}

function filled(length: number, byte = 0x61): Uint8Array {
  return new Uint8Array(length).fill(byte);
}

function value(channel: string, v: Uint8Array, version = "1"): NewValue {
  return { channel, version, payload: payload(v) };
}

function planInput(overrides: Partial<CheckpointPlanInput> = {}): CheckpointPlanInput {
  return {
    pk: PK,
    sk: SK,
    checkpointId: CHECKPOINT_ID,
    generation: GENERATION,
    sequence: SEQUENCE,
    checkpoint: payload(filled(40, 0x7b)),
    metadata: payload(filled(30, 0x7d)),
    inherited: {},
    values: [],
    carriedWrites: [],
    compression: "brotli",
    ...overrides,
  };
}

function samePayload(a: EncodedPayload, b: EncodedPayload): boolean {
  return a.t === b.t && a.z === b.z && sameBytes(a.v, b.v);
}

type PackParts = ReturnType<typeof decodePackParts>;

/** The pack a plan's chunks hold (reassembled as a reader does), or undefined when it has none. */
function packOf(plan: CheckpointPlan): PackParts | undefined {
  const { item, chunks } = plan;
  if (chunks.length === 0 || item.q === undefined || item.sp === undefined) return undefined;
  const bytes = joinChunks(item.sk, item.q, item.sp, new Map(chunks.map((c) => [c.sk, c.d])));
  return bytes && decodePackParts(bytes);
}

/**
 * Every rule a checkpoint plan must keep, as a list of what it broke (empty when it keeps them all), so a
 * property run can name the case that broke one.
 */
function planViolations(input: CheckpointPlanInput, plan: CheckpointPlan): string[] {
  const found: string[] = [];
  const { item, chunks } = plan;

  [item, ...chunks].forEach((produced, index) => {
    const size = estimateItemBytes(produced);
    if (size > ITEM_BUDGET_BYTES) {
      found.push(
        `${index === 0 ? "the commit item" : `chunk ${index - 1}`} takes ${size} bytes, over ITEM_BUDGET_BYTES (${ITEM_BUDGET_BYTES})`,
      );
    }
  });
  if (item.pk !== input.pk || item.sk !== input.sk || item.k !== "c" || item.g !== input.generation)
    found.push("the commit item's key, kind or generation differ from the input's");
  if (item.p !== input.parentId) found.push(`parent ${item.p} instead of ${input.parentId}`);
  const carried = item.w ?? [];
  if (
    (input.carriedWrites.length === 0 && item.w !== undefined) ||
    carried.length !== input.carriedWrites.length ||
    carried.some((record, index) => record !== input.carriedWrites[index])
  ) {
    found.push("carried writes are not kept as given");
  }

  let parts: PackParts = new Map();
  if (chunks.length === 0) {
    if (item.q !== undefined || item.sp !== undefined) found.push("q or sp without chunks");
  } else {
    if (item.q !== input.sequence) found.push(`q is ${item.q}, not the write's sequence`);
    if (item.sp !== chunks.length) found.push(`sp is ${item.sp} for ${chunks.length} chunks`);
    chunks.forEach((chunk, index) => {
      if (
        chunk.pk !== input.pk ||
        chunk.sk !== chunkSortKey(input.sk, input.sequence, index) ||
        chunk.k !== "x" ||
        chunk.g !== input.generation
      ) {
        found.push(`chunk ${index} has the wrong key, kind or generation`);
      }
    });
    const pack = packOf(plan);
    if (pack === undefined) found.push("the chunks do not reassemble");
    else parts = pack;
  }
  const expectedParts = new Set<string>();

  for (const [name, expected] of [
    ["cp", input.checkpoint],
    ["md", input.metadata],
  ] as const) {
    const inline = item[name];
    const packed = parts.get(name)?.payload;
    if ((inline === undefined) === (packed === undefined)) {
      found.push(`${name} is ${inline ? "both inline and packed" : "nowhere"}`);
    } else if (!samePayload((inline ?? packed)!, expected)) {
      found.push(`${name} reads back different from what was put`);
    }
    if (packed) expectedParts.add(name);
  }

  let inlineBytes = 0;
  const ownChannels = new Set(input.values.map((v) => v.channel));
  for (const channel of Object.keys(item.vals)) {
    if (!ownChannels.has(channel)) found.push(`vals holds ${channel}, which is not a new value`);
  }
  for (const own of input.values) {
    const inline = Object.hasOwn(item.vals, own.channel) ? item.vals[own.channel] : undefined;
    const packed = parts.get(`v:${own.channel}`);
    if ((inline === undefined) === (packed === undefined)) {
      found.push(`value ${own.channel} is ${inline ? "both inline and packed" : "nowhere"}`);
      continue;
    }
    if (inline) {
      if (inline.ver !== own.version || !samePayload(inline, own.payload))
        found.push(`inline value ${own.channel} reads back different`);
      if (own.payload.v.byteLength > MAX_INLINE_VALUE_BYTES)
        found.push(`value ${own.channel} of ${own.payload.v.byteLength} bytes is inline`);
      inlineBytes += 1 + Buffer.byteLength(own.channel) + estimateItemBytes(inline);
    } else {
      expectedParts.add(`v:${own.channel}`);
      if (packed!.version !== own.version || !samePayload(packed!.payload, own.payload))
        found.push(`packed value ${own.channel} reads back different`);
    }
  }
  if (inlineBytes > MAX_INLINE_VALUES_BYTES)
    found.push(`inline values take ${inlineBytes} bytes together`);

  const expectedLocations: Record<string, string> = { ...input.inherited };
  for (const own of input.values) expectedLocations[own.channel] = input.checkpointId;
  if (!isDeepStrictEqual(plan.locations, expectedLocations))
    found.push("plan.locations differ from the inherited and own channels");
  const packedLocations = parts.get("lc")?.payload;
  if (packedLocations) expectedParts.add("lc");
  if (item.lc !== undefined && packedLocations !== undefined)
    found.push("locations are both inline and packed");
  const spilledOwn = input.values.some((own) => parts.has(`v:${own.channel}`));
  const hasLocations = item.lc !== undefined || packedLocations !== undefined;
  if (hasLocations !== (Object.keys(input.inherited).length > 0 || spilledOwn))
    found.push(`locations ${hasLocations ? "stored with nothing to say" : "missing"}`);
  const decoded = decodeLocations(
    item.lc ?? packedLocations,
    input.checkpointId,
    Object.keys(item.vals),
  );
  if (!isDeepStrictEqual(decoded, plan.locations))
    found.push("decoded locations differ from plan.locations");

  for (const name of parts.keys()) {
    if (!expectedParts.has(name)) found.push(`the pack holds an unexpected part ${name}`);
  }
  if (chunks.length > 0 && parts.size === 0) found.push("chunks written for an empty pack");
  return found;
}

/** `length` payload bytes that make a writes pack of exactly `target` bytes (its header counts the length). */
function payloadLengthForPack(header: WritesPackHeader, target: number): number {
  let length = target;
  for (let round = 0; round < 4; round += 1) {
    const size = encodePack(header, [new Uint8Array(length)]).byteLength;
    length -= size - target;
  }
  return length;
}

/** A checkpoint item whose estimate is exactly `size` bytes (one padding value). */
function checkpointItemOfSize(sk: string, generation: string, size: number): CheckpointItem {
  const item: CheckpointItem = {
    pk: PK,
    sk,
    k: "c",
    g: generation,
    vals: { pad: { t: "json", z: 0, v: new Uint8Array(0), ver: "1" } },
  };
  item.vals.pad!.v = new Uint8Array(size - estimateItemBytes(item));
  return item;
}

function writesRecord(
  checkpointSk: string,
  generation: string,
  q: string,
  bytes: number,
): Extract<CommitRecord, { kind: "writes" }> {
  return {
    kind: "writes",
    pk: PK,
    checkpointSk,
    generation,
    record: { q, v: new Uint8Array(bytes) },
  };
}

describe("planCheckpoint", () => {
  it("keeps a small checkpoint in one item: body, metadata and values inline, no chunks", () => {
    const input = planInput({
      parentId: PARENT_ID,
      values: [value("messages", filled(300)), value("step", filled(2), "7")],
    });
    const plan = planCheckpoint(input);

    expect(planViolations(input, plan)).toEqual([]);
    expect(plan.chunks).toEqual([]);
    expect(plan.item).not.toHaveProperty("q");
    expect(plan.item).not.toHaveProperty("sp");
    // Nothing inherited and nothing spilled: the keys of `vals` say everything.
    expect(plan.item).not.toHaveProperty("lc");
    expect(plan.item.p).toBe(PARENT_ID);
    expect(Object.keys(plan.item.vals).sort()).toEqual(["messages", "step"]);
    expect(plan.item.vals.step?.ver).toBe("7");
  });

  it("inlines a value of exactly 64 KB and packs one a byte larger, with its version", () => {
    const input = planInput({
      values: [
        value("fits", filled(MAX_INLINE_VALUE_BYTES), "3"),
        value("over", filled(MAX_INLINE_VALUE_BYTES + 1), "4"),
      ],
    });
    const plan = planCheckpoint(input);

    expect(planViolations(input, plan)).toEqual([]);
    expect(Object.keys(plan.item.vals)).toEqual(["fits"]);
    const pack = packOf(plan)!;
    expect([...pack.keys()]).toEqual(["v:over"]);
    expect(pack.get("v:over")?.version).toBe("4");
    expect(plan.item.q).toBe(SEQUENCE);
    expect(plan.item.sp).toBe(plan.chunks.length);
    expect(plan.locations).toEqual({ fits: CHECKPOINT_ID, over: CHECKPOINT_ID });
  });

  it("keeps inline values within 256 KB together, smallest first", () => {
    // Five 60 KB values cannot all be inline (5 x 60 KB > 256 KB); the tiny ones, listed last, still are.
    const big = Array.from({ length: 5 }, (_, i) => value(`big-${i}`, filled(60 * 1024)));
    const tiny = Array.from({ length: 20 }, (_, i) => value(`tiny-${i}`, filled(10)));
    const input = planInput({ values: [...big, ...tiny] });
    const plan = planCheckpoint(input);

    expect(planViolations(input, plan)).toEqual([]);
    const inline = Object.keys(plan.item.vals);
    for (const small of tiny) expect(inline).toContain(small.channel);
    expect(inline.filter((channel) => channel.startsWith("big-"))).toHaveLength(4);
    expect([...packOf(plan)!.keys()].filter((name) => name.startsWith("v:big-"))).toHaveLength(1);
  });

  it("packs a checkpoint body or metadata that does not fit, keeping its type and codec", () => {
    const largeBody = planInput({ checkpoint: payload(filled(400 * 1024), "json", 1) });
    const bodyPlan = planCheckpoint(largeBody);
    expect(planViolations(largeBody, bodyPlan)).toEqual([]);
    expect(bodyPlan.item.cp).toBeUndefined();
    expect(bodyPlan.item.md).toBeDefined();
    expect(packOf(bodyPlan)?.get("cp")?.payload).toMatchObject({ t: "json", z: 1 });

    const largeMetadata = planInput({ metadata: payload(filled(400 * 1024), "bytes", 0) });
    const metadataPlan = planCheckpoint(largeMetadata);
    expect(planViolations(largeMetadata, metadataPlan)).toEqual([]);
    expect(metadataPlan.item.cp).toBeDefined();
    expect(metadataPlan.item.md).toBeUndefined();
    expect(packOf(metadataPlan)?.get("md")?.payload).toMatchObject({ t: "bytes", z: 0 });
  });

  it("lists inherited channels by holder: JSON text uncompressed, brotli bytes when that is smaller", () => {
    const inherited: Record<string, string> = {};
    for (let i = 0; i < 200; i += 1) inherited[`channel-${i}`] = i % 2 ? PARENT_ID : "1ef-older";

    const plain = planInput({ inherited, compression: "none" });
    const plainPlan = planCheckpoint(plain);
    expect(planViolations(plain, plainPlan)).toEqual([]);
    expect(typeof plainPlan.item.lc).toBe("string");
    const byHolder = JSON.parse(plainPlan.item.lc as string) as Record<string, string[]>;
    expect(Object.keys(byHolder).sort()).toEqual(["1ef-older", PARENT_ID].sort());
    expect(byHolder[PARENT_ID]).toHaveLength(100);

    const compressed = planInput({ inherited, compression: "brotli" });
    const compressedPlan = planCheckpoint(compressed);
    expect(planViolations(compressed, compressedPlan)).toEqual([]);
    expect(compressedPlan.item.lc).toBeInstanceOf(Uint8Array);
    expect((compressedPlan.item.lc as Uint8Array).byteLength).toBeLessThan(
      Buffer.byteLength(plainPlan.item.lc as string),
    );
  });

  it("lists own values that went to the pack under the empty holder", () => {
    const input = planInput({
      compression: "none",
      inherited: { kept: PARENT_ID },
      values: [value("small", filled(5)), value("large", filled(MAX_INLINE_VALUE_BYTES + 1))],
    });
    const plan = planCheckpoint(input);
    expect(planViolations(input, plan)).toEqual([]);
    expect(JSON.parse(plan.item.lc as string)).toEqual({ [PARENT_ID]: ["kept"], "": ["large"] });
  });

  it("moves locations into the pack when they do not fit in the item", () => {
    // 6,000 inherited channels with long names: their listing alone is larger than an item.
    const inherited: Record<string, string> = {};
    for (let i = 0; i < 6000; i += 1)
      inherited[`${"long-channel-name-".repeat(3)}${i}`] = PARENT_ID;
    const input = planInput({ inherited, compression: "none" });
    const plan = planCheckpoint(input);

    expect(planViolations(input, plan)).toEqual([]);
    expect(plan.item.lc).toBeUndefined();
    const packed = packOf(plan)?.get("lc");
    expect(packed?.payload.z).toBe(0);
    expect(decodeLocations(packed?.payload, CHECKPOINT_ID, [])).toEqual(inherited);
  });

  it("copies the carried writes into a new list on the item", () => {
    const carried: WriteRecord[] = [
      { q: "0000018f2a3b4c5d0001aaaaaa", v: filled(100) },
      { q: "0000018f2a3b4c5d0002bbbbbb", n: 2 },
    ];
    const input = planInput({ carriedWrites: carried });
    const plan = planCheckpoint(input);
    expect(planViolations(input, plan)).toEqual([]);
    expect(plan.item.w).toEqual(carried);
    expect(plan.item.w).not.toBe(carried);
  });

  it("keeps the commit item within ITEM_BUDGET_BYTES once it names its chunks", () => {
    // The body would fill the item to the budget exactly: something goes to the pack, and the item gains `q` and
    // `sp`, which must fit too.
    const empty = payload(new Uint8Array(0));
    const bare = estimateItemBytes({ pk: PK, sk: SK, k: "c", g: GENERATION, vals: {} });
    const bodyLength = ITEM_BUDGET_BYTES - bare - (1 + "cp".length + estimateItemBytes(empty));
    const input = planInput({ checkpoint: payload(filled(bodyLength)), metadata: empty });
    const plan = planCheckpoint(input);

    expect(plan.item.cp === undefined || plan.item.md === undefined).toBe(true);
    expect(plan.chunks.length).toBeGreaterThan(0);
    expect(plan.item.q).toBeDefined();
    expect(estimateItemBytes(plan.item)).toBeLessThanOrEqual(ITEM_BUDGET_BYTES);
  });

  it("keeps every rule on random checkpoints (seeded)", () => {
    const random = seededRandom(0x5eed1);
    const failures: string[] = [];
    // How often each branch was taken: the cases must reach them all, or they prove little.
    const reached = { chunkless: 0, cp: 0, md: 0, lc: 0, lcInline: 0, value: 0 };
    for (let index = 0; index < 40; index += 1) {
      const input = randomCheckpointInput(random);
      const plan = planCheckpoint(input);
      const broken = planViolations(input, plan);
      if (broken.length > 0) {
        failures.push(
          `case ${index} (${input.values.length} own, ${Object.keys(input.inherited).length} inherited): ${broken.join("; ")}`,
        );
      }
      const parts = packOf(plan) ?? new Map();
      if (plan.chunks.length === 0) reached.chunkless += 1;
      if (plan.item.lc !== undefined) reached.lcInline += 1;
      for (const name of ["cp", "md", "lc"] as const) if (parts.has(name)) reached[name] += 1;
      if ([...parts.keys()].some((name) => name.startsWith("v:"))) reached.value += 1;
    }
    expect(failures).toEqual([]);
    for (const count of Object.values(reached)) expect(count).toBeGreaterThan(0);
  });
});

const HOLDERS = [PARENT_ID, "1ef0a2b3-0000-6e7d-8a9b-0c1d2e3f4a5b", "1ef0a2b3-1111-6e7c-8a9b-0c1d"];

function randomSequence(random: Random): string {
  return Array.from({ length: 22 }, () => random.int(0, 15).toString(16)).join("");
}

function randomValueSize(random: Random): number {
  const draw = random.next();
  if (draw < 0.55) return random.int(0, 200);
  if (draw < 0.8) return random.int(200, 8 * 1024);
  // Right at the inline limit.
  if (draw < 0.85) return MAX_INLINE_VALUE_BYTES + random.int(-1, 1);
  if (draw < 0.97) return random.int(8 * 1024, 100 * 1024);
  return random.int(100 * 1024, 1.5 * 1024 * 1024);
}

/**
 * A random put: 0 to 3,000 channels, each inherited or new, incompressible values of 0 to 1.5 MB (at most
 * 6 MB per case, so the file stays fast), bodies and metadata up to 500 KB, some carried writes.
 */
function randomCheckpointInput(random: Random): CheckpointPlanInput {
  const channelCount = random.pick([8, 8, 300, 3000]);
  const count = random.int(0, channelCount);
  const inheritShare = random.next();
  const holders = HOLDERS.slice(0, random.int(1, HOLDERS.length));
  const style = random.pick(["short", "long", "unicode"] as const);
  const inherited: Record<string, string> = {};
  const values: NewValue[] = [];
  let valueBytes = 6 * 1024 * 1024;
  for (let i = 0; i < count; i += 1) {
    const channel =
      style === "short"
        ? `c${i}`
        : style === "long"
          ? `channel-${i}-${"x".repeat(random.int(0, 80))}`
          : `канал-${i}-日本`;
    if (random.chance(inheritShare)) {
      inherited[channel] = random.pick(holders);
      continue;
    }
    const size = Math.min(randomValueSize(random), valueBytes);
    valueBytes -= size;
    values.push({
      channel,
      version: `${String(random.int(1, 999)).padStart(32, "0")}.0.${random.next()}`,
      payload: payload(
        random.bytes(size),
        random.pick(["json", "bytes"]),
        random.chance(0.3) ? 1 : 0,
      ),
    });
  }
  const carriedWrites: WriteRecord[] = Array.from({ length: random.int(0, 3) }, () =>
    random.chance(0.7)
      ? { q: randomSequence(random), v: random.bytes(random.int(0, 30 * 1024)) }
      : { q: randomSequence(random), n: random.int(1, 4) },
  );
  return planInput({
    sequence: randomSequence(random),
    parentId: random.chance(0.5) ? PARENT_ID : undefined,
    checkpoint: payload(
      random.bytes(random.chance(0.7) ? random.int(0, 2048) : random.int(2048, 500 * 1024)),
    ),
    metadata: payload(
      random.bytes(random.chance(0.7) ? random.int(0, 1024) : random.int(1024, 400 * 1024)),
    ),
    inherited,
    values,
    carriedWrites,
    compression: random.pick(["brotli", "none"] as const),
  });
}

describe("decodeLocations", () => {
  it("gives the inline channels to the checkpoint itself when nothing is stored", () => {
    expect(decodeLocations(undefined, CHECKPOINT_ID, ["a", "b"])).toEqual({
      a: CHECKPOINT_ID,
      b: CHECKPOINT_ID,
    });
    expect(decodeLocations(undefined, CHECKPOINT_ID, [])).toEqual({});
  });

  it("reads JSON text, brotli bytes and pack payloads alike, mapping the empty holder to the checkpoint", () => {
    const byHolder = { [PARENT_ID]: ["x", "y"], "": ["spilled"] };
    const expected = { x: PARENT_ID, y: PARENT_ID, spilled: CHECKPOINT_ID, inline: CHECKPOINT_ID };
    const text = JSON.stringify(byHolder);
    const brotli = new Uint8Array(brotliCompressSync(Buffer.from(text)));
    for (const stored of [
      text,
      brotli,
      payload(new TextEncoder().encode(text), "json", 0),
      payload(brotli, "json", 1),
    ]) {
      expect(decodeLocations(stored, CHECKPOINT_ID, ["inline"])).toEqual(expected);
    }
  });
});

describe("decodePackParts", () => {
  it("names each part of a checkpoint's pack, with the type, codec and version it was stored with", () => {
    const header: SpilledPart[] = [
      ["cp", "json", 1],
      ["v:messages", "bytes", 0, "00000000000000000000000000000004.0.5"],
    ];
    const parts = decodePackParts(encodePack(header, [filled(3, 1), filled(4, 2)]));
    expect([...parts.keys()]).toEqual(["cp", "v:messages"]);
    expect(parts.get("cp")?.payload).toMatchObject({ t: "json", z: 1 });
    expect(sameBytes(parts.get("cp")?.payload.v, filled(3, 1))).toBe(true);
    expect(parts.get("v:messages")).toMatchObject({
      payload: { t: "bytes", z: 0 },
      version: "00000000000000000000000000000004.0.5",
    });
    expect(sameBytes(parts.get("v:messages")?.payload.v, filled(4, 2))).toBe(true);
  });
});

const WRITES_INPUT = {
  pk: PK,
  checkpointSk: SK,
  generation: GENERATION,
  sequence: SEQUENCE,
  taskId: "task-1",
  taskPath: "~__pregel_pull, agent",
};

function expectSameWrites(actual: PendingWritePayload[], expected: PendingWritePayload[]): void {
  expect(actual.map(({ channel, index, payload: p }) => [channel, index, p.t, p.z])).toEqual(
    expected.map(({ channel, index, payload: p }) => [channel, index, p.t, p.z]),
  );
  actual.forEach((write, position) => {
    expect(sameBytes(write.payload.v, expected[position]!.payload.v)).toBe(true);
  });
}

describe("planWriteRecord", () => {
  const writes: PendingWritePayload[] = [
    { channel: "messages", index: 0, payload: payload(filled(20)) },
    { channel: "__error__", index: -1, payload: payload(filled(300), "json", 1) },
    { channel: "ступень", index: 1, payload: payload(filled(7), "bytes", 0) },
    { channel: "__interrupt__", index: -3, payload: payload(new Uint8Array(0), "msgpack", 1) },
  ];

  it("keeps a small call inline as one pack that round-trips every field", () => {
    const { record, chunks } = planWriteRecord({ ...WRITES_INPUT, writes });
    expect(chunks).toEqual([]);
    expect(record.q).toBe(SEQUENCE);
    expect(record.n).toBeUndefined();
    const decoded = decodeWritesPack(record.v!);
    expect(decoded.taskId).toBe(WRITES_INPUT.taskId);
    expect(decoded.taskPath).toBe(WRITES_INPUT.taskPath);
    expectSameWrites(decoded.writes, writes);
  });

  it("writes the short header entry for uncompressed JSON only", () => {
    const { record } = planWriteRecord({ ...WRITES_INPUT, writes });
    const [, , entries] = decodePack<WritesPackHeader>(record.v!).header;
    expect(entries).toEqual([
      ["messages", 0],
      ["__error__", -1, "json", 1],
      ["ступень", 1, "bytes", 0],
      ["__interrupt__", -3, "msgpack", 1],
    ]);
  });

  it("stores a call without writes inline", () => {
    const { record, chunks } = planWriteRecord({ ...WRITES_INPUT, writes: [] });
    expect(chunks).toEqual([]);
    expect(decodeWritesPack(record.v!)).toEqual({
      taskId: WRITES_INPUT.taskId,
      taskPath: WRITES_INPUT.taskPath,
      writes: [],
    });
  });

  it("inlines a pack of exactly MAX_INLINE_RECORD_BYTES and chunks one a byte larger", () => {
    const header: WritesPackHeader = [WRITES_INPUT.taskId, WRITES_INPUT.taskPath, [["big", 0]]];
    const length = payloadLengthForPack(header, MAX_INLINE_RECORD_BYTES);
    const at = planWriteRecord({
      ...WRITES_INPUT,
      writes: [{ channel: "big", index: 0, payload: payload(filled(length)) }],
    });
    expect(at.chunks).toEqual([]);
    expect(at.record.v?.byteLength).toBe(MAX_INLINE_RECORD_BYTES);

    const overWrites = [{ channel: "big", index: 0, payload: payload(filled(length + 1)) }];
    const over = planWriteRecord({ ...WRITES_INPUT, writes: overWrites });
    expect(over.record).toEqual({ q: SEQUENCE, n: 1 });
    const joined = joinChunks(SK, SEQUENCE, 1, new Map(over.chunks.map((c) => [c.sk, c.d])));
    expect(joined?.byteLength).toBe(MAX_INLINE_RECORD_BYTES + 1);
    expectSameWrites(decodeWritesPack(joined!).writes, overWrites);
  });

  it("names the chunks of a large call after its checkpoint and sequence, in its generation", () => {
    const large = [
      { channel: "file", index: 0, payload: payload(filled(CHUNK_BYTES * 3), "bytes") },
    ];
    const { record, chunks } = planWriteRecord({ ...WRITES_INPUT, writes: large });
    expect(record).toEqual({ q: SEQUENCE, n: 4 });
    chunks.forEach((chunk, index) => {
      expect(chunk).toMatchObject({
        pk: PK,
        sk: chunkSortKey(SK, SEQUENCE, index),
        k: "x",
        g: GENERATION,
      });
      expect(estimateItemBytes(chunk)).toBeLessThanOrEqual(ITEM_BUDGET_BYTES);
    });
  });

  it("round-trips random calls, inline up to MAX_INLINE_RECORD_BYTES and chunked above (seeded)", () => {
    const random = seededRandom(0x5eed2);
    for (let round = 0; round < 40; round += 1) {
      const randomWrites: PendingWritePayload[] = Array.from(
        { length: random.int(0, 40) },
        (_, position) => ({
          channel: random.pick(["messages", "__error__", "канал", `c-${position}`]),
          index: random.int(-4, 50),
          payload: payload(
            random.bytes(random.chance(0.9) ? random.int(0, 4096) : random.int(4096, 400 * 1024)),
            random.pick(["json", "bytes", "msgpack"]),
            random.chance(0.5) ? 1 : 0,
          ),
        }),
      );
      const input = {
        ...WRITES_INPUT,
        sequence: randomSequence(random),
        taskPath: random.pick(["", "~__pregel_push, 1", "ветка"]),
        writes: randomWrites,
      };
      const { record, chunks } = planWriteRecord(input);
      expect(record.q).toBe(input.sequence);
      let pack: Uint8Array;
      if (record.v !== undefined) {
        expect(chunks).toEqual([]);
        expect(record.n).toBeUndefined();
        expect(record.v.byteLength).toBeLessThanOrEqual(MAX_INLINE_RECORD_BYTES);
        pack = record.v;
      } else {
        expect(record.n).toBe(chunks.length);
        for (const chunk of chunks)
          expect(estimateItemBytes(chunk)).toBeLessThanOrEqual(ITEM_BUDGET_BYTES);
        pack = joinChunks(
          SK,
          input.sequence,
          chunks.length,
          new Map(chunks.map((c) => [c.sk, c.d])),
        )!;
        expect(pack.byteLength).toBeGreaterThan(MAX_INLINE_RECORD_BYTES);
      }
      const decoded = decodeWritesPack(pack);
      expect([decoded.taskId, decoded.taskPath]).toEqual([input.taskId, input.taskPath]);
      expectSameWrites(decoded.writes, randomWrites);
    }
  });
});

describe("planCommitBatch", () => {
  const OTHER_SK = checkpointSortKey("", PARENT_ID);
  const Q1 = "0000018f2a3b4c5d0001aaaaaa";
  const Q2 = "0000018f2a3b4c5d0002bbbbbb";
  const Q3 = "0000018f2a3b4c5d0003cccccc";

  it("puts a call inside its checkpoint's item when both are in the batch, in one generation, and it fits", () => {
    const item = checkpointItemOfSize(SK, GENERATION, 1000);
    const first = writesRecord(SK, GENERATION, Q1, 100);
    const second = writesRecord(SK, GENERATION, Q2, 200);
    // A call listed before its checkpoint joins it all the same.
    const items = planCommitBatch([first, { kind: "checkpoint", item }, second]);
    expect(items).toEqual([item]);
    expect(item.w).toEqual([first.record, second.record]);
  });

  it("appends to the writes a checkpoint item carries", () => {
    const item = checkpointItemOfSize(SK, GENERATION, 1000);
    const carried = { q: Q1, v: filled(10) };
    item.w = [carried];
    const call = writesRecord(SK, GENERATION, Q2, 10);
    planCommitBatch([{ kind: "checkpoint", item }, call]);
    expect(item.w).toEqual([carried, call.record]);
  });

  it("keeps a call of another generation out of the checkpoint's item", () => {
    const item = checkpointItemOfSize(SK, GENERATION, 1000);
    const stale = writesRecord(SK, "g-0", Q1, 10);
    const items = planCommitBatch([{ kind: "checkpoint", item }, stale]);
    expect(item.w).toBeUndefined();
    expect(items).toEqual([
      item,
      { pk: PK, sk: writesSortKey(SK, Q1), k: "w", g: "g-0", ws: [stale.record] },
    ]);
  });

  it("gathers the calls of one checkpoint not in the batch into one writes item, per checkpoint", () => {
    const a1 = writesRecord(SK, GENERATION, Q1, 10);
    const b = writesRecord(OTHER_SK, GENERATION, Q2, 10);
    const a2 = writesRecord(SK, GENERATION, Q3, 10);
    expect(planCommitBatch([a1, b, a2])).toEqual([
      { pk: PK, sk: writesSortKey(SK, Q1), k: "w", g: GENERATION, ws: [a1.record, a2.record] },
      { pk: PK, sk: writesSortKey(OTHER_SK, Q2), k: "w", g: GENERATION, ws: [b.record] },
    ]);
  });

  it("never lets two generations share a writes item", () => {
    const items = planCommitBatch([
      writesRecord(SK, "g-1", Q1, 10),
      writesRecord(SK, "g-2", Q2, 10),
      writesRecord(SK, "g-1", Q3, 10),
    ]) as WritesItem[];
    expect(items.map((item) => [item.g, item.ws.map((record) => record.q)])).toEqual([
      ["g-1", [Q1]],
      ["g-2", [Q2]],
      ["g-1", [Q3]],
    ]);
  });

  it("moves a call that would push its checkpoint's item over the budget to a writes item", () => {
    const item = checkpointItemOfSize(SK, GENERATION, ITEM_BUDGET_BYTES - 1000);
    const call = writesRecord(SK, GENERATION, Q1, 2000);
    const items = planCommitBatch([{ kind: "checkpoint", item }, call]);
    expect(item.w).toBeUndefined();
    expect(items).toHaveLength(2);
    expect((items[1] as WritesItem).ws).toEqual([call.record]);
  });

  it("starts another writes item when the first is full, never splitting a call", () => {
    const calls = [Q1, Q2, Q3].map((q) => writesRecord(SK, GENERATION, q, 200 * 1024));
    const items = planCommitBatch(calls) as WritesItem[];
    expect(items.map((item) => item.ws)).toEqual(calls.map((call) => [call.record]));
    for (const item of items)
      expect(estimateItemBytes(item)).toBeLessThanOrEqual(ITEM_BUDGET_BYTES);
  });

  it("keeps a checkpoint item within the budget when a call fills it exactly", () => {
    const item = checkpointItemOfSize(SK, GENERATION, 1000);
    const empty = estimateItemBytes({ q: Q1, v: new Uint8Array(0) });
    // What the batch counts for the first call of an item: the record, its list slot and the `w` list.
    const length = ITEM_BUDGET_BYTES - 1000 - (1 + empty) - 4;
    const items = planCommitBatch([
      { kind: "checkpoint", item },
      writesRecord(SK, GENERATION, Q1, length),
    ]);
    for (const produced of items)
      expect(estimateItemBytes(produced)).toBeLessThanOrEqual(ITEM_BUDGET_BYTES);
  });

  it("keeps every rule on random batches (seeded)", () => {
    const random = seededRandom(0x5eed3);
    const checkpointSks = Array.from({ length: 6 }, (_, i) =>
      checkpointSortKey(random.pick(["", "sub:1"]), `1ef0a2b3-c4d5-6e7f-8a9b-00000000000${i}`),
    );
    for (let round = 0; round < 50; round += 1) {
      const checkpoints = new Map<string, CheckpointItem>();
      for (const sk of checkpointSks) {
        if (!random.chance(0.4)) continue;
        const size = random.chance(0.3)
          ? ITEM_BUDGET_BYTES - random.int(0, 4096)
          : random.int(500, ITEM_BUDGET_BYTES);
        checkpoints.set(sk, checkpointItemOfSize(sk, random.pick(["g-1", "g-1", "g-2"]), size));
      }
      const calls: Array<Extract<CommitRecord, { kind: "writes" }>> = [];
      for (let i = random.int(0, 30); i > 0; i -= 1) {
        const record: WriteRecord = random.chance(0.1)
          ? { q: randomSequence(random), n: random.int(1, 9) }
          : {
              q: randomSequence(random),
              v: random.bytes(
                random.chance(0.6)
                  ? random.int(0, 2048)
                  : random.int(2048, MAX_INLINE_RECORD_BYTES),
              ),
            };
        calls.push({
          kind: "writes",
          pk: PK,
          checkpointSk: random.pick(checkpointSks),
          generation: random.pick(["g-1", "g-1", "g-2"]),
          record,
        });
      }
      const records: CommitRecord[] = [
        ...[...checkpoints.values()].map((item) => ({ kind: "checkpoint" as const, item })),
        ...calls,
      ];
      // Checkpoints and calls in any order.
      for (let i = records.length - 1; i > 0; i -= 1) {
        const j = random.int(0, i);
        [records[i], records[j]] = [records[j]!, records[i]!];
      }

      const items = planCommitBatch(records);

      const callOf = new Map(calls.map((call) => [call.record, call]));
      const placed = new Map<WriteRecord, CheckpointItem | WritesItem>();
      for (const item of items) {
        expect(estimateItemBytes(item)).toBeLessThanOrEqual(ITEM_BUDGET_BYTES);
        const held = item.k === "c" ? (item.w ?? []) : item.ws;
        for (const record of held) {
          const call = callOf.get(record)!;
          expect(call).toBeDefined();
          expect(placed.has(record)).toBe(false);
          placed.set(record, item);
          expect(item.g).toBe(call.generation);
          expect(item.pk).toBe(call.pk);
          if (item.k === "c") expect(item.sk).toBe(call.checkpointSk);
          else expect(item.sk).toBe(writesSortKey(call.checkpointSk, item.ws[0]!.q));
        }
        // Calls keep their batch order inside an item.
        const order = held.map((record) => records.indexOf(callOf.get(record)!));
        expect(order).toEqual([...order].sort((a, b) => a - b));
      }
      // Each checkpoint item once, in batch order (compared by identity: they hold hundreds of KB).
      const committed = records.flatMap((record) =>
        record.kind === "checkpoint" ? [record.item] : [],
      );
      const produced = items.filter((item) => item.k === "c");
      expect(produced.length).toBe(committed.length);
      expect(produced.every((item, index) => item === committed[index])).toBe(true);
      expect(placed.size).toBe(calls.length);
      for (const call of calls) {
        const checkpoint = checkpoints.get(call.checkpointSk);
        if (placed.get(call.record) === checkpoint || checkpoint?.g !== call.generation) continue;
        // It went to a writes item though its checkpoint was there: it cannot have fitted (the batch counts a
        // few bytes more than it adds, never fewer).
        expect(
          estimateItemBytes(checkpoint) + 1 + estimateItemBytes(call.record) + 6,
        ).toBeGreaterThan(ITEM_BUDGET_BYTES);
      }
    }
  });
});
