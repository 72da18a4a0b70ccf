import { readFile } from "node:fs/promises";
import {
  createServer,
  request as forward,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, normalize, sep } from "node:path";

export interface SameOriginServerOptions {
  /** The built page (Vite's outDir). */
  staticDir: string;
  /** Where the page is served, with slashes on both sides ("/app/"): the build's `base`. */
  basePath: string;
  /** The API every other path is forwarded to (the dev server). */
  apiUrl: string;
}

export interface SameOriginServer {
  url: string;
  close(): Promise<void>;
}

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".json": "application/json",
};

/** Headers that describe one connection, not the message: each hop sets its own. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
]);

/**
 * The page and the API on one origin, as a CDN in front of both would put them, so the browser makes no CORS
 * request: GETs under `basePath` are the built files, every other request goes to the API. A response is
 * passed on chunk by chunk as it arrives, so a run's Server-Sent Events reach the page while the run goes on,
 * and a browser that goes away closes the API request too (the run's cancel on disconnect).
 */
export async function startSameOriginServer(
  options: SameOriginServerOptions,
): Promise<SameOriginServer> {
  const api = new URL(options.apiUrl);
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? "/", "http://page").pathname;
    if (
      path.startsWith(options.basePath) &&
      (request.method === "GET" || request.method === "HEAD")
    ) {
      void serveFile(options, path, response);
      return;
    }
    proxy(api, request, response);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

async function serveFile(
  options: SameOriginServerOptions,
  path: string,
  response: ServerResponse,
): Promise<void> {
  const relative = decodeURIComponent(path.slice(options.basePath.length)) || "index.html";
  const file = normalize(join(options.staticDir, relative));
  if (!file.startsWith(options.staticDir + sep)) {
    response.writeHead(404).end();
    return;
  }
  try {
    const body = await readFile(file);
    response.writeHead(200, {
      "content-type": CONTENT_TYPES[extname(file)] ?? "application/octet-stream",
      "cache-control": "no-store",
    });
    response.end(body);
  } catch {
    response.writeHead(404).end();
  }
}

function proxy(api: URL, request: IncomingMessage, response: ServerResponse): void {
  const upstream = forward(
    {
      protocol: api.protocol,
      hostname: api.hostname,
      port: api.port,
      method: request.method,
      path: request.url,
      headers: { ...withoutHopByHop(request.headers), host: api.host },
      // One connection per request: nothing is left open when the test stops the servers.
      agent: false,
    },
    (answer) => {
      response.writeHead(answer.statusCode ?? 502, withoutHopByHop(answer.headers));
      response.flushHeaders();
      answer.pipe(response);
    },
  );
  upstream.on("error", () => {
    if (response.headersSent) response.destroy();
    else response.writeHead(502).end();
  });
  response.on("close", () => {
    if (!response.writableFinished) upstream.destroy();
  });
  request.pipe(upstream);
}

function withoutHopByHop(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())),
  );
}
