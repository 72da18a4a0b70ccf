import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { ApiHandler } from "../runtime/handler";
import { InvalidConfigurationError } from "../shared/errors";
import type { HttpEvent, HttpResult } from "../runtime/http/http";
import { createRequestVerifier, type DevKeys } from "./auth";
import { createCorsPolicy, isPreflight } from "./cors";

export interface DevServerOptions {
  handler: ApiHandler;
  keys: DevKeys;
  /** Default 3000; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1: the dev server is never exposed beyond this machine. */
  host?: string;
  /**
   * Longest wait for a response's start (default 30 s, API Gateway's integration limit; a streamed response's
   * events then go on for as long as the run streams).
   */
  timeoutMs?: number;
  /** Requests larger than this are cut off before reaching the handler (default 1 MiB). */
  maxRequestBytes?: number;
  /**
   * Browser origins allowed by CORS besides loopback ones (any port of localhost, 127.0.0.1 and [::1], always
   * allowed), like `https://ui.example.com`; the CLI reads them from CORS_ALLOW_ORIGINS.
   */
  corsOrigins?: readonly string[];
}

export interface RunningDevServer {
  url: string;
  port: number;
  server: Server;
  /** Stops at once: every connection is closed, requests under way included. */
  close(): Promise<void>;
  /**
   * Stops accepting connections and lets the requests under way finish (at most `graceMs`, then they are cut
   * off); idle keep-alive connections close at once.
   */
  shutdown(graceMs?: number): Promise<void>;
}

/**
 * Serves the Lambda handler over plain HTTP on this machine: each request becomes an API Gateway HTTP API
 * (payload 2.0) event with the verified JWT claims, exactly what the handler gets behind the real authorizer.
 * The dev token is accepted as `Authorization: Bearer` or as `X-Api-Key`, and CORS lets pages on loopback origins
 * (and `corsOrigins`) call it, as `langgraph dev` serves local UIs (see ./cors.ts).
 */
