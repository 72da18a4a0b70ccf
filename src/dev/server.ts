import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { ApiHandler } from "../runtime/handler";
import type { HttpEvent } from "../runtime/http";
import { verifyBearer, type DevKeys } from "./auth";

export interface DevServerOptions {
  handler: ApiHandler;
  keys: DevKeys;
  /** Default 3000; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1: the dev server is never exposed beyond this machine. */
  host?: string;
  /** Lambda timeout each request gets (default 30 s, API Gateway's integration limit). */
  timeoutMs?: number;
  /** Requests larger than this are cut off before reaching the handler (default 1 MiB). */
  maxRequestBytes?: number;
}

export interface RunningDevServer {
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

/**
 * Serves the Lambda handler over plain HTTP on this machine: each request becomes an API Gateway HTTP API
 * (payload 2.0) event with the verified JWT claims, exactly what the handler gets behind the real authorizer.
 */
export async function startDevServer(options: DevServerOptions): Promise<RunningDevServer> {
  const host = options.host ?? "127.0.0.1";
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxRequestBytes = options.maxRequestBytes ?? 1024 * 1024;
  const server = createServer((request, response) => {
    void (async () => {
      const send = (
        status: number,
        body: string,
        headers: Record<string, string> = { "content-type": "application/json" },
      ) => {
        response.writeHead(status, headers);
        response.end(body);
      };
      try {
        // The token first, as API Gateway's authorizer does: an unauthenticated caller's body is never read.
        const claims = await verifyBearer(options.keys, header(request, "authorization"));
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
        const deadline = Date.now() + timeoutMs;
        const result = await options.handler(toEvent(request, body, claims), {
          awsRequestId: randomUUID(),
          getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
        });
        const payload =
          result.body === undefined
            ? undefined
            : result.isBase64Encoded
              ? Buffer.from(result.body, "base64")
              : result.body;
        response.writeHead(result.statusCode, result.headers);
        response.end(payload);
      } catch (error) {
        // A client that went away mid-request has nobody to answer.
        if (request.destroyed || response.writableEnded) return;
        send(500, JSON.stringify({ message: "Internal Server Error" }));
        console.error("dev server error:", (error as Error)?.name);
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 3000, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
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
