import { randomUUID } from "node:crypto";
import { API_GATEWAY_TIMEOUT_MS, DEFAULT_MAX_BODY_BYTES } from "../shared/defaults";
import {
  InvalidConfigurationError,
  InvalidIdentifierError,
  InvalidTenantClaimError,
  MissingTenantClaimError,
} from "../shared/errors";
import { assertTenantId } from "../shared/identifiers";
import { assembleRuntime, flushCallbacks, positive, type HandlerOptions } from "./assembly";
import { errorResponse, matchRoute, parseBody, type HttpEvent, type HttpResult } from "./http/http";
import type { RequestLogFields, RouteContext, RouteHandler } from "./http/route-context";
import { ROUTES, type ApiFace } from "./http/routes";
import { ASSISTANT_HANDLERS } from "./http/assistants-face";
import { CRON_HANDLERS } from "./http/crons-face";
import { fireDueCrons, type CronSweepResult } from "./crons/fire";
import { MCP_HANDLERS } from "./http/mcp-face";
import { META_HANDLERS } from "./http/meta-face";
import { RUN_STREAM_HANDLERS } from "./http/run-streams-face";
import { THREAD_STREAM_HANDLERS } from "./http/thread-stream-face";
import { RUN_HANDLERS } from "./http/runs-face";
import { SIMPLE_HANDLERS } from "./http/simple-face";
import { STORE_HANDLERS } from "./http/store-face";
import { THREAD_HANDLERS } from "./http/threads-face";
import type { ThreadRef } from "./runs/run-manager";
import type { HandlerContext } from "./types";
import { streamWithAccess, withAccess, type RequestAccess } from "./auth/request-access";
import { requestAccess } from "./request-auth";

export type { HandlerOptions } from "./assembly";

/** Time budget when there is no Lambda context (the dev server): API Gateway's integration timeout. */
export const DEFAULT_REMAINING_MS = API_GATEWAY_TIMEOUT_MS;

/**
 * The API Gateway HTTP API handler: every response whole (a stream route's events collected within API
 * Gateway's 30 s). `open` answers the same requests for a transport that streams (a function URL, the dev
 * server): a stream route's result carries its events as they come, and runs get the function's whole time.
 */
export type ApiHandler = ((event: HttpEvent, context?: HandlerContext) => Promise<HttpResult>) & {
  open(event: HttpEvent, context?: HandlerContext): Promise<HttpResult>;
  /**
   * Starts the work of those of `threads` that a crashed process left stalled or with runs queued behind no
   * holder; resolves to how many. A dev server passes its table's unsettled threads at its start and on a
   * schedule; a deployment relies on the worker's retries and on recovery when runs and threads are read.
   */
  recoverRuns(threads: AsyncIterable<ThreadRef>): Promise<number>;
  /**
   * Fires the crons due at `now` (default: the clock), each fire once however many sweepers run: the dev server
   * calls it on a timer; in AWS the worker's scheduled sweep does.
   */
  fireDueCrons(now?: number): Promise<CronSweepResult>;
};

/** Routes the project's `authenticate` does not run for (LangGraph Server skips `/info` too): they read no data. */
const UNAUTHORIZED_ROUTES = new Set(["GET /ok", "GET /info"]);

/** Time of a streamed response when the Lambda context gives none: a function's longest timeout. */
const STREAMING_REMAINING_MS = 15 * 60 * 1000;

