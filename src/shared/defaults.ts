/**
 * Defaults that more than one part of Memory Table relies on (the library, the image, the dev server and the
 * Terraform module). Each value is defined here once; the others import it.
 */

/** JWT claim that carries the tenant id (Cognito puts custom attributes into ID tokens). */
export const DEFAULT_TENANT_CLAIM = "custom:tenant_id";

/** A run is stopped this many milliseconds before the Lambda deadline, leaving time to record its outcome. */
export const DEFAULT_DEADLINE_MARGIN_MS = 3000;

/** pino levels accepted by `LOG_LEVEL`, the module's `log_level` and the handler's logger. */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const DEFAULT_LOG_LEVEL: LogLevel = "info";

/** A thread lives this long after its last write (30 days), then expires whole. */
export const DEFAULT_TTL_SECONDS = 30 * 24 * 60 * 60;

/** Largest accepted HTTP request body. */
export const DEFAULT_MAX_BODY_BYTES = 256 * 1024;

/** Deepest nesting of arrays and objects accepted in a request body (LangChain messages need about 8). */
export const MAX_BODY_DEPTH = 64;

/** API Gateway HTTP API's integration timeout: a buffered response never takes longer. */
export const API_GATEWAY_TIMEOUT_MS = 30_000;
