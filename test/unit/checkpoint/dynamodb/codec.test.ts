import { COMPRESSIONS, decodeBytes, encodeValue } from "../../../../src/checkpoint/dynamodb/codec";
import { sameBytes, seededRandom } from "./random";

const text = (value: string) => new TextEncoder().encode(value);

describe("encodeValue and decodeBytes", () => {
  it("stores payloads under 128 bytes raw, however compressible", () => {
    const tiny = text("a".repeat(127));
    const encoded = encodeValue("json", tiny, "brotli");
    expect(encoded).toEqual({ t: "json", z: 0, v: tiny });
    expect(encoded.v).toBe(tiny);
  });

  it("compresses a compressible payload from 128 bytes on, and reads it back", () => {
    const compressible = text("a".repeat(128));
    const encoded = encodeValue("json", compressible, "brotli");
    expect(encoded.z).toBe(1);
    expect(encoded.v.byteLength).toBeLessThan(compressible.byteLength);
    expect(sameBytes(decodeBytes(encoded), compressible)).toBe(true);
  });

  it("keeps an incompressible payload raw rather than grow it", () => {
    const noise = seededRandom(7).bytes(10_000);
    expect(encodeValue("bytes", noise, "brotli")).toEqual({ t: "bytes", z: 0, v: noise });
  });

  it("never compresses with compression none", () => {
    const compressible = text(JSON.stringify({ messages: Array(500).fill("hello") }));
    const encoded = encodeValue("json", compressible, "none");
    expect(encoded).toEqual({ t: "json", z: 0, v: compressible });
    expect(decodeBytes(encoded)).toBe(compressible);
  });

  it("round-trips random payloads, never larger than the input (seeded)", () => {
    const random = seededRandom(0xc0dec);
    for (let round = 0; round < 150; round += 1) {
      const length = random.int(0, random.chance(0.8) ? 2048 : 200_000);
      // From pure noise to long runs: both sides of "compression helps".
      const runs = random.int(1, 64);
      const input = new Uint8Array(length);
      for (let offset = 0; offset < length; offset += runs) {
        input.fill(random.chance(0.5) ? 0x20 : random.int(0, 255), offset, offset + runs);
      }
      if (random.chance(0.3)) input.set(random.bytes(length));
      for (const compression of COMPRESSIONS) {
        const type = random.pick(["json", "bytes"]);
        const encoded = encodeValue(type, input, compression);
        expect(encoded.t).toBe(type);
        expect(encoded.v.byteLength).toBeLessThanOrEqual(input.byteLength);
        if (length < 128 || compression === "none") expect(encoded.z).toBe(0);
        expect(sameBytes(decodeBytes(encoded), input)).toBe(true);
      }
    }
  });
});
