import { methodNotAllowed } from "./http";
import type { RouteHandler } from "./route-context";

/**
 * `/mcp`: the Model Context Protocol over Streamable HTTP, stateless, as LangGraph Platform serves it. A POST is
 * answered by mcp-server.ts (the SDK's transport) with the tools of mcp-tools.ts; the route is authenticated as every
 * route is (the handler has the tenant before this runs).
 */

export const postMcp: RouteHandler = async (context) => loadMcpServer().answerMcp(context);

/**
 * GET (a server-sent stream of its own) and DELETE (ending a session) have nothing to serve on a stateless server:
 * 405, as the transport spec has such a server answer them (the SDK's client then goes on without the stream).
 */
function notAllowed(method: "GET" | "DELETE"): RouteHandler {
  return async () =>
    methodNotAllowed(
      method,
      "/mcp",
      ["POST"],
      "the MCP endpoint is stateless (no server-sent stream, no session to end); send JSON-RPC messages with POST",
    );
}

/**
 * Loaded on the first `/mcp` request: the MCP SDK builds its protocol's schemas when loaded (about 130 ms of a cold
 * start measured here), which no other route needs. In the image its code is still in the API and stream entries'
 * chunks (esbuild cannot split a `require`), read at start but run only here: 0.54 MB of their 5 MB budget.
 */
function loadMcpServer(): typeof import("./mcp-server") {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- on-demand loading, see above
  return require("./mcp-server");
}

export const MCP_HANDLERS: Readonly<Record<string, RouteHandler>> = {
  "POST /mcp": postMcp,
  "GET /mcp": notAllowed("GET"),
  "DELETE /mcp": notAllowed("DELETE"),
};
