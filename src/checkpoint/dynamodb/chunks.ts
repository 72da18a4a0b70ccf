import type { ChunkItem, StoredItem } from "./items";
import { ITEM_KIND } from "./items";
import { buildChunkSk } from "./keys";

/** Chunks of a value too large for its owner item: well under DynamoDB's 400 KB item limit each. */
const CHUNK_BYTES = 320 * 1024;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Item = Record<string, any>;

export function splitChunks(bytes: Uint8Array): Uint8Array[] {
  const parts: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.byteLength; offset += CHUNK_BYTES) {
    parts.push(bytes.subarray(offset, offset + CHUNK_BYTES));
  }
  return parts;
}

export function joinChunks(
  ownerSk: string,
  part: string,
  count: number,
  chunks: Map<string, Uint8Array>,
): Uint8Array {
  const parts: Uint8Array[] = [];
  for (let n = 0; n < count; n += 1) {
    const chunk = chunks.get(buildChunkSk(ownerSk, part, n));
    if (!chunk) throw new Error(`Missing chunk ${n} of ${count} for ${ownerSk}`);
    parts.push(chunk);
  }
  return new Uint8Array(Buffer.concat(parts));
}

export function chunkItem(pk: string, sk: string, generation: string, d: Uint8Array): ChunkItem {
  return { pk, sk, k: ITEM_KIND.chunk, g: generation, d };
}

export function putRequest(item: StoredItem) {
  return { PutRequest: { Item: item as unknown as Item } };
}
