import type { DynamoDBClient, DynamoDBClientConfig } from "@aws-sdk/client-dynamodb";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { InvalidConfigurationError } from "../shared/errors";
import { assertTenantId } from "../shared/identifiers";
import { tableContextOf, TableContext } from "../table/context";
import { StoreTtlPolicy, type StoreTtlConfig } from "./item-ttl";
import { SemanticIndex, type StoreIndexConfig } from "./semantic-index";
import { describeStoreInput } from "./validation";
import { DEFAULT_MAX_VALUE_BYTES, MAX_VALUE_BYTES } from "./value-json";

export interface DynamoDBStoreOptions {
  /** The tenant every key of this instance belongs to (from verified JWT claims only). */
  tenantId: string;
  /** The container's table context, shared with the savers and the runtime; or the next three. */
  table?: TableContext;
  /** Name of the Memory Table DynamoDB table. */
  tableName?: string;
  /** A DynamoDB client to share across instances (one per container); or `clientConfig` to create one. */
  client?: DynamoDBClient | DynamoDBDocumentClient;
  clientConfig?: DynamoDBClientConfig;
  /** Per-item TTL: `defaultTtl` in minutes (default none) and `refreshOnRead` (default true). */
  ttl?: StoreTtlConfig;
  /** Semantic search: `{dims, embeddings, fields, maxCandidates}` (default none). */
  index?: StoreIndexConfig;
  /** Largest value, as UTF-8 JSON bytes (default 256 KiB, at most 320 KiB: one item holds it). */
  maxValueBytes?: number;
  /** Clock in epoch milliseconds (tests of expiry); set it on the context when you give one. */
  now?: () => number;
}

export interface ResolvedStoreOptions {
  tenantId: string;
  table: TableContext;
  ttl: StoreTtlPolicy;
  index: SemanticIndex | undefined;
  maxValueBytes: number;
}

const KNOWN_OPTIONS = new Set<string>([
  "tenantId",
  "table",
  "tableName",
  "client",
  "clientConfig",
  "ttl",
  "index",
  "maxValueBytes",
  "now",
]);

/** Checks every option at construction, naming the one that is wrong. */
export function resolveStoreOptions(options: DynamoDBStoreOptions): ResolvedStoreOptions {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new InvalidConfigurationError(
      "options",
      `expected an object, got ${describeStoreInput(options)}`,
    );
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
  if (options.now !== undefined && typeof options.now !== "function") {
    throw new InvalidConfigurationError(
      "now",
      `expected a function, got ${describeStoreInput(options.now)}`,
    );
  }
  return {
    tenantId,
    table: tableContextOf(options),
    ttl: new StoreTtlPolicy(options.ttl),
    index: options.index === undefined ? undefined : new SemanticIndex(options.index),
    maxValueBytes: resolveMaxValueBytes(options.maxValueBytes),
  };
}

/** `maxValueBytes`: a positive integer up to what one item holds. */
function resolveMaxValueBytes(value: unknown, option = "maxValueBytes"): number {
  if (value === undefined) return DEFAULT_MAX_VALUE_BYTES;
  if (
    typeof value !== "number" ||
    !Number.isSafeInteger(value) ||
    value < 1 ||
    value > MAX_VALUE_BYTES
  ) {
    throw new InvalidConfigurationError(
      option,
      `expected an integer from 1 to ${MAX_VALUE_BYTES}, got ${describeStoreInput(value)}`,
    );
  }
  return value;
}
