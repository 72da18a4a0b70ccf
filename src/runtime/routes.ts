/**
 * Every HTTP route the handler serves. The Terraform module creates one API Gateway route per entry (each behind
 * the JWT authorizer), so this list is the single source of truth for both.
 */
export interface RouteDefinition {
  method: "GET" | "POST" | "DELETE";
  /** API Gateway route path, with `{param}` placeholders. */
  path: string;
}

export const ROUTES: readonly RouteDefinition[] = [
  // The simple face (the course's contract).
  { method: "POST", path: "/invoke" },
  { method: "GET", path: "/threads/{thread_id}/status" },
  // The LangGraph Server face, for @langchain/langgraph-sdk clients.
  { method: "POST", path: "/threads" },
  { method: "POST", path: "/threads/search" },
  { method: "GET", path: "/threads/{thread_id}" },
  { method: "DELETE", path: "/threads/{thread_id}" },
  { method: "GET", path: "/threads/{thread_id}/state" },
  { method: "POST", path: "/threads/{thread_id}/history" },
  { method: "POST", path: "/threads/{thread_id}/runs/wait" },
  { method: "GET", path: "/assistants/{assistant_id}" },
  { method: "POST", path: "/assistants/search" },
];
