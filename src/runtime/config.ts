import { InvalidConfigurationError } from "../shared/errors";
import { signingKeyOf } from "../shared/webhook-signature";
import {
  DEFAULT_DEADLINE_MARGIN_MS,
  DEFAULT_LOG_LEVEL,
  DEFAULT_TENANT_CLAIM,
  LOG_LEVELS,
  type LogLevel,
} from "../shared/defaults";
import {
  ENVIRONMENT,
  LANGGRAPH_ENVIRONMENT,
  OPTIONAL_ENVIRONMENT,
  SECRET_ENVIRONMENT,
} from "./environment";
import { AUTH_POLICIES, type AuthPolicy } from "./auth/authorized-stores";
import { MAX_RUN_LEGS_RANGE } from "../shared/limits";

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
  /** The worker function background runs go to; undefined: they run in this process. */
  workerFunctionName: string | undefined;
  maxRunLegs: number;
  /** Hosts webhooks may be posted to. */
  webhookAllowedHosts: string[];
  /** Key bytes that sign webhook deliveries; undefined: unsigned. Never logged. */
  webhookSigningKey: Buffer | undefined;
  /**
   * LangSmith (LangChain) tracing is on: every invocation waits for LangChain's pending callbacks before it
   * returns, or Lambda would freeze the trace batches still being sent.
   */
  langsmithTracing: boolean;
  /** JWT_ISSUER and JWT_AUDIENCE: who may call the function URL (both set, or neither). */
  jwt: { issuer: string; audiences: string[] } | undefined;
  /** API_KEY_CACHE_SECONDS: how long a container reuses an API key's verdict (default 60, 0 to 3600). */
  apiKeyCacheSeconds: number;
  /** CRONS_ENABLED: due crons are fired and new ones accepted (default true). */
  cronsEnabled: boolean;
  /** AUTH_POLICY: a ready-made LangGraph auth policy; undefined when unset. */
  authPolicy?: AuthPolicy;
  /**
   * LANGGRAPH_CONFIG: the default config and context of each graph's system assistant, by graph id, as LangGraph
   * Server reads it; undefined when the variable is not set.
   */
  assistantDefaults?: Record<string, AssistantDefaults>;
}

/** What a system assistant carries by default: its run config and its context. */
export interface AssistantDefaults {
  /** `configurable`, `tags`, `recursion_limit` and any other run config key. */
  config: Record<string, unknown>;
  context: Record<string, unknown>;
}

/** Legs of a background run by default: eight function timeouts (two hours with the worker's 15 minutes). */
export const DEFAULT_MAX_RUN_LEGS = 8;

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
    workerFunctionName: readWorkerFunction(env),
    maxRunLegs: readMaxRunLegs(env),
    webhookAllowedHosts: readWebhookHosts(env),
    webhookSigningKey: readWebhookSigningKey(env),
    jwt: readJwt(env),
    apiKeyCacheSeconds: readApiKeyCacheSeconds(env),
    cronsEnabled: readCronsEnabled(env),
    ...readAuthPolicy(env),
    langsmithTracing: TRACING_SWITCHES.some(
      (name) => optional(env, name)?.toLowerCase() === "true",
    ),
    assistantDefaults: readAssistantDefaults(env),
  };
}

/**
 * LANGGRAPH_CONFIG as LangGraph Server reads it: a JSON object of graph id to an object whose `context` is the
 * system assistant's context and whose other keys are its config. Checked as an assistant's config is when
 * created through the API; the value is never echoed (it may carry keys).
 */
