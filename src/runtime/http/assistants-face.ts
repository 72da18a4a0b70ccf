import type { z } from "zod";
import type {
  AssistantChanges,
  AssistantFilter,
  AssistantRecord,
  AssistantVersion,
} from "../../shared/assistants";
import { GraphDrawingUnavailableError, InvalidRequestError } from "../../shared/errors";
import { graphSchemas, type GraphSchemas, type IntrospectableGraph } from "../graphs/graph-schemas";
import type { AssistantCreateInput } from "./assistant-directory";
import { json } from "./http";
import type { RouteContext, RouteHandler } from "./route-context";
import {
  assistantCountSchema,
  assistantCreateSchema,
  assistantDeleteQuery,
  assistantGraphQuery,
  assistantLatestSchema,
  assistantPatchSchema,
  assistantSearchSchema,
  assistantSubgraphsQuery,
  assistantVersionsSchema,
} from "./schemas/assistant-schemas";
import { parseRequest } from "./schemas/request-schema";
import { SCAN_LIMIT } from "./thread-search";

/**
 * Assistants on the LangGraph Server face (`client.assistants.*` of `@langchain/langgraph-sdk`): CRUD, search,
 * count, versions, latest, and the graph's drawing, schemas and subgraphs. Who the assistants are (system and
 * stored, by assistant or graph id) is the AssistantDirectory's; this file reads requests (with the schemas of
 * schemas/assistant-schemas.ts) and writes JSON, a graph's schemas from graphs/graph-schemas.ts.
 */

export const createAssistant: RouteHandler = async (context) => {
  const body = parseRequest(assistantCreateSchema, context.body);
  const input: AssistantCreateInput = {
    graphId: body.graph_id,
    // As on LangGraph Server: "Untitled" when no name is given, the graph id for an empty one.
    name: body.name === undefined ? "Untitled" : body.name || body.graph_id,
    description: body.description ?? null,
    config: body.config ?? {},
    context: body.context ?? {},
    metadata: body.metadata ?? {},
    ifExists: body.if_exists ?? "raise",
    ...(body.assistant_id !== undefined ? { assistantId: body.assistant_id } : {}),
  };
  const assistant = await context.assistants.create(context.tenantId, input);
  context.log.assistant = assistant.assistantId;
  return json(200, assistantJson(assistant));
};

export const getAssistant: RouteHandler = async (context) => {
  const assistant = await context.assistants.get(context.tenantId, assistantParam(context));
  context.log.assistant = assistant.assistantId;
  return json(200, assistantJson(assistant));
};

export const patchAssistant: RouteHandler = async (context) => {
  const body = parseRequest(assistantPatchSchema, context.body);
  const changes: AssistantChanges = {};
  if (body.graph_id !== undefined) changes.graphId = body.graph_id;
  if (body.name !== undefined) changes.name = body.name;
  if (body.description !== undefined) changes.description = body.description;
  if (body.config !== undefined) changes.config = body.config;
  if (body.context !== undefined) changes.context = body.context;
  if (body.metadata !== undefined) changes.metadata = body.metadata;
  const assistant = await context.assistants.patch(
    context.tenantId,
    assistantParam(context),
    changes,
  );
  context.log.assistant = assistant.assistantId;
  return json(200, assistantJson(assistant));
};

export const deleteAssistant: RouteHandler = async (context) => {
  const deleteThreads = parseRequest(assistantDeleteQuery, context.query).delete_threads ?? false;
  let idOrGraphId = assistantParam(context);
  if (deleteThreads) {
    // The threads its runs named, first: a thread busy with a run keeps the assistant (409), so a retry
    // deletes what is left. Finding them reads the tenant's thread records (at most SCAN_LIMIT).
    const assistant = await context.assistants.get(context.tenantId, idOrGraphId);
    idOrGraphId = assistant.assistantId;
    await deleteThreadsOf(context, assistant.assistantId);
  }
  const deleted = await context.assistants.delete(context.tenantId, idOrGraphId);
  context.log.assistant = deleted;
  return json(200, [deleted]);
};

