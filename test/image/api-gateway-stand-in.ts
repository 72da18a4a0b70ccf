import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ApiCorsConfiguration } from "../../modules/construct/api";
import { ROUTES } from "../../src/runtime/http/routes";
import type { LambdaFunctionStandIn } from "./lambda-invoke-stand-in";

/**
 * API Gateway's HTTP API in front of the image's API function, on 127.0.0.1: API Gateway has no local engine, so
 * this stands in for the parts the module configures. The routes are the module's (ROUTES; anything else is 404
 * `Not Found`); each is behind the JWT authorizer (a verifier given here: 401 `Unauthorized` without a valid
 * bearer token) or behind the module's Lambda REQUEST authorizer (the image's `authorizer.handler`, invoked on
 * every request as its TTL of 0 makes API Gateway do; a refusal is 403 `Forbidden`, its context is handed on as
 * `requestContext.authorizer.lambda`). The integration is payload 2.0 with API Gateway's 30 s limit. With the
 * module's `cors_configuration` (apiCorsConfiguration), preflights are answered here, before any authorizer and
 * without reaching the function, and an allowed origin gets `Access-Control-Allow-Origin` on every answer (API
 * Gateway replaces an integration's own CORS headers).
 */
export type GatewayAuthorizer =
  | {
      kind: "jwt";
      /** The verified claims of an `Authorization` header, or undefined when it is missing or invalid. */
      verify(authorization: string | undefined): Promise<Record<string, unknown> | undefined>;
    }
  | { kind: "lambda"; fn: LambdaFunctionStandIn };

export interface ApiGatewayStandInOptions {
  integration: LambdaFunctionStandIn;
  authorizer: GatewayAuthorizer;
  /** The HTTP API's CORS configuration; without it, as without one in the module, no CORS at all. */
  cors?: ApiCorsConfiguration;
  /** API Gateway's integration timeout (30 s, its maximum). */
  timeoutMs?: number;
}

export interface ApiGatewayStandIn {
  url: string;
  /** Requests answered so far, by how: preflights, authorizer invocations, integration invocations. */
  counts: { preflights: number; authorizerCalls: number; integrationCalls: number };
  close(): Promise<void>;
}

const ROUTE_MATCHERS = ROUTES.map((route) => ({
  method: route.method as string,
  key: `${route.method} ${route.path}`,
  pattern: new RegExp(`^${route.path.replace(/\{[^/}]+\}/g, "[^/]+")}$`),
}));

