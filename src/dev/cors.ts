import type { IncomingMessage } from "node:http";
import { InvalidConfigurationError } from "../shared/errors";

/**
 * CORS of the dev server, as `langgraph dev` answers local UIs (Agent Chat UI, Agent Inbox, a Vite app on another
 * port): pages on any loopback origin may call it, other origins only when listed. Preflights are answered before
 * authentication (a browser never sends a credential with one), every other response names the allowed origin, so
 * a browser hands a 401 or a stream's events to the page; a disallowed origin gets no CORS header at all and the
 * browser keeps the answer from the page.
 */

/** Extra origins allowed besides loopback ones: comma-separated, like `https://ui.example.com`. */
export const CORS_ORIGINS_VARIABLE = "CORS_ALLOW_ORIGINS";

/**
 * What the LangGraph SDK and the UIs built on it send: credentials (`authorization`, the SDK's `apiKey` as
 * `x-api-key`, and `x-auth-scheme`, which Agent Chat UI and Studio add), JSON bodies, `last-event-id` when a stream
 * reconnects, `accept`, `x-request-id` for tracing, and `mcp-protocol-version`, which an MCP client sends to `/mcp`
 * after `initialize` (a browser client such as the MCP Inspector). Any other `x-` header a preflight asks for is allowed too:
 * clients put their own `x-` headers in the SDK's `defaultHeaders` for the graph's config.
 */
export const CORS_ALLOW_HEADERS = [
  "accept",
  "authorization",
  "content-type",
  "last-event-id",
  "mcp-protocol-version",
  "x-api-key",
  "x-auth-scheme",
  "x-request-id",
] as const;

/**
 * What the SDK reads from responses: `content-location` (the run a created run or stream is, its `onRunCreated`),
 * `location` (where a stream reconnects), and the pagination headers of searches.
 */
export const CORS_EXPOSE_HEADERS = [
  "content-location",
  "location",
  "x-pagination-next",
  "x-pagination-total",
] as const;

const ALLOW_METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS";
/** How long a browser may reuse a preflight's answer (Chromium caps it at 2 hours). */
const MAX_AGE_SECONDS = 600;
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

export interface CorsPolicy {
  /** A preflight's answer (status 204): allow headers for an allowed origin, none for another. */
  preflight(request: IncomingMessage): Record<string, string>;
  /** The headers every other response carries: the origin when allowed, and `Vary: Origin` always. */
  response(request: IncomingMessage): Record<string, string>;
}

/** A CORS preflight: an OPTIONS request that names the method the page wants to send. */
export function isPreflight(request: IncomingMessage): boolean {
  return (
    request.method === "OPTIONS" && request.headers["access-control-request-method"] !== undefined
  );
}

/** Loopback origins (http or https, any port) and `origins`, exactly as listed (scheme, host and port). */
export function createCorsPolicy(origins: readonly string[] = []): CorsPolicy {
  const listed = new Set(origins.map((origin) => normalizeOrigin(origin, "origins")));
  const allowed = (origin: string | undefined): origin is string =>
    origin !== undefined && (listed.has(origin) || isLoopbackOrigin(origin));
  return {
    preflight(request) {
      const origin = request.headers.origin;
      const headers: Record<string, string> = {
        vary: "Origin, Access-Control-Request-Headers, Access-Control-Request-Private-Network",
      };
      if (!allowed(origin)) return headers;
      headers["access-control-allow-origin"] = origin;
      headers["access-control-allow-methods"] = ALLOW_METHODS;
      headers["access-control-allow-headers"] = allowedHeaders(
        request.headers["access-control-request-headers"],
      );
      headers["access-control-max-age"] = String(MAX_AGE_SECONDS);
      // Chromium asks before a page of a listed public origin may call this machine (Private Network Access).
      if (request.headers["access-control-request-private-network"] === "true") {
        headers["access-control-allow-private-network"] = "true";
      }
      return headers;
    },
    response(request) {
      const origin = request.headers.origin;
      const headers: Record<string, string> = { vary: "Origin" };
      if (!allowed(origin)) return headers;
      headers["access-control-allow-origin"] = origin;
      headers["access-control-expose-headers"] = CORS_EXPOSE_HEADERS.join(", ");
      return headers;
    },
  };
}

/** `http(s)://localhost`, `127.0.0.1` or `[::1]`, on any port: pages served on this machine. */
export function isLoopbackOrigin(origin: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  return (
    (url.protocol === "http:" || url.protocol === "https:") &&
    LOOPBACK_HOSTS.has(url.hostname) &&
    url.origin === origin
  );
}

/** The extra origins of `CORS_ALLOW_ORIGINS` (none when unset), each checked. */
export function readCorsOrigins(env: NodeJS.ProcessEnv): string[] {
  const value = env[CORS_ORIGINS_VARIABLE];
  if (value === undefined || value.trim() === "") return [];
  return value
    .split(",")
    .map((origin) => origin.trim())
    .filter((origin) => origin !== "")
    .map((origin) => normalizeOrigin(origin, CORS_ORIGINS_VARIABLE));
}

/** An origin as browsers send it (`https://ui.example.com`, no path, no trailing slash); never `*`. */
function normalizeOrigin(origin: string, option: string): string {
  let url: URL | undefined;
  try {
    url = new URL(origin);
  } catch {
    url = undefined;
  }
  const bare = origin.replace(/\/$/, "");
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || url.origin !== bare) {
    throw new InvalidConfigurationError(
      option,
      `expected origins like https://ui.example.com (scheme, host and port; no path, never *), got ${JSON.stringify(origin)}`,
    );
  }
  return url.origin;
}

/** The standard headers, and every `x-` header the preflight asks for. */
function allowedHeaders(requested: string | undefined): string {
  const extra = (requested ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter(
      (name) =>
        /^x-[a-z0-9-]+$/.test(name) && !(CORS_ALLOW_HEADERS as readonly string[]).includes(name),
    );
  return [...CORS_ALLOW_HEADERS, ...new Set(extra)].join(", ");
}
