import type {
  APIGatewayProxyEventV2WithJWTAuthorizer,
  APIGatewayProxyStructuredResultV2,
} from "aws-lambda";
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { MAX_BODY_DEPTH } from "../../shared/defaults";
import { AuthRefusedError, RuntimeError } from "../../shared/errors";
import { errorStatus, ROUTES, type ApiFace, type RouteDefinition } from "./routes";
import { toWireJson } from "../runs/wire-json";

/** The API Gateway HTTP API (payload 2.0) event the handler accepts: a JWT authorizer in front. */
export type HttpEvent = APIGatewayProxyEventV2WithJWTAuthorizer;
export type HttpResult = APIGatewayProxyStructuredResultV2 & {
  statusCode: number;
  headers: Record<string, string>;
  /**
   * A body sent as it is produced (Server-Sent Events), instead of `body`: streamed by a transport that can
   * (a Lambda function URL, the dev server), collected whole by one that cannot (API Gateway).
   */
  stream?: AsyncIterable<string>;
  /** A streaming transport calls this when its client goes away before the stream ended. */
  clientGone?: () => void;
};

/**
 * A refusal of the router or the body parser (an unknown route, a body that is not JSON), decided before any face
 * runs, with its own status and a `{detail}` body. Faces throw domain errors instead (errors.ts), which
 * ERROR_STATUSES (routes.ts) maps to a status per face.
 */
export class HttpError extends RuntimeError {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function json(
  statusCode: number,
  body: unknown,
  headers: Record<string, string> = {},
): HttpResult {
  return {
    statusCode,
    headers: { "content-type": "application/json", ...headers },
    body: toWireJson(body),
  };
}

export function noContent(): HttpResult {
  return { statusCode: 204, headers: { "content-type": "application/json" } };
}

export interface MatchedRoute {
  route: RouteDefinition;
  /** `METHOD /path/{param}`, as in ROUTES and API Gateway route keys. */
  key: string;
  params: Record<string, string>;
}

const COMPILED = ROUTES.map((route) => ({
  route,
  segments: route.path.split("/").slice(1),
}));

/**
 * Matches the request path against ROUTES (the same list API Gateway serves). Throws 404 for an unknown path
 * and 405 (with `allow`) for a known path with another method.
 */
export function matchRoute(method: string, path: string): MatchedRoute {
  const segments = path.replace(/\/+$/, "").split("/").slice(1);
  const allowed: string[] = [];
  for (const candidate of COMPILED) {
    const params = matchSegments(candidate.segments, segments);
    if (!params) continue;
    if (candidate.route.method === method) {
      return { route: candidate.route, key: `${method} ${candidate.route.path}`, params };
    }
    allowed.push(candidate.route.method);
  }
  if (allowed.length > 0) methodNotAllowed(method, path, allowed);
  throw new HttpError(404, `${method} ${path} not implemented`);
}

/**
 * What a known path answers for a method it does not serve: 405 with `allow`. Also for a route kept in ROUTES
 * only so that API Gateway passes the method on (a gateway without the route would answer 404 itself).
 */
export function methodNotAllowed(
  method: string,
  path: string,
  allowed: string[],
  reason?: string,
): never {
  throw new HttpError(405, `${method} ${path} not allowed${reason ? `: ${reason}` : ""}`, {
    allow: allowed.join(", "),
  });
}

function matchSegments(pattern: string[], actual: string[]): Record<string, string> | undefined {
  if (pattern.length !== actual.length) return undefined;
  const params: Record<string, string> = {};
  for (let index = 0; index < pattern.length; index += 1) {
    const expected = pattern[index]!;
    const value = actual[index]!;
    if (expected.startsWith("{") && expected.endsWith("}")) {
      try {
        params[expected.slice(1, -1)] = decodeURIComponent(value);
      } catch {
        return undefined;
      }
    } else if (expected !== value) {
      return undefined;
    }
  }
  return params;
}

/**
 * Parses the JSON body: 413 over `maxBytes`, 400 when malformed, not an object (an array, for a route that takes
 * one: it arrives as `items`), or nested deeper than MAX_BODY_DEPTH (every object or array is a level, the body included). Empty means `{}`. Deep values are refused
 * here, before anything runs: serializers and graphs recurse, and would fail halfway through a run.
 */
export function parseBody(
  event: HttpEvent,
  maxBytes: number,
  shape: "object" | "array" = "object",
): Record<string, unknown> {
  const raw = event.body ?? "";
  const bytes = event.isBase64Encoded ? Buffer.from(raw, "base64") : Buffer.from(raw, "utf8");
  if (bytes.byteLength > maxBytes) {
    throw new HttpError(
      413,
      `Invalid body: expected at most ${maxBytes} bytes, got ${bytes.byteLength}`,
    );
  }
  const text = bytes.toString("utf8").trim();
  if (text === "") return shape === "array" ? { items: [] } : {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new HttpError(400, "Invalid body: expected JSON, got malformed JSON");
  }
  const isShape =
    shape === "array"
      ? Array.isArray(parsed)
      : typeof parsed === "object" && parsed !== null && !Array.isArray(parsed);
  if (!isShape) {
    throw new HttpError(
      400,
      `Invalid body: expected a JSON ${shape}, got ${Array.isArray(parsed) ? "an array" : parsed === null ? "null" : `a ${typeof parsed}`}`,
    );
  }
  if (exceedsDepth(parsed, MAX_BODY_DEPTH)) {
    throw new HttpError(
      400,
      `Invalid body: expected at most ${MAX_BODY_DEPTH} levels of nesting, got more`,
    );
  }
  return shape === "array" ? { items: parsed } : (parsed as Record<string, unknown>);
}

/** True when arrays and objects nest deeper than `limit` levels. Iterative: the value may be very deep. */
export function exceedsDepth(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (typeof current !== "object" || current === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(current)) {
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/**
 * The one mapping from errors to responses: a routing-level HttpError, and a refusal of the project's auth
 * handlers (AuthRefusedError), say their own status; known errors answer
 * with their status on the route's face (routes.ts) and their message; anything else is a 500 whose body and log line
 * share an error id, and carry nothing of the error's message or stack (they can hold state).
 */
export function errorResponse(
  error: unknown,
  face: ApiFace,
  requestId: string,
  logger: Logger,
): HttpResult {
  if (error instanceof HttpError || error instanceof AuthRefusedError)
    return json(error.statusCode, { detail: error.message }, error.headers);
  const status = errorStatus(error, face);
  if (status !== undefined) return json(status, { detail: (error as Error).message });
  const errorId = randomUUID();
  logger.error({ requestId, errorId, err: { name: (error as Error)?.name } }, "unhandled error");
  return json(500, { detail: "Internal error", error_id: errorId });
}

/** Describes a value for `Invalid <field>: expected X, got Y` messages without echoing it (it may be private). */
export function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

/** Names a value that had the right type but not an allowed value: scalars verbatim (strings cut short), else its type. */
export function describeValue(value: unknown): string {
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (typeof value === "string") {
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  }
  return describe(value);
}