export async function startApiGatewayStandIn(
  options: ApiGatewayStandInOptions,
): Promise<ApiGatewayStandIn> {
  const counts = { preflights: 0, authorizerCalls: 0, integrationCalls: 0 };
  const timeoutMs = options.timeoutMs ?? 30_000;
  const server: Server = createServer((request, response) => {
    void (async () => {
      const origin = request.headers.origin;
      const cors = options.cors;
      if (
        cors &&
        request.method === "OPTIONS" &&
        request.headers["access-control-request-method"]
      ) {
        counts.preflights += 1;
        response.writeHead(204, preflightHeaders(cors, request));
        response.end();
        return;
      }
      const allowedOrigin =
        cors && origin && cors.allow_origins.includes(origin)
          ? { "access-control-allow-origin": origin, vary: "origin" }
          : {};
      const send = (status: number, headers: Record<string, string>, body?: Buffer | string) => {
        // API Gateway answers CORS itself: an integration's own CORS headers never reach the browser.
        const kept = Object.fromEntries(
          Object.entries(headers).filter(([name]) => !/^access-control-/i.test(name)),
        );
        response.writeHead(status, { ...kept, ...allowedOrigin });
        response.end(body);
      };
      const url = new URL(request.url ?? "/", "http://localhost");
      const route = ROUTE_MATCHERS.find(
        (candidate) => candidate.method === request.method && candidate.pattern.test(url.pathname),
      );
      if (!route) return send(404, JSON_TYPE, JSON.stringify({ message: "Not Found" }));
      const body = await readBody(request);
      const event = httpEvent(request, url, route.key, body);
      const context = event.requestContext as Record<string, unknown>;
      if (options.authorizer.kind === "jwt") {
        const claims = await options.authorizer.verify(request.headers.authorization);
        if (!claims) return send(401, JSON_TYPE, JSON.stringify({ message: "Unauthorized" }));
        context.authorizer = { jwt: { claims, scopes: null } };
      } else {
        counts.authorizerCalls += 1;
        const verdict = await options.authorizer.fn.invoke(authorizerEvent(event, route.key));
        if (verdict.kind !== "response") {
          return send(500, JSON_TYPE, JSON.stringify({ message: "Internal Server Error" }));
        }
        const answer = verdict.body as { isAuthorized?: boolean; context?: Record<string, string> };
        if (!answer.isAuthorized) {
          return send(403, JSON_TYPE, JSON.stringify({ message: "Forbidden" }));
        }
        context.authorizer = { lambda: answer.context ?? {} };
      }
      counts.integrationCalls += 1;
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<"limit">((resolve) => {
        timer = setTimeout(() => resolve("limit"), timeoutMs);
      });
      const outcome = await Promise.race([options.integration.invoke(event), limit]);
      clearTimeout(timer);
      if (outcome === "limit" || outcome.kind !== "response") {
        const status = outcome === "limit" || outcome.kind === "timeout" ? 504 : 500;
        const message = status === 504 ? "Service Unavailable" : "Internal Server Error";
        return send(status, JSON_TYPE, JSON.stringify({ message }));
      }
      const result = outcome.body as {
        statusCode: number;
        headers?: Record<string, string>;
        body?: string;
        isBase64Encoded?: boolean;
      };
      send(
        result.statusCode,
        result.headers ?? {},
        result.body === undefined
          ? undefined
          : Buffer.from(result.body, result.isBase64Encoded ? "base64" : "utf8"),
      );
    })().catch((error: unknown) => failed(response, error));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const JSON_TYPE = { "content-type": "application/json" };

function failed(response: ServerResponse, error: unknown): void {
  if (!response.headersSent) response.writeHead(500).end(String(error));
}

/**
 * API Gateway's answer to a preflight: the allowed methods, headers and max age when the origin, the method and
 * every requested header are allowed; otherwise no CORS header at all, which the browser reads as a refusal.
 */
function preflightHeaders(
  cors: ApiCorsConfiguration,
  request: IncomingMessage,
): Record<string, string> {
  const origin = request.headers.origin ?? "";
  const method = String(request.headers["access-control-request-method"]).toUpperCase();
  const requested = String(request.headers["access-control-request-headers"] ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name.length > 0);
  const allowed =
    cors.allow_origins.includes(origin) &&
    cors.allow_methods.includes(method) &&
    requested.every((name) => cors.allow_headers.includes(name));
  if (!allowed) return {};
  return {
    "access-control-allow-origin": origin,
    "access-control-allow-methods": cors.allow_methods.join(","),
    "access-control-allow-headers": cors.allow_headers.join(","),
    "access-control-max-age": String(cors.max_age),
    vary: "origin",
  };
}

/** A payload 2.0 event as API Gateway's HTTP API hands it to the function (the authorizer's part added later). */
export function httpEvent(
  request: IncomingMessage,
  url: URL,
  routeKey: string,
  body: string,
): Record<string, unknown> {
  const query: Record<string, string> = {};
  url.searchParams.forEach((value, name) => {
    query[name] = query[name] === undefined ? value : `${query[name]},${value}`;
  });
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(",") : value;
  }
  const now = Date.now();
  const method = request.method ?? "GET";
  return {
    version: "2.0",
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    ...(body.length > 0 ? { body } : {}),
    isBase64Encoded: false,
    requestContext: {
      accountId: "123456789012",
      apiId: "local",
      domainName: "local.execute-api.us-east-1.amazonaws.com",
      domainPrefix: "local",
      http: {
        method,
        path: url.pathname,
        protocol: "HTTP/1.1",
        sourceIp: "127.0.0.1",
        userAgent: headers["user-agent"] ?? "",
      },
      requestId: randomUUID(),
      routeKey,
      stage: "$default",
      time: new Date(now).toUTCString(),
      timeEpoch: now,
    },
  };
}

/** What API Gateway sends a Lambda REQUEST authorizer (payload 2.0) for a request. */
function authorizerEvent(
  event: Record<string, unknown>,
  routeKey: string,
): Record<string, unknown> {
  const [method, path] = routeKey.split(" ");
  return {
    version: "2.0",
    type: "REQUEST",
    routeArn: `arn:aws:execute-api:us-east-1:123456789012:local/$default/${method}${path}`,
    identitySource: [],
    routeKey,
    rawPath: event.rawPath,
    rawQueryString: event.rawQueryString,
    headers: event.headers,
    ...(event.queryStringParameters ? { queryStringParameters: event.queryStringParameters } : {}),
    requestContext: event.requestContext,
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}
