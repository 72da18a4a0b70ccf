import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Webhook signatures in the Standard Webhooks scheme (standardwebhooks.com), so a receiver verifies them with any
 * of its libraries or a few lines of its own: the secret is `whsec_` and base64 key bytes; the signature is
 * `v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` under those bytes.
 */
const SECRET_PREFIX = "whsec_";
/** Fewer key bytes than this make a guessable MAC (Standard Webhooks asks for 24 to 64). */
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;

/** The key bytes of a `whsec_` secret; throws with what is wrong (never echoing the secret). */
export function signingKeyOf(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) {
    throw new Error(`expected a secret starting with ${SECRET_PREFIX} (Standard Webhooks format)`);
  }
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) {
    throw new Error(`expected base64 key bytes after ${SECRET_PREFIX}`);
  }
  const key = Buffer.from(encoded, "base64");
  if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES) {
    throw new Error(
      `expected ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} key bytes after ${SECRET_PREFIX}, got ${key.length}`,
    );
  }
  return key;
}

/** The `webhook-signature` header value for a delivery. */
export function webhookSignature(
  key: Buffer,
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  const mac = createHmac("sha256", key)
    .update(`${id}.${timestampSeconds}.${body}`)
    .digest("base64");
  return `v1,${mac}`;
}

/**
 * A receiver's check (as the docs show it): one of the header's space-separated signatures matches, and the
 * timestamp is within `toleranceSeconds` of now (replays of old deliveries are refused).
 */
export function verifyWebhookSignature(
  key: Buffer,
  headers: { id: string; timestamp: string; signature: string },
  body: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  const timestamp = Number(headers.timestamp);
  if (!Number.isInteger(timestamp) || Math.abs(nowSeconds - timestamp) > toleranceSeconds) {
    return false;
  }
  const expected = Buffer.from(webhookSignature(key, headers.id, timestamp, body));
  return headers.signature.split(" ").some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
