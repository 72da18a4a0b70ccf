import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { MEMORY_TABLE_VERSION } from "../../shared/version";
import type { HttpResult } from "./http";
import { callTool, listTools } from "./mcp-tools";
import type { RouteContext } from "./route-context";
import { errorStatus } from "./routes";

/**
 * One MCP request answered by the official SDK: a server and a stateless transport made for it (no session id,
 * nothing kept between requests: a Lambda container may never see the next one), the answer as JSON within the
 * request. Loaded by mcp-face.ts on the first `/mcp` request only: the SDK's schemas take long to load, and no other
 * route needs them.
 */

/** Request headers the MCP transport reads; the rest (the credential too) never reach it. */
const TRANSPORT_HEADERS = [
  "accept",
  "content-type",
  "mcp-protocol-version",
  "mcp-session-id",
  "last-event-id",
] as const;

export async function answerMcp(context: RouteContext): Promise<HttpResult> {
  const server = new McpServer(
    { name: "memory-table", version: MEMORY_TABLE_VERSION },
    { capabilities: { tools: {} } },
  );
  // The tools change with the tenant's assistants: handled here, not registered one by one.
  server.server.setRequestHandler(ListToolsRequestSchema, (request) =>
    guarded(context, () => listTools(context, request.params?.cursor)),
  );
  server.server.setRequestHandler(CallToolRequestSchema, (request) =>
    guarded(context, () => callTool(context, request.params.name, request.params.arguments)),
  );
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    const response = await transport.handleRequest(transportRequest(context), {
      parsedBody: context.body,
    });
    const body = await response.text();
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    return { statusCode: response.status, headers, ...(body === "" ? {} : { body }) };
  } finally {
    await server.close();
  }
}

/**
 * Runs a request's handler with the handler's rule for errors: a known error keeps its message (as a JSON-RPC
 * error; an MCP error as it is), an unexpected one is logged with an error id and answers with that id only (its
 * message can carry state).
 */
async function guarded<T>(context: RouteContext, handle: () => Promise<T>): Promise<T> {
  try {
    return await handle();
  } catch (error) {
    if (error instanceof McpError) throw error;
    const status = errorStatus(error, "server");
    if (status !== undefined) {
      const code = status < 500 ? ErrorCode.InvalidRequest : ErrorCode.InternalError;
      throw new McpError(code, (error as Error).message, { status });
    }
    const errorId = randomUUID();
    context.logger.error(
      { requestId: context.requestId, errorId, err: { name: (error as Error)?.name } },
      "unhandled error",
    );
    throw new McpError(ErrorCode.InternalError, "Internal error", { error_id: errorId });
  }
}

/** The request as the transport reads it: its method and MCP headers (the body is already parsed). */
function transportRequest(context: RouteContext): Request {
  const headers = new Headers();
  for (const name of TRANSPORT_HEADERS) {
    const value = context.headers[name];
    if (value !== undefined) headers.set(name, value);
  }
  return new Request("http://localhost/mcp", { method: "POST", headers });
}