export function readAssistantDefaults(
  env: Environment,
): Record<string, AssistantDefaults> | undefined {
  const name = LANGGRAPH_ENVIRONMENT.graphConfig;
  const text = optional(env, name);
  if (text === undefined) return undefined;
  const fail = (reason: string): never => {
    throw new InvalidConfigurationError(name, reason);
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    fail(
      "expected a JSON object of graph id to its system assistant's config, got text that does not parse",
    );
  }
  if (!isPlainObject(parsed)) {
    fail(
      `expected a JSON object of graph id to its system assistant's config, got ${describeJson(parsed)}`,
    );
  }
  const defaults: Record<string, AssistantDefaults> = {};
  for (const [graphId, entry] of Object.entries(parsed as Record<string, unknown>)) {
    const field = (key?: string) =>
      `${JSON.stringify(graphId)}${key === undefined ? "" : `.${key}`}`;
    if (!isPlainObject(entry)) {
      fail(`expected ${field()} to be an object, got ${describeJson(entry)}`);
    }
    const { context, ...config } = entry as Record<string, unknown>;
    if (context !== undefined && context !== null && !isPlainObject(context)) {
      fail(`expected ${field("context")} to be an object, got ${describeJson(context)}`);
    }
    const { configurable, tags, recursion_limit: recursionLimit } = config;
    if (configurable !== undefined && !isPlainObject(configurable)) {
      fail(`expected ${field("configurable")} to be an object, got ${describeJson(configurable)}`);
    }
    if (
      tags !== undefined &&
      (!Array.isArray(tags) || tags.some((tag) => typeof tag !== "string"))
    ) {
      fail(`expected ${field("tags")} to be an array of strings, got ${describeJson(tags)}`);
    }
    if (
      recursionLimit !== undefined &&
      (typeof recursionLimit !== "number" ||
        !Number.isInteger(recursionLimit) ||
        recursionLimit < 1)
    ) {
      fail(
        `expected ${field("recursion_limit")} to be a positive integer, got ${describeJson(recursionLimit)}`,
      );
    }
    // A graph id such as "__proto__" stays an ordinary key.
    Object.defineProperty(defaults, graphId, {
      value: { config, context: (context as Record<string, unknown> | null | undefined) ?? {} },
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return defaults;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A JSON value's kind, for messages: never the value itself. */
function describeJson(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "number" || typeof value === "boolean") return `${typeof value} ${value}`;
  return `a ${typeof value}`;
}

/** The variables that switch LangChain's tracing on, as @langchain/core reads them. */
const TRACING_SWITCHES = [
  "LANGSMITH_TRACING",
  "LANGSMITH_TRACING_V2",
  "LANGCHAIN_TRACING",
  "LANGCHAIN_TRACING_V2",
] as const;

function readJwt(env: Environment): RuntimeConfig["jwt"] {
  const issuer = optional(env, ENVIRONMENT.jwtIssuer);
  const audiences = (optional(env, ENVIRONMENT.jwtAudience) ?? "")
    .split(",")
    .map((audience) => audience.trim())
    .filter((audience) => audience !== "");
  if (issuer === undefined && audiences.length === 0) return undefined;
  if (issuer === undefined) {
    throw new InvalidConfigurationError(
      ENVIRONMENT.jwtIssuer,
      `expected the issuer of the tokens ${ENVIRONMENT.jwtAudience} names, got nothing`,
    );
  }
  if (!/^https:\/\/\S+$|^http:\/\/(localhost|127\.0\.0\.1)(:\d+)?(\/\S*)?$/.test(issuer)) {
    throw new InvalidConfigurationError(
      ENVIRONMENT.jwtIssuer,
      `expected an https:// URL, got ${JSON.stringify(issuer)}`,
    );
  }
  if (audiences.length === 0) {
    throw new InvalidConfigurationError(
      ENVIRONMENT.jwtAudience,
      `expected at least one audience for ${ENVIRONMENT.jwtIssuer}, got nothing`,
    );
  }
  return { issuer, audiences };
}

/** Comma-separated `host` or `host:port` entries; hosts are case-insensitive, so they are kept lowercase. */
function readWebhookHosts(env: Environment): string[] {
  const hosts = (optional(env, ENVIRONMENT.webhookAllowedHosts) ?? "")
    .split(",")
    .map((host) => host.trim().toLowerCase())
    .filter((host) => host !== "");
  for (const host of hosts) {
    if (!/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:\d{1,5})?$/.test(host)) {
      throw new InvalidConfigurationError(
        ENVIRONMENT.webhookAllowedHosts,
        `expected comma-separated host names (host or host:port), got ${JSON.stringify(host)}`,
      );
    }
  }
  return hosts;
}

function readWebhookSigningKey(env: Environment): Buffer | undefined {
  const secret = optional(env, SECRET_ENVIRONMENT.webhookSigningSecret);
  if (secret === undefined) return undefined;
  try {
    return signingKeyOf(secret);
  } catch (error) {
    // The reason names the expected format only: the value is a secret and goes nowhere.
    throw new InvalidConfigurationError(
      SECRET_ENVIRONMENT.webhookSigningSecret,
      (error as Error).message,
    );
  }
}

function readCronsEnabled(env: Environment): boolean {
  const value = optional(env, ENVIRONMENT.cronsEnabled);
  if (value === undefined || value === "true") return true;
  if (value === "false") return false;
  throw new InvalidConfigurationError(
    ENVIRONMENT.cronsEnabled,
    `expected true or false, got ${JSON.stringify(value)}`,
  );
}

function readWorkerFunction(env: Environment): string | undefined {
  const value = optional(env, ENVIRONMENT.workerFunctionName);
  if (value === undefined) return undefined;
  if (
    !/^(arn:[a-z-]+:lambda:[a-z0-9-]+:\d{12}:function:)?[A-Za-z0-9_-]{1,64}(:[A-Za-z0-9_$-]+)?$/.test(
      value,
    )
  ) {
    throw new InvalidConfigurationError(
      ENVIRONMENT.workerFunctionName,
      `expected a Lambda function name or ARN, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function readMaxRunLegs(env: Environment): number {
  const value = optional(env, ENVIRONMENT.maxRunLegs);
  if (value === undefined) return DEFAULT_MAX_RUN_LEGS;
  const { min, max } = MAX_RUN_LEGS_RANGE;
  if (!/^\d{1,6}$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new InvalidConfigurationError(
      ENVIRONMENT.maxRunLegs,
      `expected a whole number of legs from ${min} to ${max}, got ${JSON.stringify(value)}`,
    );
  }
  return Number(value);
}

/** A revocation reaches a warm container within this many seconds by default. */
export const DEFAULT_API_KEY_CACHE_SECONDS = 60;

function readApiKeyCacheSeconds(env: Environment): number {
  const value = optional(env, ENVIRONMENT.apiKeyCacheSeconds);
  if (value === undefined) return DEFAULT_API_KEY_CACHE_SECONDS;
  if (!/^\d{1,4}$/.test(value) || Number(value) > 3600) {
    throw new InvalidConfigurationError(
      ENVIRONMENT.apiKeyCacheSeconds,
      `expected a whole number of seconds from 0 to 3600, got ${JSON.stringify(value)}`,
    );
  }
  return Number(value);
}

function readAuthPolicy(env: Environment): { authPolicy?: AuthPolicy } {
  const value = optional(env, OPTIONAL_ENVIRONMENT.authPolicy);
  if (value === undefined) return {};
  if (!(AUTH_POLICIES as readonly string[]).includes(value)) {
    throw new InvalidConfigurationError(
      OPTIONAL_ENVIRONMENT.authPolicy,
      `expected one of ${AUTH_POLICIES.join(", ")}, got ${JSON.stringify(value)}`,
    );
  }
  return { authPolicy: value as AuthPolicy };
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
