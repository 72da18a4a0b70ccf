import { randomBytes } from "node:crypto";
import {
  signingKeyOf,
  verifyWebhookSignature,
  webhookSignature,
} from "../../../src/shared/webhook-signature";

describe("webhook signatures (Standard Webhooks scheme)", () => {
  const key = randomBytes(32);
  const body = JSON.stringify({ run_id: "r-1", status: "success" });
  const now = 1_800_000_000;
  const signed = (timestamp = now, id = "r-1:success") => ({
    id,
    timestamp: String(timestamp),
    signature: webhookSignature(key, id, timestamp, body),
  });

  it("reads the key bytes of a whsec_ secret", () => {
    expect(signingKeyOf(`whsec_${key.toString("base64")}`).equals(key)).toBe(true);
  });

  it("verifies what it signed, and nothing altered", () => {
    expect(verifyWebhookSignature(key, signed(), body, now)).toBe(true);
    expect(verifyWebhookSignature(key, signed(), `${body} `, now)).toBe(false);
    expect(verifyWebhookSignature(key, { ...signed(), id: "r-1:error" }, body, now)).toBe(false);
    expect(verifyWebhookSignature(randomBytes(32), signed(), body, now)).toBe(false);
  });

  it("accepts any of several signatures (a receiver rotating its secret) and refuses a stale timestamp", () => {
    const headers = signed();
    const rotated = { ...headers, signature: `v1,AAAA ${headers.signature}` };
    expect(verifyWebhookSignature(key, rotated, body, now)).toBe(true);
    expect(verifyWebhookSignature(key, signed(now - 301), body, now)).toBe(false);
    expect(verifyWebhookSignature(key, signed(now + 301), body, now)).toBe(false);
  });

  it("signs as `v1,` and the base64 HMAC-SHA256 of id.timestamp.body", () => {
    const { createHmac } = jest.requireActual<typeof import("node:crypto")>("node:crypto");
    const expected = createHmac("sha256", key)
      .update(`r-1:success.${now}.${body}`)
      .digest("base64");
    expect(signed().signature).toBe(`v1,${expected}`);
  });
});
