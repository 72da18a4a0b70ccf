import { createHash } from "node:crypto";

/**
 * API keys: what a platform team hands an app instead of a JWT. A key is `mt_<key id>_<secret>`: the id (16 hex
 * characters) finds the stored record in one GetItem, the secret (32 random bytes, base64url) is what makes it
 * unguessable. Only the SHA-256 of the whole key is stored: a 256-bit random secret needs no slow hash (nothing
 * to brute-force), and a leaked table holds no usable key. The key names its tenant only through that record.
 */

export const API_KEY_PREFIX = "mt_";
const API_KEY_PATTERN = /^mt_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
export const API_KEY_SECRET_BYTES = 32;
export const API_KEY_ID_BYTES = 8;
/** Longest lifetime a key may be given: keys are rotated, not kept forever. */
export const MAX_API_KEY_LIFETIME_MS = 366 * 24 * 3600 * 1000;

/** Whether a presented credential has the shape of one of our keys (a JWT never starts with `mt_`). */
export function isApiKey(credential: string): boolean {
  return credential.startsWith(API_KEY_PREFIX);
}

/** The key id of a well-formed key, or undefined. */
export function apiKeyId(key: string): string | undefined {
  return API_KEY_PATTERN.exec(key)?.[1];
}

/** SHA-256 of the whole key, hex: what the table stores. */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}
