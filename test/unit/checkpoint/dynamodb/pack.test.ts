import { decodePack, encodePack } from "../../../../src/checkpoint/dynamodb/pack";
import { sameBytes, seededRandom } from "./random";

function bytes(...values: number[]): Uint8Array {
  return new Uint8Array(values);
}

/** A pack from a raw header text and payload bytes, as a damaged item could hold it. */
function rawPack(headerText: string, payload: Uint8Array = new Uint8Array(0)): Uint8Array {
  const header = Buffer.from(headerText, "utf8");
  const length = Buffer.alloc(4);
  length.writeUInt32BE(header.byteLength);
  return new Uint8Array(Buffer.concat([length, header, payload]));
}

describe("encodePack and decodePack", () => {
  it("round-trips a header and its payloads, empty ones included", () => {
    const header = { name: "checkpoint", parts: [["cp", "json", 1]], note: "日本語 ✓" };
    const payloads = [bytes(1, 2, 3), new Uint8Array(0), bytes(255), new Uint8Array(1000).fill(7)];
    const decoded = decodePack<typeof header>(encodePack(header, payloads));
    expect(decoded.header).toEqual(header);
    expect(decoded.payloads).toHaveLength(payloads.length);
    decoded.payloads.forEach((payload, index) =>
      expect(sameBytes(payload, payloads[index])).toBe(true),
    );
  });

  it("round-trips a pack without payloads", () => {
    expect(decodePack(encodePack(["only", "header"], []))).toEqual({
      header: ["only", "header"],
      payloads: [],
    });
  });

  it("lays out a big-endian header length, the JSON [header, lengths], then the payloads", () => {
    const pack = encodePack("h", [bytes(9, 8), bytes(7)]);
    const json = '["h",[2,1]]';
    expect(Buffer.from(pack.subarray(0, 4)).readUInt32BE(0)).toBe(json.length);
    expect(Buffer.from(pack.subarray(4, 4 + json.length)).toString("utf8")).toBe(json);
    expect([...pack.subarray(4 + json.length)]).toEqual([9, 8, 7]);
  });

  it("decodes a pack that is a view into a larger buffer (a chunk read from an item)", () => {
    const pack = encodePack({ a: 1 }, [bytes(1, 2), bytes(3)]);
    const larger = new Uint8Array(pack.byteLength + 20).fill(0xee);
    larger.set(pack, 7);
    const decoded = decodePack(larger.subarray(7, 7 + pack.byteLength));
    expect(decoded.header).toEqual({ a: 1 });
    expect(decoded.payloads.map((payload) => [...payload])).toEqual([[1, 2], [3]]);
  });

  it("round-trips random packs (seeded)", () => {
    const random = seededRandom(0x9ac4);
    for (let round = 0; round < 200; round += 1) {
      const payloads = Array.from({ length: random.int(0, 12) }, () =>
        random.bytes(random.int(0, random.chance(0.9) ? 512 : 200_000)),
      );
      const header = { round, names: payloads.map((_, index) => `part-${index}-ü`) };
      const decoded = decodePack<typeof header>(encodePack(header, payloads));
      expect(decoded.header).toEqual(header);
      expect(decoded.payloads.every((payload, index) => sameBytes(payload, payloads[index]))).toBe(
        true,
      );
    }
  });

  it.each([0, 1, 2, 3])(
    "refuses %i bytes, too short for the header length, with a RangeError",
    (n) => {
      expect(() => decodePack(new Uint8Array(n))).toThrow(RangeError);
    },
  );

  it("refuses payloads shorter or longer than the header says with a RangeError", () => {
    const pack = encodePack(["h"], [bytes(1, 2, 3)]);
    expect(() => decodePack(pack.subarray(0, pack.byteLength - 1))).toThrow(
      new RangeError("Invalid pack: its lengths do not add up"),
    );
    const longer = new Uint8Array(pack.byteLength + 1);
    longer.set(pack);
    expect(() => decodePack(longer)).toThrow(
      new RangeError("Invalid pack: its lengths do not add up"),
    );
  });

  it("refuses every truncation of a pack with a RangeError", () => {
    // A pack cut anywhere, inside its header too, is short input: it must fail the same way.
    const pack = encodePack({ parts: ["cp", "md"] }, [bytes(1, 2, 3), bytes(4)]);
    const refusals = Array.from({ length: pack.byteLength }, (_, length) => {
      try {
        decodePack(pack.subarray(0, length));
        return `${length}: decoded`;
      } catch (error) {
        return `${length}: ${(error as Error).name}`;
      }
    });
    expect(refusals.filter((refusal) => !refusal.endsWith(": RangeError"))).toEqual([]);
  });

  it.each([
    ["a header that is not JSON", rawPack("[{]")],
    ["a header that is not [header, lengths]", rawPack("{}")],
    ["a negative length", rawPack('["h",[3,-3]]')],
  ])("refuses %s with a RangeError", (_, pack) => {
    expect(() => decodePack(pack)).toThrow(RangeError);
  });
});
