import {
  apiKeyListingKey,
  apiKeyLookupKey,
  apiKeysPartitionKey,
  API_KEY_LISTING_PREFIX,
} from "./keys";
import { API_KEY_ITEM_ATTRIBUTES as A, TABLE_KEYS } from "./definition";
import { getItem, queryPages, updateItem, type Item, type TableConnection } from "./client";
import { sortKeyBeginsWith } from "./expressions";

/** An API key's stored state: never the key, only its SHA-256. */
export interface ApiKeyRecord {
  keyId: string;
  tenantId: string;
  subject: string;
  /** SHA-256 of the whole key, hex. */
  hash: string;
  createdAt: number;
  expiresAt: number;
  revokedAt?: number;
}

/** What a tenant's listing shows of a key (no hash). */
export type ApiKeyListing = Omit<ApiKeyRecord, "hash">;

/** Expired items stay listed (and refused) for a week, then DynamoDB TTL removes them. */
const KEEP_AFTER_EXPIRY_SECONDS = 7 * 24 * 3600;

/**
 * Stores a new key: its lookup item first (conditional, so a key id is never reused), then the tenant's listing
 * item. Both are UpdateItems: the authorizer trusts the lookup item only, so a crash between the two leaves a key
 * that works but is not listed (create it again), never the reverse. False when the key id was taken.
 */
export async function putApiKey(
  connection: TableConnection,
  record: ApiKeyRecord,
): Promise<boolean> {
  const ttl = Math.ceil(record.expiresAt / 1000) + KEEP_AFTER_EXPIRY_SECONDS;
  const lookup = await updateItem(connection, apiKeyLookupKey(record.keyId), {
    UpdateExpression: "SET #h = :h, #t = :t, #s = :s, #ca = :ca, #xa = :xa, #ttl = :ttl",
    ConditionExpression: "attribute_not_exists(#pk)",
    ExpressionAttributeNames: {
      "#pk": TABLE_KEYS.partitionKey,
      "#h": A.hash,
      "#t": A.tenant,
      "#s": A.subject,
      "#ca": A.createdAt,
      "#xa": A.expiresAt,
      "#ttl": A.ttl,
    },
    ExpressionAttributeValues: {
      ":h": record.hash,
      ":t": record.tenantId,
      ":s": record.subject,
      ":ca": record.createdAt,
      ":xa": record.expiresAt,
      ":ttl": ttl,
    },
  });
  if (!lookup.applied) return false;
  await updateItem(connection, apiKeyListingKey(record.tenantId, record.keyId), {
    UpdateExpression: "SET #id = :id, #s = :s, #ca = :ca, #xa = :xa, #ttl = :ttl",
    ExpressionAttributeNames: {
      "#id": A.keyId,
      "#s": A.subject,
      "#ca": A.createdAt,
      "#xa": A.expiresAt,
      "#ttl": A.ttl,
    },
    ExpressionAttributeValues: {
      ":id": record.keyId,
      ":s": record.subject,
      ":ca": record.createdAt,
      ":xa": record.expiresAt,
      ":ttl": ttl,
    },
  });
  return true;
}

/** The stored state of a key id: one consistent GetItem of its lookup item (what an authorizer sends). */
export async function getApiKey(
  connection: TableConnection,
  keyId: string,
): Promise<ApiKeyRecord | undefined> {
  const item = await getItem(connection, apiKeyLookupKey(keyId), [
    A.hash,
    A.tenant,
    A.subject,
    A.createdAt,
    A.expiresAt,
    A.revokedAt,
  ]);
  if (!item || typeof item[A.hash] !== "string" || typeof item[A.tenant] !== "string") {
    return undefined;
  }
  return {
    keyId,
    tenantId: item[A.tenant] as string,
    subject: String(item[A.subject] ?? ""),
    hash: item[A.hash] as string,
    createdAt: Number(item[A.createdAt]),
    expiresAt: Number(item[A.expiresAt]),
    ...(item[A.revokedAt] === undefined ? {} : { revokedAt: Number(item[A.revokedAt]) }),
  };
}

/** A tenant's keys, oldest id first: one Query on its listing partition (pages past 1 MB followed). */
export async function listApiKeys(
  connection: TableConnection,
  tenantId: string,
): Promise<ApiKeyListing[]> {
  const keys: ApiKeyListing[] = [];
  const query = sortKeyBeginsWith(apiKeysPartitionKey(tenantId), API_KEY_LISTING_PREFIX);
  for await (const page of queryPages(connection, query)) {
    for (const item of page) keys.push(toListing(tenantId, item));
  }
  return keys;
}

/**
 * Revokes a key of `tenantId`: the lookup item first (what the authorizer reads; conditioned on the tenant, so a
 * key id of another tenant is never touched), then the listing. False when the tenant has no such key. A key
 * revoked again keeps its first revocation time.
 */
export async function revokeApiKey(
  connection: TableConnection,
  tenantId: string,
  keyId: string,
  at: number,
): Promise<boolean> {
  const revoke = {
    UpdateExpression: "SET #ra = if_not_exists(#ra, :ra)",
    ExpressionAttributeNames: { "#ra": A.revokedAt },
    ExpressionAttributeValues: { ":ra": at },
  };
  const lookup = await updateItem(connection, apiKeyLookupKey(keyId), {
    ...revoke,
    ConditionExpression: "#t = :t",
    ExpressionAttributeNames: { ...revoke.ExpressionAttributeNames, "#t": A.tenant },
    ExpressionAttributeValues: { ...revoke.ExpressionAttributeValues, ":t": tenantId },
  });
  if (!lookup.applied) return false;
  await updateItem(connection, apiKeyListingKey(tenantId, keyId), {
    ...revoke,
    ConditionExpression: "attribute_exists(#id)",
    ExpressionAttributeNames: { ...revoke.ExpressionAttributeNames, "#id": A.keyId },
  });
  return true;
}

function toListing(tenantId: string, item: Item): ApiKeyListing {
  return {
    keyId: String(item[A.keyId]),
    tenantId,
    subject: String(item[A.subject] ?? ""),
    createdAt: Number(item[A.createdAt]),
    expiresAt: Number(item[A.expiresAt]),
    ...(item[A.revokedAt] === undefined ? {} : { revokedAt: Number(item[A.revokedAt]) }),
  };
}
