import { describe, HttpError, json } from "./http";
import { integerField, type RouteHandler } from "./route-context";
import { MAX_SEARCH_LIMIT, MAX_SEARCH_OFFSET } from "./threads-face";

/** Assistants on the LangGraph Server face (`client.assistants.*` of `@langchain/langgraph-sdk`). */

const CREATED_AT = new Date().toISOString();

export const getAssistant: RouteHandler = async (context) => {
  const assistantId = context.params.assistant_id ?? "";
  if (!context.registry.has(assistantId)) {
    throw new HttpError(404, `Assistant not found: ${assistantId}`);
  }
  return json(200, assistantJson(assistantId));
};

export const searchAssistants: RouteHandler = async (context) => {
  const { body } = context;
  const limit = integerField(body, "limit", 10, 1, MAX_SEARCH_LIMIT);
  const offset = integerField(body, "offset", 0, 0, MAX_SEARCH_OFFSET);
  const graphId = body.graph_id;
  if (graphId !== undefined && graphId !== null && typeof graphId !== "string") {
    throw new HttpError(422, `Invalid graph_id: expected a string, got ${describe(graphId)}`);
  }
  const ids = context.registry.assistantIds.filter((id) => !graphId || id === graphId);
  return json(200, ids.slice(offset, offset + limit).map(assistantJson));
};

function assistantJson(assistantId: string): Record<string, unknown> {
  return {
    assistant_id: assistantId,
    graph_id: assistantId,
    name: assistantId,
    description: null,
    config: {},
    context: {},
    metadata: {},
    version: 1,
    created_at: CREATED_AT,
    updated_at: CREATED_AT,
  };
}

export const ASSISTANT_HANDLERS: Readonly<Record<string, RouteHandler>> = {
  "GET /assistants/{assistant_id}": getAssistant,
  "POST /assistants/search": searchAssistants,
};
