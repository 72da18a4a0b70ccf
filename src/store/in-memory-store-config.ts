import { InvalidConfigurationError } from "../shared/errors";
import { describeStoreInput } from "./validation";
import { DEFAULT_MAX_VALUE_BYTES, MAX_VALUE_BYTES } from "./value-json";

/**
 * Guardrails of the bounded in-memory store, for the dev server and tests. Every field is optional; each must be
 * a positive integer. A write beyond `maxItems` or `maxTotalBytes` is refused whole (StoreCapacityError), never
 * made room for by dropping other items: a store holds facts other threads rely on.
 */
export interface InMemoryStoreConfig {
  /** An item neither read nor written this long is removed (default 24 hours). */
  idleTtlSeconds?: number;
  /** Most items, all tenants together (default 10,000). */
  maxItems?: number;
  /** Most bytes (values' JSON, vectors and keys), all tenants together (default 64 MiB). */
  maxTotalBytes?: number;
  /** Largest value as UTF-8 JSON bytes (default 256 KiB, at most 320 KiB, as DynamoDBStore). */
  maxValueBytes?: number;
}

export type ResolvedInMemoryStoreConfig = Required<InMemoryStoreConfig>;

export const DEFAULT_IN_MEMORY_STORE_CONFIG: Readonly<ResolvedInMemoryStoreConfig> = Object.freeze({
  idleTtlSeconds: 24 * 60 * 60,
  maxItems: 10_000,
  maxTotalBytes: 64 * 1024 * 1024,
  maxValueBytes: DEFAULT_MAX_VALUE_BYTES,
});

const FIELDS = Object.keys(DEFAULT_IN_MEMORY_STORE_CONFIG) as Array<keyof InMemoryStoreConfig>;

/** Fills in defaults and checks every field, so a typo or a bad value fails at construction. */
export function resolveInMemoryStoreConfig(
  config: InMemoryStoreConfig | undefined,
): ResolvedInMemoryStoreConfig {
  if (config === undefined) return { ...DEFAULT_IN_MEMORY_STORE_CONFIG };
  if (typeof config !== "object" || config === null || Array.isArray(config)) {
    throw new InvalidConfigurationError(
      "config",
      `expected an object, got ${describeStoreInput(config)}`,
    );
  }
  for (const key of Object.keys(config)) {
    if (!(FIELDS as string[]).includes(key)) {
      throw new InvalidConfigurationError(
        `config.${key}`,
        `expected one of ${FIELDS.join(", ")}, got an unknown option`,
      );
    }
  }
  const resolved = { ...DEFAULT_IN_MEMORY_STORE_CONFIG };
  for (const field of FIELDS) {
    const value: unknown = config[field];
    if (value === undefined) continue;
    const max = field === "maxValueBytes" ? MAX_VALUE_BYTES : Number.MAX_SAFE_INTEGER;
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0 || value > max) {
      throw new InvalidConfigurationError(
        `config.${field}`,
        `expected a positive integer${max < Number.MAX_SAFE_INTEGER ? ` up to ${max}` : ""}, got ${describeStoreInput(value)}`,
      );
    }
    resolved[field] = value;
  }
  return resolved;
}