export const ROUTE_HANDLERS: Readonly<Record<string, RouteHandler>> = {
  ...SIMPLE_HANDLERS,
  ...THREAD_HANDLERS,
  ...RUN_HANDLERS,
  ...RUN_STREAM_HANDLERS,
  ...THREAD_STREAM_HANDLERS,
  ...ASSISTANT_HANDLERS,
  ...STORE_HANDLERS,
  ...CRON_HANDLERS,
  ...META_HANDLERS,
  ...MCP_HANDLERS,
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
  const runtime = assembleRuntime(options);
  const { environment, logger, engine, registry, metrics } = runtime;
  const tenantClaim = options.tenantClaim ?? environment.tenantClaim;
  const maxBodyBytes = positive("maxBodyBytes", options.maxBodyBytes, DEFAULT_MAX_BODY_BYTES);
  const defaultRemainingMs = positive(
    "defaultRemainingMs",
    options.defaultRemainingMs,
    DEFAULT_REMAINING_MS,
  );

  const serve = async (
    event: HttpEvent,
    lambdaContext: HandlerContext | undefined,
    streaming: boolean,
  ): Promise<HttpResult> => {
    const started = performance.now();
    const requestId =
      lambdaContext?.awsRequestId ?? event.requestContext?.requestId ?? randomUUID();
    const method = event.requestContext?.http?.method ?? "GET";
    const path = routePath(event);
    const log: RequestLogFields = {};
    let route = `${method} ${path}`;
    let face: ApiFace = "server";
    let tenantId: string | undefined;
    let access: RequestAccess | undefined;
    let result: HttpResult;
    try {
      const matched = matchRoute(method, path);
      route = matched.key;
      face = matched.route.face;
      tenantId = tenantFrom(event, tenantClaim);
      // The project's auth handlers work inside the verified tenant: they name the user, never the tenant.
      if (runtime.auth && !UNAUTHORIZED_ROUTES.has(matched.key)) {
        access = await requestAccess(runtime.auth, event, path, tenantId);
      }
      // DELETE too: the SDK sends a store item's namespace and key in the body of its DELETE.
      const body = ["POST", "PUT", "PATCH", "DELETE"].includes(matched.route.method)
        ? parseBody(event, maxBodyBytes, matched.route.arrayBody ? "array" : "object")
        : {};
      // API Gateway gives up at 30 s whatever the function's timeout: stop before it does. A streaming
      // transport has the function's own time (a stream route, in the dev server, up to 15 minutes).
      const deadlineAt =
        Date.now() +
        (streaming
          ? (lambdaContext?.getRemainingTimeInMillis?.() ??
            (matched.route.streaming ? STREAMING_REMAINING_MS : defaultRemainingMs))
          : Math.min(
              lambdaContext?.getRemainingTimeInMillis?.() ?? defaultRemainingMs,
              API_GATEWAY_TIMEOUT_MS,
            ));
      const context: RouteContext = {
        engine,
        registry,
        assistants: runtime.assistants,
        metrics,
        runs: runtime.runs,
        webhooks: runtime.webhooks,
        crons: runtime.crons,
        cronsEnabled: runtime.cronsEnabled,
        maxCronsPerTenant: runtime.maxCronsPerTenant,
        deadlineMarginMs: runtime.deadlineMarginMs,
        tenantId,
        params: matched.params,
        body,
        query: event.queryStringParameters ?? {},
        headers: event.headers ?? {},
        // Time left as of each read: a route adds it to the clock after its own awaits (a run's leg deadline
        // after creating the run), and a value taken once would move the deadline later by their time.
        get remainingMs() {
          return Math.max(0, deadlineAt - Date.now());
        },
        log,
        requestId,
        logger,
      };
      result = await withAccess(access, () => ROUTE_HANDLERS[matched.key]!(context));
      // A stream is read after its route returned: each of its reads is the request's too.
      if (result.stream) result = { ...result, stream: streamWithAccess(access, result.stream) };
    } catch (error) {
      result = errorResponse(error, face, requestId, logger);
    }
    const finish = async () => {
      if (environment.langsmithTracing) await flushCallbacks(logger);
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
    };
    if (!result.stream) {
      await finish();
      return result;
    }
    // A streamed response ends when its events do: the request's line is logged then.
    const events = result.stream;
    return {
      ...result,
      stream: (async function* () {
        try {
          yield* events;
        } finally {
          await finish();
        }
      })(),
    };
  };

  const buffered = async (event: HttpEvent, lambdaContext?: HandlerContext) => {
    const result = await serve(event, lambdaContext, false);
    if (!result.stream) return result;
    const { stream, ...rest } = result;
    let body = "";
    for await (const chunk of stream) body += chunk;
    return { ...rest, body };
  };
  return Object.assign(buffered, {
    open: (event: HttpEvent, lambdaContext?: HandlerContext) => serve(event, lambdaContext, true),
    recoverRuns: async (threads: AsyncIterable<ThreadRef>) =>
      runtime.runs ? runtime.runs.recoverThreads(threads) : 0,
    fireDueCrons: (now?: number) => fireDueCrons(runtime, now ?? runtime.cronClock()),
  });
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
 * The tenant, from what an authorizer verified only: API Gateway's JWT authorizer's claims, or the `tenant_id` a
 * Lambda authorizer (JWT or API key, auth/authorizer.ts) resolved. Absent (or empty) is 401; anything but a
 * well-formed string id is 403. A claim is never coerced: a `null` or `42` claim is no tenant, never the tenant
 * "null" or "42".
 */
function tenantFrom(event: HttpEvent, claim: string): string {
  const authorizer = event.requestContext?.authorizer as
    | (NonNullable<HttpEvent["requestContext"]["authorizer"]> & {
        lambda?: Record<string, unknown>;
      })
    | undefined;
  const claims: Record<string, unknown> = authorizer?.lambda
    ? { [claim]: authorizer.lambda.tenant_id }
    : (authorizer?.jwt?.claims ?? {});
  const value = Object.hasOwn(claims, claim) ? claims[claim] : undefined;
  if (value === undefined || value === null || value === "") {
    throw new MissingTenantClaimError();
  }
  try {
    return assertTenantId(value);
  } catch (error) {
    if (error instanceof InvalidIdentifierError) throw new InvalidTenantClaimError(error);
    throw error;
  }
}
