import { InvalidConfigurationError } from "../shared/errors";
import { assertTtlMinutes, describeStoreInput } from "./validation";

/**
 * Per-item expiry, the same in every store. A put's `ttl` (minutes, LangGraph's unit) or the store's
 * `defaultTtl` sets the item's expiry to exactly that long after the write; `null` means never. A read that
 * refreshes (`refreshTtl`, by default the store's `refreshOnRead`, itself true by default) renews the expiry of
 * the items it returns, with headroom: a renewal writes "now + ttl + headroom" (a tenth of the TTL, at most an
 * hour), and only when the item would otherwise expire less than its TTL after the read. So an item lives at
 * least its TTL after its last write or refreshing read, at most the headroom longer, and a hot item costs one
 * renewal write per headroom period, not one per read. An expired item reads as absent at once, whether or not
 * anything removed it yet.
 */
export interface StoreTtlConfig {
  /** TTL in minutes of items put without one (default: none, items never expire). */
  defaultTtl?: number | null;
  /** Whether reads renew the TTL of the items they return when the read does not say (default true). */
  refreshOnRead?: boolean;
}

/** The expiry an item carries: epoch seconds and the TTL in minutes it was set from. */
export interface ItemExpiry {
  expiresAt: number;
  ttlMinutes: number;
}

const MAX_HEADROOM_SECONDS = 60 * 60;

export class StoreTtlPolicy {
  readonly defaultTtl: number | null;
  readonly refreshOnRead: boolean;

  constructor(config: StoreTtlConfig | undefined) {
    if (config === undefined) {
      this.defaultTtl = null;
      this.refreshOnRead = true;
      return;
    }
    if (typeof config !== "object" || config === null || Array.isArray(config)) {
      throw new InvalidConfigurationError(
        "ttl",
        `expected an object, got ${describeStoreInput(config)}`,
      );
    }
    for (const name of Object.keys(config)) {
      if (name !== "defaultTtl" && name !== "refreshOnRead") {
        throw new InvalidConfigurationError(
          `ttl.${name}`,
          "expected one of defaultTtl, refreshOnRead, got an unknown option",
        );
      }
    }
    try {
      this.defaultTtl = assertTtlMinutes("ttl.defaultTtl", config.defaultTtl) ?? null;
    } catch (error) {
      throw new InvalidConfigurationError(
        "ttl.defaultTtl",
        (error as { reason?: string }).reason ?? "expected minutes",
      );
    }
    if (config.refreshOnRead !== undefined && typeof config.refreshOnRead !== "boolean") {
      throw new InvalidConfigurationError(
        "ttl.refreshOnRead",
        `expected a boolean, got ${describeStoreInput(config.refreshOnRead)}`,
      );
    }
    this.refreshOnRead = config.refreshOnRead ?? true;
  }

  /** The expiry of an item written at `nowMs` with the put's `ttl` (undefined: the default, null: never). */
  expiryOnWrite(nowMs: number, ttlMinutes: number | null | undefined): ItemExpiry | undefined {
    const minutes = ttlMinutes === undefined ? this.defaultTtl : ttlMinutes;
    if (minutes === null) return undefined;
    return { expiresAt: Math.ceil((nowMs + minutes * 60_000) / 1000), ttlMinutes: minutes };
  }

  /** Whether a read asking `refreshTtl` (undefined: the store's default) renews what it returns. */
  refreshes(refreshTtl: boolean | undefined): boolean {
    return refreshTtl ?? this.refreshOnRead;
  }

  /** The renewed expiry of an item read at `nowMs`, or undefined when it needs none. */
  renewal(expiry: ItemExpiry | undefined, nowMs: number): number | undefined {
    if (!expiry) return undefined;
    const ttlMs = expiry.ttlMinutes * 60_000;
    if (expiry.expiresAt * 1000 >= nowMs + ttlMs) return undefined;
    const headroomSeconds = Math.min(MAX_HEADROOM_SECONDS, Math.floor(ttlMs / 10_000));
    return Math.ceil((nowMs + ttlMs) / 1000) + headroomSeconds;
  }
}
