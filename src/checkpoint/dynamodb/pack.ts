/**
 * A pack: several byte payloads and a JSON header describing them, as one byte string. What one write cannot
 * hold inline in its item is packed and the pack stored in chunks, so a write becomes one commit item plus
 * chunks whatever the number and sizes of its parts.
 *
 * Layout: a 4-byte big-endian header length, the UTF-8 JSON `[header, [payload lengths]]`, the payloads.
 */
export interface Pack<H> {
  header: H;
  payloads: Uint8Array[];
}

export function encodePack<H>(header: H, payloads: readonly Uint8Array[]): Uint8Array {
  const json = Buffer.from(JSON.stringify([header, payloads.map((p) => p.byteLength)]), "utf8");
  const length = Buffer.alloc(4);
  length.writeUInt32BE(json.byteLength);
  return new Uint8Array(Buffer.concat([length, json, ...payloads]));
}

/** The header and payloads of a pack; damaged bytes throw RangeError, never a half-read pack. */
export function decodePack<H>(bytes: Uint8Array): Pack<H> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer.byteLength < 4) throw new RangeError("Invalid pack: shorter than its header length");
  const headerLength = buffer.readUInt32BE(0);
  if (4 + headerLength > buffer.byteLength)
    throw new RangeError("Invalid pack: cut inside its header");
  let parsed: unknown;
  try {
    parsed = JSON.parse(buffer.subarray(4, 4 + headerLength).toString("utf8"));
  } catch (error) {
    throw new RangeError("Invalid pack: its header is not JSON", { cause: error });
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || !isLengthList(parsed[1])) {
    throw new RangeError("Invalid pack: expected a header and a list of payload lengths");
  }
  const [header, lengths] = parsed as [H, number[]];
  const payloads: Uint8Array[] = [];
  let offset = 4 + headerLength;
  for (const length of lengths) {
    payloads.push(bytes.subarray(offset, offset + length));
    offset += length;
  }
  if (offset !== buffer.byteLength) throw new RangeError("Invalid pack: its lengths do not add up");
  return { header, payloads };
}

function isLengthList(value: unknown): value is number[] {
  return (
    Array.isArray(value) && value.every((length) => Number.isSafeInteger(length) && length >= 0)
  );
}