async function deleteThreadsOf(context: RouteContext, assistantId: string): Promise<void> {
  const store = context.engine.store("Deleting an assistant's threads");
  const scan = store.scan({ tenantId: context.tenantId, order: "desc" });
  const doomed: string[] = [];
  let read = 0;
  for await (const record of scan.records) {
    if (++read > SCAN_LIMIT) {
      // Refused before anything is deleted: deleting some of its threads and then the assistant would leave
      // the rest behind unnamed.
      throw new InvalidRequestError(
        "delete_threads",
        `the tenant has more than ${SCAN_LIMIT} threads to look through; delete the assistant's threads first, then the assistant`,
      );
    }
    if (record.metadata.assistant_id === assistantId) doomed.push(record.threadId);
  }
  for (const threadId of doomed) {
    await context.engine.deleteThread(context.tenantId, threadId, context.remainingMs);
    await context.runs?.forgetThread(context.tenantId, threadId);
  }
}

export const searchAssistants: RouteHandler = async (context) => {
  const {
    limit = 10,
    offset = 0,
    sort_by: sortBy = "created_at",
    sort_order: sortOrder = "desc",
    select,
    ...filter
  } = parseRequest(assistantSearchSchema, context.body);
  const page = await context.assistants.search(context.tenantId, {
    ...filterOf(filter),
    limit,
    offset,
    sortBy,
    sortOrder,
  });
  const headers: Record<string, string> = { "x-pagination-total": String(page.total) };
  if (offset + limit < page.total) headers["x-pagination-next"] = String(offset + limit);
  return json(
    200,
    page.assistants.map((assistant) => selected(assistantJson(assistant), select)),
    headers,
  );
};

export const countAssistants: RouteHandler = async (context) => {
  const filter = filterOf(parseRequest(assistantCountSchema, context.body));
  return json(200, await context.assistants.count(context.tenantId, filter));
};

/** The filter of a search or count, without the fields not sent. */
function filterOf(body: z.output<typeof assistantCountSchema>): AssistantFilter {
  return {
    ...(body.graph_id !== undefined ? { graphId: body.graph_id } : {}),
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
  };
}

export const listAssistantVersions: RouteHandler = async (context) => {
  const { limit = 10, offset = 0, metadata } = parseRequest(assistantVersionsSchema, context.body);
  const versions = await context.assistants.listVersions(
    context.tenantId,
    assistantParam(context),
    {
      limit,
      offset,
      ...(metadata !== undefined ? { metadata } : {}),
    },
  );
  return json(200, versions.map(versionJson));
};

export const setLatestAssistantVersion: RouteHandler = async (context) => {
  const { version } = parseRequest(assistantLatestSchema, context.body);
  const assistant = await context.assistants.setLatest(
    context.tenantId,
    assistantParam(context),
    version,
  );
  context.log.assistant = assistant.assistantId;
  return json(200, assistantJson(assistant));
};

export const getAssistantGraph: RouteHandler = async (context) => {
  const { xray } = parseRequest(assistantGraphQuery, context.query);
  const { assistant, graph } = await assistantGraph(context);
  if (typeof graph.getGraphAsync !== "function") {
    throw new GraphDrawingUnavailableError(assistant.graphId);
  }
  const drawable = await graph.getGraphAsync({
    ...graphConfig(assistant),
    ...(xray !== undefined ? { xray } : {}),
  });
  return json(200, drawable.toJSON());
};

export const getAssistantSchemas: RouteHandler = async (context) => {
  const { assistant, graph } = await assistantGraph(context);
  const fromSource = await context.registry.schemasFromSource(assistant.graphId);
  const schemas = graphSchemas(graph, fromSource?.graph);
  // A schema nothing tells is left out, as LangGraph Server leaves it ("missing if unable to generate").
  return json(200, {
    graph_id: assistant.graphId,
    input_schema: schemas.input,
    output_schema: schemas.output,
    state_schema: schemas.state,
    config_schema: schemas.config,
    // A compiled JS graph has one schema for its config and its context, as on LangGraph Server.
    context_schema: schemas.config,
  });
};

