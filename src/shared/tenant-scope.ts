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
