import { randomBytes, timingSafeEqual } from "node:crypto";
import {
  API_KEY_ID_BYTES,
  API_KEY_PREFIX,
  API_KEY_SECRET_BYTES,
  apiKeyId,
  hashApiKey,
  MAX_API_KEY_LIFETIME_MS,
} from "./api-key-format";
import { assertIdentifier, assertTenantId } from "../../shared/identifiers";
import {
  getApiKey,
  listApiKeys,
  putApiKey,
  revokeApiKey,
  type ApiKeyListing,
} from "../../table/api-key-items";
import type { TableConnection } from "../../table/client";

/** Who an accepted key acts for. */
export interface ApiKeyIdentity {
  keyId: string;
  tenantId: string;
  subject: string;
}

export interface CreateApiKeyInput {
  tenantId: string;
  /** Who the key stands for inside the tenant (default `api-key:<key id>`). */
  subject?: string;
  /** Lifetime in milliseconds (at most {@link MAX_API_KEY_LIFETIME_MS}). */
  expiresInMs: number;
  now?: number;
}

export interface CreatedApiKey extends ApiKeyListing {
  /** The key itself: shown once, stored nowhere. */
  key: string;
}

/** Mints a key for a tenant and stores its hash. Validates everything before the first request. */
export async function createApiKey(
  connection: TableConnection,
  input: CreateApiKeyInput,
): Promise<CreatedApiKey> {
  const tenantId = assertTenantId(input.tenantId);
  const subject =
    input.subject === undefined ? undefined : assertIdentifier("subject", input.subject);
  if (
    !Number.isSafeInteger(input.expiresInMs) ||
    input.expiresInMs <= 0 ||
    input.expiresInMs > MAX_API_KEY_LIFETIME_MS
  ) {
    throw new RangeError(
      `Invalid expiry: expected a lifetime from 1 ms to 366 days, got ${input.expiresInMs} ms`,
    );
  }
  const createdAt = input.now ?? Date.now();
  // A taken id (2^-64 per pair of keys) is refused by the conditional write: mint another.
  for (let attempt = 0; attempt < 3; attempt++) {
    const keyId = randomBytes(API_KEY_ID_BYTES).toString("hex");
    const key = `${API_KEY_PREFIX}${keyId}_${randomBytes(API_KEY_SECRET_BYTES).toString("base64url")}`;
    const record = {
      keyId,
      tenantId,
      subject: subject ?? `api-key:${keyId}`,
      createdAt,
      expiresAt: createdAt + input.expiresInMs,
    };
    if (await putApiKey(connection, { ...record, hash: hashApiKey(key) })) {
      return { ...record, key };
    }
  }
  throw new Error("Could not mint an unused API key id in 3 attempts");
}

/** A tenant's keys (never their secrets or hashes). */
export function listTenantApiKeys(
  connection: TableConnection,
  tenantId: string,
): Promise<ApiKeyListing[]> {
  return listApiKeys(connection, assertTenantId(tenantId));
}

/** Revokes a tenant's key by id; false when the tenant has no such key. */
export async function revokeTenantApiKey(
  connection: TableConnection,
  tenantId: string,
  keyId: string,
  now = Date.now(),
): Promise<boolean> {
  const tenant = assertTenantId(tenantId);
  if (!/^[0-9a-f]{16}$/.test(keyId)) {
    throw new RangeError("Invalid key id: expected 16 lowercase hex characters (see `list`)");
  }
  return revokeApiKey(connection, tenant, keyId, now);
}

export interface ApiKeyVerifierOptions {
  /**
   * Seconds a verdict (accepted or refused) is reused in this container before the record is read again: how
   * long a revocation may take to reach a warm container. 0: every request reads the table. Default 60.
   */
  cacheSeconds?: number;
  /** Most verdicts kept (least recently used dropped first). Default 1,000. */
  cacheEntries?: number;
  now?: () => number;
}

export type ApiKeyVerifier = (key: string) => Promise<ApiKeyIdentity | undefined>;

/**
 * Verifies presented keys against their stored hashes: a malformed key is refused with no request; a
 * well-formed one costs one consistent GetItem (1 read request unit) per key per container per `cacheSeconds`.
 * Refused: unknown id, a hash that does not match (compared in constant time), revoked, or expired (checked at
 * every use, cached or not). The cache is keyed by the key's hash, so no key is kept in memory either.
 */
export function createApiKeyVerifier(
  connection: TableConnection,
  options: ApiKeyVerifierOptions = {},
): ApiKeyVerifier {
  const cacheMs = (options.cacheSeconds ?? 60) * 1000;
  const maxEntries = options.cacheEntries ?? 1000;
  if (!Number.isFinite(cacheMs) || cacheMs < 0) {
    throw new RangeError(`Invalid cacheSeconds: expected 0 or more, got ${options.cacheSeconds}`);
  }
  const now = options.now ?? Date.now;
  const cache = new Map<
    string,
    { until: number; record: { identity: ApiKeyIdentity; expiresAt: number } | undefined }
  >();
  return async (key) => {
    const keyId = apiKeyId(key);
    if (keyId === undefined) return undefined;
    const hash = hashApiKey(key);
    const at = now();
    let entry = cache.get(hash);
    if (entry && entry.until <= at) {
      cache.delete(hash);
      entry = undefined;
    }
    if (!entry) {
      const stored = await getApiKey(connection, keyId);
      const valid =
        stored !== undefined &&
        stored.revokedAt === undefined &&
        sameHash(stored.hash, hash) &&
        assertsTenant(stored.tenantId);
      entry = {
        until: at + cacheMs,
        record: valid
          ? {
              identity: { keyId, tenantId: stored.tenantId, subject: stored.subject },
              expiresAt: stored.expiresAt,
            }
          : undefined,
      };
      if (cacheMs > 0) {
        if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
        cache.set(hash, entry);
      }
    } else {
      // Least recently used goes first: a hit moves to the end.
      cache.delete(hash);
      cache.set(hash, entry);
    }
    if (!entry.record || !(entry.record.expiresAt > at)) return undefined;
    return entry.record.identity;
  };
}

function sameHash(stored: string, presented: string): boolean {
  const a = Buffer.from(stored, "hex");
  const b = Buffer.from(presented, "hex");
  return a.length === b.length && a.length > 0 && timingSafeEqual(a, b);
}

/** A stored tenant that is no valid tenant id (a hand-edited item) accepts nobody. */
function assertsTenant(tenantId: string): boolean {
  try {
    assertTenantId(tenantId);
    return true;
  } catch {
    return false;
  }
}
