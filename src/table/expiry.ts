import { InvalidConfigurationError } from "../shared/errors";
import { DEFAULT_TTL_SECONDS } from "../shared/defaults";
import { THREAD_ATTRIBUTES } from "./definition";
import { expression, type Expression } from "./expressions";

/**
 * When a thread expires, in one place. A thread lives `ttlSeconds` after its last write, then expires whole
 * (DynamoDB TTL removes its record; the cleaner the rest). The record is renewed with up to an hour of headroom,
 * so most writes need no renewal write, and no write ever leaves the thread less than `ttlSeconds` to live: it
 * never expires early, and may outlive its last write by up to the headroom.
 */
export class ExpiryPolicy {
  readonly ttlSeconds: number;
  /** Headroom added at each renewal: an hour, or a tenth of the TTL for short TTLs. */
  readonly headroomSeconds: number;

  constructor(ttlSeconds: number = DEFAULT_TTL_SECONDS) {
    if (!Number.isSafeInteger(ttlSeconds) || ttlSeconds <= 0) {
      throw new InvalidConfigurationError(
        "ttlSeconds",
        `expected a positive integer, got ${String(ttlSeconds)}`,
      );
    }
    this.ttlSeconds = ttlSeconds;
    this.headroomSeconds = Math.min(60 * 60, Math.floor(ttlSeconds / 10));
  }

  /** The expiry (epoch seconds) a renewal at `nowMs` writes. */
  renewedExpiry(nowMs: number): number {
    return Math.ceil(nowMs / 1000) + this.ttlSeconds + this.headroomSeconds;
  }

  /** True when a write at `nowMs` needs the record renewed: it would leave less than `ttlSeconds` to live. */
  needsRenewal(expiry: number, nowMs: number): boolean {
    return expiry * 1000 < nowMs + this.ttlSeconds * 1000;
  }
}

/** True once a record's expiry (epoch seconds) has passed: the thread is gone, whatever DynamoDB still holds. */
export function isExpired(expiry: number | undefined, nowMs: number): boolean {
  return typeof expiry === "number" && expiry * 1000 <= nowMs;
}

/** The condition "the thread record has not expired at `nowMs`" (a record without an expiry never does). */
export function notExpired(nowMs: number): Expression {
  return expression(
    "attribute_not_exists(#ttl) OR #ttl > :now_seconds",
    { "#ttl": THREAD_ATTRIBUTES.ttl },
    // `ttl > floor(now / 1000)` is `ttl * 1000 > now` for whole seconds: the same rule as isExpired.
    { ":now_seconds": Math.floor(nowMs / 1000) },
  );
}