export const getAssistantSubgraphs: RouteHandler = async (context) => {
  const recurse = parseRequest(assistantSubgraphsQuery, context.query).recurse ?? false;
  const namespace = context.params.namespace;
  const { assistant, graph } = await assistantGraph(context);
  const fromSource = (await context.registry.schemasFromSource(assistant.graphId))?.subgraphs ?? {};
  const subgraphs: Record<string, GraphSchemas> = {};
  if (typeof graph.getSubgraphsAsync === "function") {
    for await (const [name, subgraph] of graph.getSubgraphsAsync(namespace, recurse)) {
      // A subgraph the source reading did not find has unknown schemas (LangGraph Server gives it the root
      // graph's, which describe another graph).
      subgraphs[name] = graphSchemas(
        subgraph,
        Object.hasOwn(fromSource, name) ? fromSource[name] : {},
      );
    }
  }
  return json(200, subgraphs);
};

// ---------------------------------------------------------------- the compiled graph

function assistantParam(context: RouteContext): string {
  return context.params.assistant_id ?? "";
}

async function assistantGraph(
  context: RouteContext,
): Promise<{ assistant: AssistantRecord; graph: IntrospectableGraph }> {
  const assistant = await context.assistants.get(context.tenantId, assistantParam(context));
  context.log.assistant = assistant.assistantId;
  const graph = await context.engine.graph(assistant.graphId, context.tenantId);
  return { assistant, graph: graph as IntrospectableGraph };
}

/** The assistant's config as LangGraph's RunnableConfig (for drawing: its configurable values and tags). */
function graphConfig(assistant: AssistantRecord): Record<string, unknown> {
  const { configurable, tags, recursion_limit: recursionLimit } = assistant.config;
  return {
    ...(configurable !== undefined ? { configurable } : {}),
    ...(tags !== undefined ? { tags } : {}),
    ...(recursionLimit !== undefined ? { recursionLimit } : {}),
  };
}

// ---------------------------------------------------------------- JSON

function selected(
  assistant: Record<string, unknown>,
  select: readonly string[] | undefined,
): Record<string, unknown> {
  if (!select) return assistant;
  return Object.fromEntries(Object.entries(assistant).filter(([field]) => select.includes(field)));
}

/** An assistant as LangGraph Server writes it. */
export function assistantJson(assistant: AssistantRecord): Record<string, unknown> {
  return {
    assistant_id: assistant.assistantId,
    graph_id: assistant.graphId,
    name: assistant.name,
    description: assistant.description,
    config: assistant.config,
    context: assistant.context,
    metadata: assistant.metadata,
    version: assistant.version,
    created_at: new Date(assistant.createdAt).toISOString(),
    updated_at: new Date(assistant.updatedAt).toISOString(),
  };
}

function versionJson(version: AssistantVersion): Record<string, unknown> {
  return {
    assistant_id: version.assistantId,
    version: version.version,
    graph_id: version.graphId,
    name: version.name,
    description: version.description,
    config: version.config,
    context: version.context,
    metadata: version.metadata,
    created_at: new Date(version.createdAt).toISOString(),
  };
}

export const ASSISTANT_HANDLERS: Readonly<Record<string, RouteHandler>> = {
  "POST /assistants": createAssistant,
  "POST /assistants/search": searchAssistants,
  "POST /assistants/count": countAssistants,
  "GET /assistants/{assistant_id}": getAssistant,
  "PATCH /assistants/{assistant_id}": patchAssistant,
  "DELETE /assistants/{assistant_id}": deleteAssistant,
  "POST /assistants/{assistant_id}/versions": listAssistantVersions,
  "POST /assistants/{assistant_id}/latest": setLatestAssistantVersion,
  "GET /assistants/{assistant_id}/graph": getAssistantGraph,
  "GET /assistants/{assistant_id}/schemas": getAssistantSchemas,
  "GET /assistants/{assistant_id}/subgraphs": getAssistantSubgraphs,
  "GET /assistants/{assistant_id}/subgraphs/{namespace}": getAssistantSubgraphs,
};
