import { InvalidConfigurationError } from "../shared/errors";
import {
  DEFAULT_DEADLINE_MARGIN_MS,
  DEFAULT_LOG_LEVEL,
  DEFAULT_TENANT_CLAIM,
  LOG_LEVELS,
  type LogLevel,
} from "../shared/defaults";
import { ENVIRONMENT } from "./environment";

/**
 * The runtime's configuration from the environment, read and checked once (at cold start in Lambda). The
 * handler, the image's entries and the dev server all take it from here; every check names the variable, so a
 * misconfigured function fails its init with a message that says what to fix.
 */
export interface RuntimeConfig {
  /** TABLE_NAME; undefined means no table (stateless runs, or a checkpointer given in code). */
  tableName: string | undefined;
  /** GRAPH_MODULE as given (container image only). */
  graphModule: string | undefined;
  tenantClaim: string;
  logLevel: LogLevel;
  deadlineMarginMs: number;
  /** DynamoDB endpoint override (DynamoDB Local in development). */
  dynamodbEndpoint: string | undefined;
}

type Environment = Record<string, string | undefined>;

const TABLE_NAME_PATTERN = /^[A-Za-z0-9_.-]{3,255}$/;

export function readRuntimeConfig(env: Environment): RuntimeConfig {
  const tableName = optional(env, ENVIRONMENT.tableName);
  if (tableName !== undefined) checkTableName(tableName);
  return {
    tableName,
    graphModule: optional(env, ENVIRONMENT.graphModule),
    tenantClaim: optional(env, ENVIRONMENT.tenantClaim) ?? DEFAULT_TENANT_CLAIM,
    logLevel: readLogLevel(env),
    deadlineMarginMs: readDeadlineMargin(env),
    dynamodbEndpoint: readEndpoint(env),
  };
}

/** The table name, required (the image: without it every paused thread would be lost). */
export function requireTableName(config: Pick<RuntimeConfig, "tableName">): string {
  if (config.tableName === undefined) {
    throw new InvalidConfigurationError(
      ENVIRONMENT.tableName,
      "expected a DynamoDB table name (3 to 255 of A-Z a-z 0-9 _ . -), got nothing (the variable is not set)",
    );
  }
  return config.tableName;
}

function checkTableName(value: string): void {
  if (!TABLE_NAME_PATTERN.test(value)) {
    throw new InvalidConfigurationError(
      ENVIRONMENT.tableName,
      `expected a DynamoDB table name (3 to 255 of A-Z a-z 0-9 _ . -), got ${JSON.stringify(value)}`,
    );
  }
}

function readLogLevel(env: Environment): LogLevel {
  const value = optional(env, ENVIRONMENT.logLevel) ?? DEFAULT_LOG_LEVEL;
  if (!(LOG_LEVELS as readonly string[]).includes(value)) {
    throw new InvalidConfigurationError(
      ENVIRONMENT.logLevel,
      `expected one of ${LOG_LEVELS.join(", ")}, got ${JSON.stringify(value)}`,
    );
  }
  return value as LogLevel;
}

function readDeadlineMargin(env: Environment): number {
  const value = optional(env, ENVIRONMENT.deadlineMarginMs);
  if (value === undefined) return DEFAULT_DEADLINE_MARGIN_MS;
  if (!/^\d{1,7}$/.test(value)) {
    throw new InvalidConfigurationError(
      ENVIRONMENT.deadlineMarginMs,
      `expected a whole number of milliseconds (0 to 9999999), got ${JSON.stringify(value)}`,
    );
  }
  return Number(value);
}

function readEndpoint(env: Environment): string | undefined {
  const value = optional(env, ENVIRONMENT.dynamodbEndpoint);
  if (value === undefined) return undefined;
  if (!/^https?:\/\/[^\s/]+(\/\S*)?$/.test(value)) {
    throw new InvalidConfigurationError(
      ENVIRONMENT.dynamodbEndpoint,
      `expected an http(s) URL, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/** An unset or empty variable is absent (Terraform and Docker both set empty strings for "no value"). */
function optional(env: Environment, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === "" ? undefined : value;
}
