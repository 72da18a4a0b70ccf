import { randomUUID } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { Logger } from "pino";
import { DynamoDBSaver } from "../checkpoint/dynamodb";
import { API_GATEWAY_TIMEOUT_MS, DEFAULT_MAX_BODY_BYTES } from "../shared/defaults";
import { InvalidConfigurationError, InvalidIdentifierError } from "../shared/errors";
import { assertTenantId } from "../shared/identifiers";
import type { ThreadStore } from "../shared/threads";
import { TableContext } from "../table/context";
import { readRuntimeConfig, type RuntimeConfig } from "./config";
import { RunEngine, type TenantSaver } from "./engine";
import { GraphRegistry } from "./graph-registry";
import {
  errorResponse,
  HttpError,
  matchRoute,
  parseBody,
  type HttpEvent,
  type HttpResult,
} from "./http";
import { InMemoryThreadStore } from "./in-memory-thread-store";
import { createLogger, RunMetrics, stdoutSink, type MetricsSink } from "./observability";
import type { RequestLogFields, RouteContext, RouteHandler } from "./route-context";
import { ROUTES, type ApiFace } from "./routes";
import { RequestScope } from "./scoped-checkpointer";
import * as server from "./server-face";
import * as simple from "./simple-face";
import type { AnySaver, CheckpointerOption, GraphFactory, HandlerContext } from "./types";

/** Time budget when there is no Lambda context (the dev server): API Gateway's integration timeout. */
export const DEFAULT_REMAINING_MS = API_GATEWAY_TIMEOUT_MS;

export interface HandlerOptions {
  /** The graphs, by assistant id. Give this or `graph`. */
  assistants?: Record<string, GraphFactory>;
  /** A single graph, served as assistant `agent`. */
  graph?: GraphFactory;
  /**
   * A saver shared by all tenants (the handler scopes thread ids by tenant; a saver bound to one tenant, such
   * as a DynamoDBSaver, is refused here), a function building one per request for the caller's tenant (a
   * saver it returns bound to another tenant is refused), or `false` for stateless runs. Default: a DynamoDBSaver per request when
   * a table name is set (option or `TABLE_NAME`), else stateless.
   */
  checkpointer?: CheckpointerOption;
  /** DynamoDB table (default `TABLE_NAME`). Used when `checkpointer` is not given. */
  tableName?: string;
  /** DynamoDB client shared by every request of the container (default: one built from the environment). */
  dynamodbClient?: DynamoDBClient;
  /** Seconds a DynamoDB thread lives after its last write (default 30 days). */
  ttlSeconds?: number;
  /** Thread records, leases and the inbox. Default: the table's, or in memory for other checkpointers. */
  threadStore?: ThreadStore;
  /** JWT claim carrying the tenant id (default `TENANT_CLAIM` or `custom:tenant_id`). */
  tenantClaim?: string;
  /**
   * The configuration read from the environment (TABLE_NAME, TENANT_CLAIM, LOG_LEVEL, DEADLINE_MARGIN_MS,
   * DYNAMODB_ENDPOINT); default: read from `process.env` once, here. Options given in code win over it.
   */
  environment?: RuntimeConfig;
  /** Largest accepted request body in bytes (default 256 KiB). */
  maxBodyBytes?: number;
  /** A run is stopped this many ms before the Lambda deadline (default `DEADLINE_MARGIN_MS` or 3000). */
  deadlineMarginMs?: number;
  /** Time budget when the Lambda context has none (default 30 s). */
  defaultRemainingMs?: number;
  /** LangGraph durability of runs (default LangGraph's: "async"). */
  durability?: "sync" | "async" | "exit";
  logger?: Logger;
  /** Where EMF metric lines go (default stdout); `false` for none. */
  metrics?: MetricsSink | false;
}

export type ApiHandler = (event: HttpEvent, context?: HandlerContext) => Promise<HttpResult>;

