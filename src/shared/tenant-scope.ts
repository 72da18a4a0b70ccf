import { createHash } from "node:crypto";
import { MAX_IDENTIFIER_LENGTH } from "./identifiers";

/**
 * The thread id a saver shared by every tenant sees for a tenant's thread (the DynamoDB saver is bound to one
 * tenant and keys by it itself). `<tenant>#<thread>` while it fits an identifier; longer pairs become `#` and a
 * SHA-256 digest, so any pair the HTTP API accepts fits every saver that accepts 256-character ids. Tenant ids
 * contain no `#`, so the two forms can never collide and no tenant can name another tenant's thread.
 */
export function scopeThreadId(tenantId: string, threadId: string): string {
  const plain = `${tenantId}#${threadId}`;
  if (plain.length <= MAX_IDENTIFIER_LENGTH) return plain;
  return `#${createHash("sha256").update(plain, "utf8").digest("base64url")}`;
}

/**
 * Marks a saver that keys by one tenant itself (the DynamoDB saver): the handler gives it the client's thread ids
 * as they are, and refuses it as a saver shared by every tenant. A registered symbol, so that the runtime reads
 * the mark without loading that saver's module (and the AWS SDK with it), and two copies of this package agree.
 */
export const BOUND_TENANT: unique symbol = Symbol.for("memory-table.bound-tenant");

export interface TenantBound {
  readonly [BOUND_TENANT]: string;
}

/** The tenant a saver is bound to, or undefined for a saver shared by every tenant. */
export function boundTenantOf(saver: unknown): string | undefined {
  if (typeof saver !== "object" || saver === null) return undefined;
  const tenant = (saver as Partial<TenantBound>)[BOUND_TENANT];
  return typeof tenant === "string" ? tenant : undefined;
}
