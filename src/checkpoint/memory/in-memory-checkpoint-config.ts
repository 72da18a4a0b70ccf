import { InvalidConfigurationError } from "../../shared/errors";
import { MAX_IDENTIFIER_LENGTH } from "../../shared/identifiers";

/**
 * Guardrails of the bounded in-memory saver. Every field is optional; each must be a positive integer.
 * Byte limits measure the saver's own serialized payloads, not JS heap estimates.
 */
export interface InMemoryCheckpointConfig {
  /** A thread untouched this long is removed whole (default 4 hours). */
  idleTtlSeconds?: number;
  /** A new thread beyond this evicts the least-recently-used thread (default 1,000). */
  maxThreads?: number;
  /** An additional namespace in a thread is rejected (default 16; the root namespace counts). */
  maxNamespacesPerThread?: number;
  /** An additional checkpoint in a thread is rejected (default 1,000, all namespaces together). */
  maxCheckpointsPerThread?: number;
  /** Serialized checkpoint, metadata and new channel values of one `put` (default 1 MiB). */
  maxCheckpointBytes?: number;
  /** Serialized values of one `putWrites` batch (default 512 KiB). */
  maxPendingWriteBytes?: number;
  /** All stored payloads together; other threads are evicted first, then the write is rejected (default 64 MiB). */
  maxTotalBytes?: number;
  /** Thread ids, namespaces, checkpoint ids and task ids (default 256 characters). */
  maxIdentifierLength?: number;
}

export type ResolvedInMemoryCheckpointConfig = Required<InMemoryCheckpointConfig>;

export const DEFAULT_IN_MEMORY_CHECKPOINT_CONFIG: Readonly<ResolvedInMemoryCheckpointConfig> =
  Object.freeze({
    idleTtlSeconds: 4 * 60 * 60,
    maxThreads: 1_000,
    maxNamespacesPerThread: 16,
    maxCheckpointsPerThread: 1_000,
    maxCheckpointBytes: 1024 * 1024,
    maxPendingWriteBytes: 512 * 1024,
    maxTotalBytes: 64 * 1024 * 1024,
    maxIdentifierLength: MAX_IDENTIFIER_LENGTH,
  });

const FIELDS = Object.keys(DEFAULT_IN_MEMORY_CHECKPOINT_CONFIG) as Array<
  keyof InMemoryCheckpointConfig
>;

/**
 * Fills in defaults and checks every field, so a typo or a bad value fails at construction
 * instead of silently running with the default.
 */
export function resolveInMemoryCheckpointConfig(
  config: InMemoryCheckpointConfig | undefined,
): ResolvedInMemoryCheckpointConfig {
  if (config === undefined) return { ...DEFAULT_IN_MEMORY_CHECKPOINT_CONFIG };
  if (typeof config !== "object" || config === null || Array.isArray(config)) {
    throw new InvalidConfigurationError("config", `expected an object, got ${describe(config)}`);
  }
  for (const key of Object.keys(config)) {
    if (!(FIELDS as string[]).includes(key)) {
      throw new InvalidConfigurationError(
        `config.${key}`,
        `expected one of ${FIELDS.join(", ")}, got an unknown option`,
      );
    }
  }
  const resolved = { ...DEFAULT_IN_MEMORY_CHECKPOINT_CONFIG };
  for (const field of FIELDS) {
    const value: unknown = config[field];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0) {
      throw new InvalidConfigurationError(
        `config.${field}`,
        `expected a positive integer, got ${describe(value)}`,
      );
    }
    resolved[field] = value;
  }
  return resolved;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return `the string ${JSON.stringify(value)}`;
  return `a ${typeof value}`;
}