export const ROUTE_HANDLERS: Readonly<Record<string, RouteHandler>> = {
  "POST /invoke": simple.invoke,
  "GET /threads/{thread_id}/status": simple.threadStatus,
  "POST /threads": server.createThread,
  "POST /threads/search": server.searchThreads,
  "GET /threads/{thread_id}": server.getThread,
  "DELETE /threads/{thread_id}": server.deleteThread,
  "GET /threads/{thread_id}/state": server.getThreadState,
  "POST /threads/{thread_id}/history": server.getThreadHistory,
  "POST /threads/{thread_id}/runs/wait": server.waitRun,
  "GET /assistants/{assistant_id}": server.getAssistant,
  "POST /assistants/search": server.searchAssistants,
};

// ROUTES feeds API Gateway: a route without a handler (or the reverse) is a bug caught at container init.
for (const route of ROUTES) {
  if (!ROUTE_HANDLERS[`${route.method} ${route.path}`]) {
    throw new InvalidConfigurationError(
      "ROUTES",
      `expected a handler for ${route.method} ${route.path}`,
    );
  }
}
if (Object.keys(ROUTE_HANDLERS).length !== ROUTES.length) {
  throw new InvalidConfigurationError("ROUTES", "expected one entry per served route");
}

/**
 * Builds the API Gateway HTTP API (payload 2.0) Lambda handler. Everything that does not depend on a request
 * (clients, logger, stores, compiled graphs) is built here or on first use, once per container.
 */
export function createHandler(options: HandlerOptions): ApiHandler {
  const environment = options.environment ?? readRuntimeConfig(process.env);
  const logger = options.logger ?? createLogger(environment.logLevel);
  const factories = resolveAssistants(options);
  const tenantClaim = options.tenantClaim ?? environment.tenantClaim;
  const maxBodyBytes = positive("maxBodyBytes", options.maxBodyBytes, DEFAULT_MAX_BODY_BYTES);
  const deadlineMarginMs = positive(
    "deadlineMarginMs",
    options.deadlineMarginMs,
    environment.deadlineMarginMs,
    true,
  );
  const defaultRemainingMs = positive(
    "defaultRemainingMs",
    options.defaultRemainingMs,
    DEFAULT_REMAINING_MS,
  );
  const { saverFor, store } = resolveCheckpointing(options, environment);
  const scope = saverFor ? new RequestScope() : undefined;
  const registry = new GraphRegistry(factories, scope?.checkpointer, logger);
  const engine = new RunEngine({
    registry,
    scope,
    store,
    saverFor,
    deadlineMarginMs,
    durability: options.durability,
    logger,
  });
  const metrics = new RunMetrics(
    options.metrics === false ? undefined : (options.metrics ?? stdoutSink),
  );

  return async (event, lambdaContext) => {
    const started = performance.now();
    const requestId =
      lambdaContext?.awsRequestId ?? event.requestContext?.requestId ?? randomUUID();
    const method = event.requestContext?.http?.method ?? "GET";
    const path = routePath(event);
    const log: RequestLogFields = {};
    let route = `${method} ${path}`;
    let face: ApiFace = "server";
    let tenantId: string | undefined;
    let result: HttpResult;
    try {
      const matched = matchRoute(method, path);
      route = matched.key;
      face = matched.route.face;
      tenantId = tenantFrom(event, tenantClaim);
      const body = matched.route.method === "POST" ? parseBody(event, maxBodyBytes) : {};
      const context: RouteContext = {
        engine,
        registry,
        metrics,
        tenantId,
        params: matched.params,
        body,
        query: event.queryStringParameters ?? {},
        // API Gateway gives up at 30 s whatever the function's timeout: stop before it does.
        remainingMs: Math.min(
          lambdaContext?.getRemainingTimeInMillis?.() ?? defaultRemainingMs,
          API_GATEWAY_TIMEOUT_MS,
        ),
        log,
        requestId,
        logger,
      };
      result = await ROUTE_HANDLERS[matched.key]!(context);
    } catch (error) {
      result = errorResponse(error, face, requestId, logger);
    }
    logger.info(
      {
        requestId,
        tenant: tenantId,
        thread: log.thread,
        assistant: log.assistant,
        route,
        statusCode: result.statusCode,
        outcome: log.outcome,
        durationMs: Math.round((performance.now() - started) * 10) / 10,
      },
      "request",
    );
    return result;
  };
}

