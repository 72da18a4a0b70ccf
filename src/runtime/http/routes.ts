import {
  AssistantExistsError,
  AuthRefusedError,
  AssistantMismatchError,
  AssistantNotFoundError,
  AssistantTooLargeError,
  AssistantVersionNotFoundError,
  CheckpointNotFoundError,
  CheckpointCapacityError,
  CheckpointTooLargeError,
  CheckpointerRequiredError,
  CronNotFoundError,
  CronQuotaExceededError,
  GraphDrawingUnavailableError,
  InvalidIdentifierError,
  InvalidRequestError,
  InvalidStoreOperationError,
  InvalidTenantClaimError,
  MissingTenantClaimError,
  MultitaskRejectedError,
  NothingToResumeError,
  RunActiveError,
  RunBudgetExhaustedError,
  RunCancelledError,
  RunNotFinishedError,
  RunNotFoundError,
  StoreCapacityError,
  StoreSearchTooBroadError,
  StoreRequiredError,
  CronsDisabledError,
  StoreValueTooLargeError,
  SystemAssistantError,
  ThreadBusyError,
  ThreadExistsError,
  ThreadNotFoundError,
  ThreadPausedError,
} from "../../shared/errors";

/**
 * Every HTTP route the handler serves, and how each known error answers on each face. The Terraform module
 * creates one API Gateway route per entry (each behind the JWT authorizer), so this list is the single source
 * of truth for both; it holds data only, so the module can read it without loading the runtime.
 */
export type ApiFace = "simple" | "server";

export interface RouteDefinition {
  method: "GET" | "POST" | "DELETE" | "PATCH" | "PUT";
  /** API Gateway route path, with `{param}` placeholders. */
  path: string;
  /** The simple face (the seed contract) or the LangGraph Server face (for `@langchain/langgraph-sdk`). */
  face: ApiFace;
  /** Answers with Server-Sent Events (streamed where the transport can). */
  streaming?: true;
  /** Takes a JSON array, not an object: the handler hands it over as `body.items`. */
  arrayBody?: true;
}

export const ROUTES: readonly RouteDefinition[] = [
  // The simple face (simple-face.ts).
  { method: "POST", path: "/invoke", face: "simple" },
  { method: "GET", path: "/threads/{thread_id}/status", face: "simple" },
  // Server information (meta-face.ts).
  { method: "GET", path: "/ok", face: "server" },
  { method: "GET", path: "/info", face: "server" },
  // Threads (threads-face.ts).
  { method: "POST", path: "/threads", face: "server" },
  { method: "POST", path: "/threads/search", face: "server" },
  { method: "POST", path: "/threads/count", face: "server" },
  { method: "GET", path: "/threads/{thread_id}", face: "server" },
  { method: "PATCH", path: "/threads/{thread_id}", face: "server" },
  { method: "DELETE", path: "/threads/{thread_id}", face: "server" },
  { method: "POST", path: "/threads/{thread_id}/copy", face: "server" },
  { method: "GET", path: "/threads/{thread_id}/state", face: "server" },
  { method: "POST", path: "/threads/{thread_id}/state", face: "server" },
  { method: "GET", path: "/threads/{thread_id}/state/{checkpoint_id}", face: "server" },
  { method: "POST", path: "/threads/{thread_id}/state/checkpoint", face: "server" },
  { method: "GET", path: "/threads/{thread_id}/history", face: "server" },
  { method: "POST", path: "/threads/{thread_id}/history", face: "server" },
  // The thread's stream (thread-stream-face.ts).
  { method: "GET", path: "/threads/{thread_id}/stream", face: "server", streaming: true },
  // Runs (runs-face.ts).
  { method: "POST", path: "/threads/{thread_id}/runs", face: "server" },
  { method: "GET", path: "/threads/{thread_id}/runs", face: "server" },
  { method: "POST", path: "/threads/{thread_id}/runs/wait", face: "server" },
  { method: "POST", path: "/threads/{thread_id}/runs/stream", face: "server", streaming: true },
  {
    method: "GET",
    path: "/threads/{thread_id}/runs/{run_id}/stream",
    face: "server",
    streaming: true,
  },
  { method: "GET", path: "/threads/{thread_id}/runs/{run_id}", face: "server" },
  { method: "DELETE", path: "/threads/{thread_id}/runs/{run_id}", face: "server" },
  { method: "GET", path: "/threads/{thread_id}/runs/{run_id}/join", face: "server" },
  { method: "POST", path: "/threads/{thread_id}/runs/{run_id}/cancel", face: "server" },
  { method: "POST", path: "/runs", face: "server" },
  { method: "POST", path: "/runs/wait", face: "server" },
  { method: "POST", path: "/runs/batch", face: "server", arrayBody: true },
  { method: "POST", path: "/runs/stream", face: "server", streaming: true },
  // Crons (crons-face.ts).
  { method: "POST", path: "/runs/crons", face: "server" },
  { method: "POST", path: "/threads/{thread_id}/runs/crons", face: "server" },
  { method: "POST", path: "/runs/crons/search", face: "server" },
  { method: "POST", path: "/runs/crons/count", face: "server" },
  { method: "PATCH", path: "/runs/crons/{cron_id}", face: "server" },
  { method: "DELETE", path: "/runs/crons/{cron_id}", face: "server" },
  // Assistants (assistants-face.ts).
  { method: "POST", path: "/assistants", face: "server" },
  { method: "POST", path: "/assistants/search", face: "server" },
  { method: "POST", path: "/assistants/count", face: "server" },
  { method: "GET", path: "/assistants/{assistant_id}", face: "server" },
  { method: "PATCH", path: "/assistants/{assistant_id}", face: "server" },
  { method: "DELETE", path: "/assistants/{assistant_id}", face: "server" },
  { method: "POST", path: "/assistants/{assistant_id}/versions", face: "server" },
  { method: "POST", path: "/assistants/{assistant_id}/latest", face: "server" },
  { method: "GET", path: "/assistants/{assistant_id}/graph", face: "server" },
  { method: "GET", path: "/assistants/{assistant_id}/schemas", face: "server" },
  { method: "GET", path: "/assistants/{assistant_id}/subgraphs", face: "server" },
  { method: "GET", path: "/assistants/{assistant_id}/subgraphs/{namespace}", face: "server" },
  // Store (store-face.ts).
  { method: "PUT", path: "/store/items", face: "server" },
  { method: "GET", path: "/store/items", face: "server" },
  { method: "DELETE", path: "/store/items", face: "server" },
  { method: "POST", path: "/store/items/search", face: "server" },
  { method: "POST", path: "/store/namespaces", face: "server" },
  // MCP, stateless Streamable HTTP (mcp-face.ts): POST only; GET and DELETE answer 405.
  { method: "POST", path: "/mcp", face: "server" },
  { method: "GET", path: "/mcp", face: "server" },
  { method: "DELETE", path: "/mcp", face: "server" },
];

