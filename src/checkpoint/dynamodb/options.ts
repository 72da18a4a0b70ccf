import type { DynamoDBClient, DynamoDBClientConfig } from "@aws-sdk/client-dynamodb";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { InvalidConfigurationError } from "../../shared/errors";
import { assertTenantId } from "../../shared/identifiers";
import { tableContextOf, TableContext } from "../../table/context";
import { COMPRESSIONS, type Compression } from "./codec";

export interface DynamoDBSaverOptions {
  /** The tenant every key of this instance belongs to (from verified JWT claims only). */
  tenantId: string;
  /**
   * The container's table context, shared with the HTTP runtime and every other saver (one cache of thread
   * records). Give this, or `tableName` with `client` or `clientConfig`.
   */
  table?: TableContext;
  /** Name of the Memory Table DynamoDB table. */
  tableName?: string;
  /** A DynamoDB client to share across instances (one per container); or `clientConfig` to create one. */
  client?: DynamoDBClient | DynamoDBDocumentClient;
  clientConfig?: DynamoDBClientConfig;
  /** Seconds a thread lives after its last write (default 30 days); set it on the context when you give one. */
  ttlSeconds?: number;
  /** Largest serialized checkpoint with its new channel values, in bytes (default 4 MiB). */
  maxCheckpointBytes?: number;
  /** Largest serialized `putWrites` call, in bytes (default 4 MiB). */
  maxWritesBytes?: number;
  /** Payload compression (default brotli). */
  compression?: Compression;
  serde?: SerializerProtocol;
  /** Clock in epoch milliseconds (tests of expiry); set it on the context when you give one. */
  now?: () => number;
}

export const DEFAULT_MAX_CHECKPOINT_BYTES = 4 * 1024 * 1024;
export const DEFAULT_MAX_WRITES_BYTES = 4 * 1024 * 1024;

export interface ResolvedSaverOptions {
  tenantId: string;
  table: TableContext;
  maxCheckpointBytes: number;
  maxWritesBytes: number;
  compression: Compression;
}

const KNOWN_OPTIONS = new Set<string>([
  "tenantId",
  "table",
  "tableName",
  "client",
  "clientConfig",
  "ttlSeconds",
  "maxCheckpointBytes",
  "maxWritesBytes",
  "compression",
  "serde",
  "now",
]);

/**
 * Checks every option at construction, so a typo or a bad value fails there, naming the option, instead of
 * running with a default or failing at the first request.
 */
export function resolveSaverOptions(options: DynamoDBSaverOptions): ResolvedSaverOptions {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new InvalidConfigurationError("options", `expected an object, got ${describe(options)}`);
  }
  for (const name of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(name)) {
      throw new InvalidConfigurationError(
        name,
        `expected one of ${[...KNOWN_OPTIONS].join(", ")}, got an unknown option`,
      );
    }
  }
  // A bad tenant id is an InvalidIdentifierError, as everywhere an id is checked.
  const tenantId = assertTenantId(options.tenantId);
  const compression = options.compression === undefined ? "brotli" : options.compression;
  if (!(COMPRESSIONS as readonly unknown[]).includes(compression)) {
    throw new InvalidConfigurationError(
      "compression",
      `expected one of ${COMPRESSIONS.join(", ")}, got ${describe(compression)}`,
    );
  }
  if (options.serde !== undefined && typeof options.serde?.dumpsTyped !== "function") {
    throw new InvalidConfigurationError(
      "serde",
      `expected a serializer, got ${describe(options.serde)}`,
    );
  }
  if (options.now !== undefined && typeof options.now !== "function") {
    throw new InvalidConfigurationError("now", `expected a function, got ${describe(options.now)}`);
  }
  return {
    tenantId,
    table: tableContextOf({
      ...options,
      ttlSeconds:
        options.ttlSeconds === undefined
          ? undefined
          : positiveInteger("ttlSeconds", options.ttlSeconds, undefined),
    }),
    maxCheckpointBytes: positiveInteger(
      "maxCheckpointBytes",
      options.maxCheckpointBytes,
      DEFAULT_MAX_CHECKPOINT_BYTES,
    ),
    maxWritesBytes: positiveInteger(
      "maxWritesBytes",
      options.maxWritesBytes,
      DEFAULT_MAX_WRITES_BYTES,
    ),
    compression,
  };
}

function positiveInteger<T extends number | undefined>(
  option: string,
  value: unknown,
  fallback: T,
): number | T {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0) {
    throw new InvalidConfigurationError(
      option,
      `expected a positive integer, got ${describe(value)}`,
    );
  }
  return value;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return JSON.stringify(value);
  return `a ${typeof value}`;
}