/** The request path without a named stage's prefix (the `$default` stage has none). */
function routePath(event: HttpEvent): string {
  const raw = event.rawPath ?? event.requestContext?.http?.path ?? "/";
  const stage = event.requestContext?.stage;
  if (stage && stage !== "$default" && (raw === `/${stage}` || raw.startsWith(`/${stage}/`))) {
    return raw.slice(stage.length + 1) || "/";
  }
  return raw;
}

/**
 * The tenant, from the verified claims only: absent (or empty) is 401; anything but a well-formed string id is
 * 403. A claim is never coerced: a `null` or `42` claim is no tenant, never the tenant "null" or "42".
 */
function tenantFrom(event: HttpEvent, claim: string): string {
  const claims: Record<string, unknown> = event.requestContext?.authorizer?.jwt?.claims ?? {};
  const value = Object.hasOwn(claims, claim) ? claims[claim] : undefined;
  if (value === undefined || value === null || value === "") {
    throw new HttpError(401, "Unauthorized: no tenant claim in the verified token");
  }
  try {
    return assertTenantId(value);
  } catch (error) {
    if (error instanceof InvalidIdentifierError) {
      throw new HttpError(403, `Forbidden: ${error.message}`);
    }
    throw error;
  }
}

function resolveAssistants(options: HandlerOptions): Record<string, GraphFactory> {
  if (options.assistants && options.graph) {
    throw new InvalidConfigurationError("graph", "expected either assistants or graph, got both");
  }
  if (options.graph) return { agent: options.graph };
  if (options.assistants) return options.assistants;
  throw new InvalidConfigurationError(
    "assistants",
    "expected a map of GraphFactory functions, got nothing",
  );
}

function resolveCheckpointing(
  options: HandlerOptions,
  environment: RuntimeConfig,
): {
  saverFor: ((tenantId: string) => TenantSaver) | undefined;
  store: ThreadStore | undefined;
} {
  const checkpointer = options.checkpointer;
  if (checkpointer === false) return { saverFor: undefined, store: undefined };
  if (typeof checkpointer === "function") {
    return {
      saverFor: (tenantId) => factorySaver(checkpointer(tenantId), tenantId),
      store: options.threadStore ?? new InMemoryThreadStore(),
    };
  }
  if (checkpointer) {
    // One instance serves every tenant: the handler scopes thread ids by tenant. An instance bound to one
    // tenant would give that tenant unscoped ids that another tenant's scoped ids could equal.
    if (checkpointer instanceof DynamoDBSaver) {
      throw new InvalidConfigurationError(
        "checkpointer",
        `expected a saver shared by all tenants or a function (tenantId) => saver, got a saver bound to tenant ${checkpointer.tenantId}`,
      );
    }
    return {
      saverFor: () => ({ saver: checkpointer, bound: false }),
      store: options.threadStore ?? new InMemoryThreadStore(),
    };
  }
  const tableName = options.tableName ?? environment.tableName;
  if (!tableName) return { saverFor: undefined, store: undefined };
  const endpoint = environment.dynamodbEndpoint;
  // One table context per container: every request's saver and the thread store share its record cache.
  const table = new TableContext({
    tableName,
    client: options.dynamodbClient ?? new DynamoDBClient(endpoint ? { endpoint } : {}),
    ttlSeconds: options.ttlSeconds,
  });
  return {
    saverFor: (tenantId) => ({ saver: new DynamoDBSaver({ table, tenantId }), bound: true }),
    store: options.threadStore ?? table.threads,
  };
}

/** A factory's saver is bound when it is bound to the requested tenant; bound to another, it is refused. */
function factorySaver(saver: AnySaver, tenantId: string): TenantSaver {
  const bound = saver instanceof DynamoDBSaver ? saver.tenantId : undefined;
  if (bound !== undefined && bound !== tenantId) {
    throw new InvalidConfigurationError(
      "checkpointer",
      `expected the saver for tenant ${tenantId}, got one bound to tenant ${bound}`,
    );
  }
  return { saver, bound: bound !== undefined };
}

function positive(
  option: string,
  value: number | undefined,
  fallback: number,
  allowZero = false,
): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new InvalidConfigurationError(option, `expected a positive number, got ${value}`);
  }
  return value;
}