export async function startDevServer(options: DevServerOptions): Promise<RunningDevServer> {
  const host = options.host ?? "127.0.0.1";
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxRequestBytes = options.maxRequestBytes ?? 1024 * 1024;
  const verifyRequest = createRequestVerifier(options.keys);
  const cors = createCorsPolicy(options.corsOrigins);
  let underway = 0;
  let drained: (() => void) | undefined;
  const server = createServer((request, response) => {
    underway += 1;
    response.once("close", () => {
      underway -= 1;
      if (underway === 0) drained?.();
    });
    void (async () => {
      if (isPreflight(request)) {
        // Before authentication: a browser sends no credential with a preflight, and answers its page's
        // request only after this one allowed it.
        response.writeHead(204, cors.preflight(request));
        response.end();
        return;
      }
      // Every answer names an allowed origin, 401s and streams included, so the page can read what happened.
      const corsHeaders = cors.response(request);
      const withCors = (headers: Record<string, string> = {}) => {
        const vary = [headers.vary, corsHeaders.vary].filter(Boolean).join(", ");
        return { ...headers, ...corsHeaders, vary };
      };
      const send = (
        status: number,
        body: string,
        headers: Record<string, string> = { "content-type": "application/json" },
      ) => {
        response.writeHead(status, withCors(headers));
        response.end(body);
      };
      try {
        // The token first, as API Gateway's authorizer does: an unauthenticated caller's body is never read.
        const claims = await verifyRequest(
          header(request, "authorization"),
          header(request, "x-api-key"),
        );
        if (!claims) {
          // API Gateway's JWT authorizer answer: the handler never runs.
          send(401, JSON.stringify({ message: "Unauthorized" }), {
            "content-type": "application/json",
            "www-authenticate": 'Bearer error="invalid_token"',
            connection: "close",
          });
          response.once("finish", () => request.socket.destroySoon());
          return;
        }
        const body = await readBody(request, maxRequestBytes);
        if (body === undefined) {
          // The rest of the body is not read: close the connection, so nothing behind it is served.
          send(413, JSON.stringify({ message: "Request Entity Too Large" }), {
            "content-type": "application/json",
            connection: "close",
          });
          response.once("finish", () => request.socket.destroySoon());
          return;
        }
        // Served as a Lambda function URL serves it (the streaming transport): a stream route's events are
        // written as they come, for up to 15 minutes; every other route has API Gateway's 30 s.
        const streamed = options.handler.open(toEvent(request, body, claims), {
          awsRequestId: randomUUID(),
        });
        const result = await withTimeout(streamed, timeoutMs);
        if (result.stream) {
          response.once("close", () => {
            if (!response.writableEnded) result.clientGone?.();
          });
          response.writeHead(result.statusCode, withCors(result.headers));
          response.flushHeaders();
          for await (const chunk of result.stream) {
            // The client went away: stopping the iteration lets the stream clean up (a cancel on disconnect).
            if (response.destroyed) break;
            response.write(chunk);
          }
          response.end();
          return;
        }
        const payload =
          result.body === undefined
            ? undefined
            : result.isBase64Encoded
              ? Buffer.from(result.body, "base64")
              : result.body;
        response.writeHead(result.statusCode, withCors(result.headers));
        response.end(payload);
      } catch (error) {
        // A client that went away mid-request has nobody to answer.
        if (request.destroyed || response.writableEnded) return;
        send(500, JSON.stringify({ message: "Internal Server Error" }));
        console.error("dev server error:", (error as Error)?.name);
      }
    })();
  });
  const requestedPort = options.port ?? 3000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error) => reject(listenError(error, host, requestedPort)));
    server.listen(requestedPort, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const closed = () =>
    new Promise<void>((resolve, reject) => {
      server.close((error) => (error ? reject(error) : resolve()));
    });
  return {
    url: `http://${host}:${port}`,
    port,
    server,
    close: () => {
      const done = closed();
      server.closeAllConnections();
      return done;
    },
    async shutdown(graceMs = 5_000) {
      const done = closed();
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), graceMs);
      // Once the last request is answered its keep-alive connection is idle: close it rather than wait.
      drained = () => server.closeAllConnections();
      if (underway === 0) drained();
      try {
        await done;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** What stops a listen, said so that the developer knows what to change. */
function listenError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  if (error.code === "EADDRINUSE") {
    return new InvalidConfigurationError(
      "PORT",
      `expected a free port on ${host}, got ${port}, where another process is listening (another dev server?)`,
      { cause: error },
    );
  }
  if (error.code === "EACCES") {
    return new InvalidConfigurationError(
      "PORT",
      `expected a port this user may listen on, got ${port} (ports below 1024 need privileges)`,
      { cause: error },
    );
  }
  return error;
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The whole body, or undefined once it passes `maxBytes` (what was read is discarded, the rest never read). */
async function readBody(request: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  const declared = Number(request.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).byteLength;
    if (size > maxBytes) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function toEvent(
  request: IncomingMessage,
  body: Buffer,
  claims: Record<string, unknown>,
): HttpEvent {
  const url = new URL(request.url ?? "/", "http://localhost");
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(",") : value;
  }
  const query: Record<string, string> = {};
  url.searchParams.forEach((value, name) => {
    query[name] = query[name] === undefined ? value : `${query[name]},${value}`;
  });
  const method = request.method ?? "GET";
  const now = Date.now();
  // Claims reach the handler with their JSON types: the handler accepts only a string tenant claim, so a
  // token whose tenant claim is `null` or `42` never becomes tenant "null" or "42".
  const passedClaims = claims as Record<string, string | number | boolean | string[]>;
  return {
    version: "2.0",
    routeKey: "$default",
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    queryStringParameters: Object.keys(query).length > 0 ? query : undefined,
    body: body.byteLength > 0 ? body.toString("utf8") : undefined,
    isBase64Encoded: false,
    requestContext: {
      accountId: "000000000000",
      apiId: "dev",
      domainName: "localhost",
      domainPrefix: "localhost",
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp: request.socket.remoteAddress ?? "127.0.0.1",
        userAgent: headers["user-agent"] ?? "",
      },
      requestId: randomUUID(),
      routeKey: "$default",
      stage: "$default",
      time: new Date(now).toISOString(),
      timeEpoch: now,
      authorizer: {
        principalId: "",
        integrationLatency: 0,
        jwt: { claims: passedClaims, scopes: [] },
      },
    },
  } as HttpEvent;
}

/** The handler's answer, or a 504 once `ms` pass without one (as API Gateway answers a slow integration). */
function withTimeout(answer: Promise<HttpResult>, ms: number): Promise<HttpResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<HttpResult>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({
          statusCode: 504,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ message: "Service Unavailable" }),
        }),
      ms,
    );
  });
  return Promise.race([answer, timeout]).finally(() => clearTimeout(timer));
}
