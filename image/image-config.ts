import { InvalidConfigurationError } from "../src/shared/errors";
import { ENVIRONMENT } from "../src/runtime/environment";

/**
 * The container's configuration, read from its environment once at cold start. Every check names the variable,
 * so a misconfigured function fails its init with a message that says what to fix.
 */
export interface ImageConfig {
  tableName: string;
  /** GRAPH_MODULE as given; undefined serves the bundled booking example. */
  graphModule: string | undefined;
  tenantClaim: string | undefined;
  logLevel: string;
  deadlineMarginMs: number | undefined;
  /** DynamoDB endpoint override (DynamoDB Local in development). */
  dynamodbEndpoint: string | undefined;
}

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
const TABLE_NAME_PATTERN = /^[A-Za-z0-9_.-]{3,255}$/;

type Environment = Record<string, string | undefined>;

export function readImageConfig(env: Environment): ImageConfig {
  return {
    tableName: readTableName(env),
    graphModule: optional(env, ENVIRONMENT.graphModule),
    tenantClaim: optional(env, ENVIRONMENT.tenantClaim),
    logLevel: readLogLevel(env),
    deadlineMarginMs: readDeadlineMargin(env),
    dynamodbEndpoint: readEndpoint(env),
  };
}

/** TABLE_NAME is required: without it the handler would run stateless and lose every paused thread. */
export function readTableName(env: Environment): string {
  const name = ENVIRONMENT.tableName;
  const value = env[name];
  if (value === undefined || !TABLE_NAME_PATTERN.test(value)) {
    throw new InvalidConfigurationError(
      name,
      `expected a DynamoDB table name (3 to 255 of A-Z a-z 0-9 _ . -), got ${show(value)}`,
    );
  }
  return value;
}

export function readLogLevel(env: Environment): string {
  const name = ENVIRONMENT.logLevel;
  const value = optional(env, name) ?? "info";
  if (!(LOG_LEVELS as readonly string[]).includes(value)) {
    throw new InvalidConfigurationError(
      name,
      `expected one of ${LOG_LEVELS.join(", ")}, got ${show(value)}`,
    );
  }
  return value;
}

function readDeadlineMargin(env: Environment): number | undefined {
  const name = ENVIRONMENT.deadlineMarginMs;
  const value = optional(env, name);
  if (value === undefined) return undefined;
  if (!/^\d{1,7}$/.test(value)) {
    throw new InvalidConfigurationError(
      name,
      `expected a whole number of milliseconds (0 to 9999999), got ${show(value)}`,
    );
  }
  return Number(value);
}

export function readEndpoint(env: Environment): string | undefined {
  const name = ENVIRONMENT.dynamodbEndpoint;
  const value = optional(env, name);
  if (value === undefined) return undefined;
  if (!/^https?:\/\/[^\s/]+(\/\S*)?$/.test(value)) {
    throw new InvalidConfigurationError(name, `expected an http(s) URL, got ${show(value)}`);
  }
  return value;
}

/** An unset or empty variable is absent (Terraform and Docker both set empty strings for "no value"). */
function optional(env: Environment, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === "" ? undefined : value;
}

function show(value: string | undefined): string {
  return value === undefined ? "nothing (the variable is not set)" : JSON.stringify(value);
}