// An error class, whatever its constructor's parameters.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type ErrorClass = abstract new (...args: any[]) => Error;

/**
 * The status each known error answers with, per face (the first matching class wins, so subclasses come
 * first): the one place a status is decided; route handlers throw these errors, never a status. The SDK face
 * answers invalid input with 422 as LangGraph Server does; the simple face with 400. Anything else is a 500 with
 * an error id and nothing of the error's message.
 */
export const ERROR_STATUSES: ReadonlyArray<readonly [ErrorClass, Record<ApiFace, number>]> = [
  // Who is asking: no tenant is 401; a tenant that cannot be anyone's is 403.
  [MissingTenantClaimError, { simple: 401, server: 401 }],
  [InvalidTenantClaimError, { simple: 403, server: 403 }],
  // The project's auth handlers refused: 403 unless they chose another status (errorResponse reads it).
  [AuthRefusedError, { simple: 403, server: 403 }],
  // What was asked for is not there.
  [ThreadNotFoundError, { simple: 404, server: 404 }],
  [CheckpointNotFoundError, { simple: 404, server: 404 }],
  [RunNotFoundError, { simple: 404, server: 404 }],
  [AssistantNotFoundError, { simple: 404, server: 404 }],
  [AssistantVersionNotFoundError, { simple: 404, server: 404 }],
  [GraphDrawingUnavailableError, { simple: 404, server: 404 }],
  [CronNotFoundError, { simple: 404, server: 404 }],
  // What was asked for conflicts with what is there now.
  [ThreadBusyError, { simple: 409, server: 409 }],
  [MultitaskRejectedError, { simple: 409, server: 409 }],
  [NothingToResumeError, { simple: 409, server: 409 }],
  [AssistantMismatchError, { simple: 409, server: 409 }],
  [ThreadPausedError, { simple: 409, server: 409 }],
  [ThreadExistsError, { simple: 409, server: 409 }],
  [RunCancelledError, { simple: 409, server: 409 }],
  [RunActiveError, { simple: 409, server: 409 }],
  [AssistantExistsError, { simple: 409, server: 409 }],
  [SystemAssistantError, { simple: 409, server: 409 }],
  // 409, not 429: the SDK re-sends a 429, and the quota does not lift by waiting (a cron must be deleted).
  [CronQuotaExceededError, { simple: 409, server: 409 }],
  // What the handler is configured without.
  [CheckpointerRequiredError, { simple: 400, server: 400 }],
  [StoreRequiredError, { simple: 400, server: 400 }],
  [CronsDisabledError, { simple: 400, server: 400 }],
  // 408, not 5xx: the SDK re-sends 5xx at once, and a too-short function timeout would fail the same way.
  [RunBudgetExhaustedError, { simple: 408, server: 408 }],
  // 408: the SDK does not re-send it; the client joins again (the run goes on meanwhile).
  [RunNotFinishedError, { simple: 408, server: 408 }],
  // The request's own fields.
  [InvalidRequestError, { simple: 400, server: 422 }],
  [InvalidIdentifierError, { simple: 400, server: 422 }],
  [CheckpointTooLargeError, { simple: 413, server: 413 }],
  [CheckpointCapacityError, { simple: 413, server: 413 }],
  [AssistantTooLargeError, { simple: 413, server: 413 }],
  // The long-term store. StoreEmbeddingError stays out: the embeddings model failed, not the caller's input, so
  // it answers as any unexpected error (500 with an error id; its name in the log line).
  [InvalidStoreOperationError, { simple: 400, server: 422 }],
  [StoreValueTooLargeError, { simple: 413, server: 413 }],
  [StoreSearchTooBroadError, { simple: 422, server: 422 }],
  // 507 Insufficient Storage: the container's in-memory store is full; the request itself was acceptable.
  [StoreCapacityError, { simple: 507, server: 507 }],
];

/** The status of a known error on a face, or undefined for an unexpected one. */
export function errorStatus(error: unknown, face: ApiFace): number | undefined {
  for (const [type, statuses] of ERROR_STATUSES) {
    if (error instanceof type) return statuses[face];
  }
  return undefined;
}
