import { brotliCompressSync, brotliDecompressSync, constants } from "node:zlib";

/**
 * How a value's JSON is stored in DynamoDB: as text, or as its brotli bytes when those are smaller. DynamoDB
 * bills writes per KB and reads per 4 KB of item, and every search reads whole items, so larger values are
 * compressed; short ones rarely shrink and are kept as text (readable in the console).
 */
const MIN_COMPRESSIBLE_BYTES = 512;
const BROTLI_OPTIONS = {
  params: {
    [constants.BROTLI_PARAM_QUALITY]: 4,
    [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
  },
};

export function compressJson(json: string, bytes: number): string | Uint8Array {
  if (bytes < MIN_COMPRESSIBLE_BYTES) return json;
  const compressed = brotliCompressSync(json, BROTLI_OPTIONS);
  return compressed.byteLength < bytes
    ? new Uint8Array(compressed.buffer, compressed.byteOffset, compressed.byteLength)
    : json;
}

export function decompressJson(stored: string | Uint8Array): string {
  return typeof stored === "string" ? stored : brotliDecompressSync(stored).toString("utf8");
}
