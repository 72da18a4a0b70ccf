import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { isInteropZodSchema } from "@langchain/core/utils/types";
import { getJsonSchemaFromSchema } from "@langchain/langgraph";
import {
  getConfigTypeSchema,
  getInputTypeSchema,
  getOutputTypeSchema,
  getUpdateTypeSchema,
} from "@langchain/langgraph/zod/schema";
import {
  ASSISTANT_SORT_FIELDS,
  type AssistantChanges,
  type AssistantFilter,
  type AssistantRecord,
  type AssistantVersion,
} from "../../shared/assistants";
import { isAssistantUuid, type AssistantCreateInput } from "./assistant-directory";
import { SCAN_LIMIT } from "./thread-search";
import { describe, describeValue, HttpError, json } from "./http";
import {
  integerField,
  objectField,
  optionalString,
  type RouteContext,
  type RouteHandler,
} from "./route-context";

/**
 * Assistants on the LangGraph Server face (`client.assistants.*` of `@langchain/langgraph-sdk`): CRUD, search,
 * count, versions, latest, and the graph's drawing, schemas and subgraphs. Who the assistants are (system and
 * stored, by assistant or graph id) is the AssistantDirectory's; this file reads requests and writes JSON.
 */

/** Largest page of a search or version list (LangGraph Server's). */
export const MAX_ASSISTANT_PAGE = 1000;
/** Deepest offset of a search or version list. */
export const MAX_ASSISTANT_OFFSET = 100_000;

/** Every field of an assistant's JSON: what `select` may name. */
const ASSISTANT_FIELDS = [
  "assistant_id",
  "graph_id",
  "name",
  "description",
  "config",
  "context",
  "metadata",
  "version",
  "created_at",
  "updated_at",
] as const;

export const createAssistant: RouteHandler = async (context) => {
  const { body } = context;
  const assistantId = optionalString(body, "assistant_id");
  if (assistantId !== undefined && !isAssistantUuid(assistantId)) {
    throw new HttpError(
      422,
      `Invalid assistant_id: expected a UUID, got ${describeValue(assistantId)}`,
    );
  }
  const graphId = optionalString(body, "graph_id");
  if (graphId === undefined) {
    throw new HttpError(422, `Invalid graph_id: expected a string, got ${describe(body.graph_id)}`);
  }
  const ifExists = body.if_exists ?? "raise";
  if (ifExists !== "raise" && ifExists !== "do_nothing") {
    throw new HttpError(
      422,
      `Invalid if_exists: expected "raise" or "do_nothing", got ${describeValue(ifExists)}`,
    );
  }
  const name = optionalString(body, "name");
  const input: AssistantCreateInput = {
    graphId,
    // As on LangGraph Server: "Untitled" when no name is given, the graph id for an empty one.
    name: name === undefined ? "Untitled" : name || graphId,
    description: optionalString(body, "description") ?? null,
    config: configField(body) ?? {},
    context: objectField(body, "context") ?? {},
    metadata: objectField(body, "metadata") ?? {},
    ifExists,
    ...(assistantId !== undefined ? { assistantId } : {}),
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
  const { body } = context;
  const changes: AssistantChanges = {};
  const graphId = optionalString(body, "graph_id");
  const name = optionalString(body, "name");
  const description = optionalString(body, "description");
  const config = configField(body);
  const assistantContext = objectField(body, "context");
  const metadata = objectField(body, "metadata");
  if (graphId !== undefined) changes.graphId = graphId;
  if (name !== undefined) changes.name = name;
  if (description !== undefined) changes.description = description;
  if (config !== undefined) changes.config = config;
  if (assistantContext !== undefined) changes.context = assistantContext;
  if (metadata !== undefined) changes.metadata = metadata;
  const assistant = await context.assistants.patch(
    context.tenantId,
    assistantParam(context),
    changes,
  );
  context.log.assistant = assistant.assistantId;
  return json(200, assistantJson(assistant));
};

export const deleteAssistant: RouteHandler = async (context) => {
  const deleteThreads = context.query.delete_threads;
  if (deleteThreads !== undefined && !["true", "false"].includes(deleteThreads)) {
    throw new HttpError(
      422,
      `Invalid delete_threads: expected true or false, got ${describeValue(deleteThreads)}`,
    );
  }
  let idOrGraphId = assistantParam(context);
  if (deleteThreads === "true") {
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
      throw new HttpError(
        422,
        `Invalid delete_threads: the tenant has more than ${SCAN_LIMIT} threads to look through; delete the assistant's threads first, then the assistant`,
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
  const { body } = context;
  const limit = integerField(body, "limit", 10, 1, MAX_ASSISTANT_PAGE);
  const offset = integerField(body, "offset", 0, 0, MAX_ASSISTANT_OFFSET);
  const filter = filterFields(body);
  const sortBy = enumField(body, "sort_by", ASSISTANT_SORT_FIELDS) ?? "created_at";
  const sortOrder = enumField(body, "sort_order", ["asc", "desc"] as const) ?? "desc";
  const select = selectField(body);
  const page = await context.assistants.search(context.tenantId, {
    ...filter,
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
  return json(200, await context.assistants.count(context.tenantId, filterFields(context.body)));
};

export const listAssistantVersions: RouteHandler = async (context) => {
  const { body } = context;
  const limit = integerField(body, "limit", 10, 1, MAX_ASSISTANT_PAGE);
  const offset = integerField(body, "offset", 0, 0, MAX_ASSISTANT_OFFSET);
  const metadata = objectField(body, "metadata");
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
  const version = context.body.version;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 1) {
    throw new HttpError(
      422,
      `Invalid version: expected a positive integer, got ${describeValue(version)}`,
    );
  }
  const assistant = await context.assistants.setLatest(
    context.tenantId,
    assistantParam(context),
    version,
  );
  context.log.assistant = assistant.assistantId;
  return json(200, assistantJson(assistant));
};

export const getAssistantGraph: RouteHandler = async (context) => {
  const xray = xrayQuery(context.query.xray);
  const { assistant, graph } = await assistantGraph(context);
  if (typeof graph.getGraphAsync !== "function") {
    throw new HttpError(404, `Graph drawing not available: graph ${assistant.graphId} has none`);
  }
  const drawable = await graph.getGraphAsync({
    ...graphConfig(assistant),
    ...(xray !== undefined ? { xray } : {}),
  });
  return json(200, drawable.toJSON());
};

export const getAssistantSchemas: RouteHandler = async (context) => {
  const { assistant, graph } = await assistantGraph(context);
  const schemas = graphSchemas(graph);
  return json(200, {
    graph_id: assistant.graphId,
    input_schema: schemas.input ?? null,
    output_schema: schemas.output ?? null,
    state_schema: schemas.state ?? null,
    config_schema: schemas.config ?? null,
    // A compiled JS graph has one schema for its config and its context, as on LangGraph Server.
    context_schema: schemas.config ?? null,
  });
};

export const getAssistantSubgraphs: RouteHandler = async (context) => {
  const recurse = booleanQuery("recurse", context.query.recurse) ?? false;
  const namespace = context.params.namespace;
  const { graph } = await assistantGraph(context);
  const subgraphs: Record<string, GraphSchemas> = {};
  if (typeof graph.getSubgraphsAsync === "function") {
    for await (const [name, subgraph] of graph.getSubgraphsAsync(namespace, recurse)) {
      subgraphs[name] = graphSchemas(subgraph);
    }
  }
  return json(200, subgraphs);
};

// ---------------------------------------------------------------- the compiled graph

/** What the routes read of a compiled graph, besides running it: present on every LangGraph JS graph. */
interface IntrospectableGraph {
  getGraphAsync?: (config: Record<string, unknown>) => Promise<{ toJSON(): unknown }>;
  getSubgraphsAsync?: (
    namespace?: string,
    recurse?: boolean,
  ) => AsyncIterable<[string, IntrospectableGraph]>;
  builder?: GraphBuilder;
}

/** The parts of a StateGraph builder the schemas come from (LangGraph keeps them on the compiled graph). */
interface GraphBuilder {
  _schemaDefinition?: Record<string, unknown>;
  _inputDefinition?: Record<string, unknown>;
  _outputDefinition?: Record<string, unknown>;
  _schemaRuntimeDefinition?: unknown;
  _inputRuntimeDefinition?: unknown;
  _outputRuntimeDefinition?: unknown;
  _configRuntimeSchema?: unknown;
}

interface GraphSchemas {
  state?: unknown;
  input?: unknown;
  output?: unknown;
  config?: unknown;
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

/** Where LangGraph marks an input that is the state schema with every field optional. */
const PARTIAL_STATE = Symbol.for("langgraph.state.partial");

/**
 * JSON schemas of a compiled graph, from what it carries at run time, in LangGraph Server's order of preference:
 * StateSchema's own JSON schemas, then Zod schemas (with LangGraph's metadata, then plain). LangGraph Server then
 * parses the graph's TypeScript source; a Lambda has no source, so an Annotation graph is described by its
 * channels: an object with one property, of any type, per channel (and no config schema).
 */
function graphSchemas(graph: IntrospectableGraph): GraphSchemas {
  const builder = graph.builder;
  if (!builder) return {};
  return (
    stateSchemas(builder) ??
    zodRegistrySchemas(graph) ??
    plainZodSchemas(builder) ??
    channelSchemas(builder)
  );
}

interface StateSchemaLike {
  getJsonSchema(): unknown;
  getInputJsonSchema(): unknown;
}

function isStateSchemaLike(value: unknown): value is StateSchemaLike {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as StateSchemaLike).getJsonSchema === "function" &&
    typeof (value as StateSchemaLike).getInputJsonSchema === "function"
  );
}

function stateSchemas(builder: GraphBuilder): GraphSchemas | undefined {
  const state = builder._schemaRuntimeDefinition;
  const input = builder._inputRuntimeDefinition;
  const output = builder._outputRuntimeDefinition;
  if (!isStateSchemaLike(state) && !isStateSchemaLike(input) && !isStateSchemaLike(output)) {
    return undefined;
  }
  const schemas: GraphSchemas = {
    state: isStateSchemaLike(state) ? state.getJsonSchema() : undefined,
    input: isStateSchemaLike(input)
      ? input.getInputJsonSchema()
      : input === PARTIAL_STATE && isStateSchemaLike(state)
        ? state.getInputJsonSchema()
        : undefined,
    output: isStateSchemaLike(output) ? output.getJsonSchema() : undefined,
  };
  return hasAny(schemas) ? schemas : undefined;
}

function zodRegistrySchemas(graph: IntrospectableGraph): GraphSchemas | undefined {
  // The graph's own copy of LangGraph's schema registry: a graph module may bundle another copy than ours.
  const registry = (graph as { _metaRegistry?: Parameters<typeof getUpdateTypeSchema>[1] })
    ._metaRegistry;
  try {
    const schemas: GraphSchemas = {
      state: getUpdateTypeSchema(graph, registry),
      input: getInputTypeSchema(graph, registry),
      output: getOutputTypeSchema(graph, registry),
      config: getConfigTypeSchema(graph, registry),
    };
    return hasAny(schemas) ? schemas : undefined;
  } catch {
    return undefined;
  }
}

function plainZodSchemas(builder: GraphBuilder): GraphSchemas | undefined {
  const convert = (schema: unknown): unknown => {
    if (schema === undefined || typeof schema === "symbol") return undefined;
    try {
      // Zod 3 and 4 through LangChain's converter; any other Standard JSON Schema through LangGraph's.
      return isInteropZodSchema(schema) ? toJsonSchema(schema) : getJsonSchemaFromSchema(schema);
    } catch {
      return undefined;
    }
  };
  const state = convert(builder._schemaRuntimeDefinition);
  const schemas: GraphSchemas = {
    state,
    input:
      convert(builder._inputRuntimeDefinition) ??
      (isObject(state) ? { ...state, required: undefined } : undefined),
    output: convert(builder._outputRuntimeDefinition),
    config: convert(builder._configRuntimeSchema),
  };
  return hasAny(schemas) ? schemas : undefined;
}

function channelSchemas(builder: GraphBuilder): GraphSchemas {
  const describeChannels = (channels: Record<string, unknown> | undefined) =>
    channels === undefined
      ? undefined
      : {
          $schema: "http://json-schema.org/draft-07/schema#",
          type: "object",
          properties: Object.fromEntries(Object.keys(channels).map((name) => [name, {}])),
        };
  return {
    state: describeChannels(builder._schemaDefinition),
    input: describeChannels(builder._inputDefinition ?? builder._schemaDefinition),
    output: describeChannels(builder._outputDefinition ?? builder._schemaDefinition),
  };
}

function hasAny(schemas: GraphSchemas): boolean {
  return Object.values(schemas).some((schema) => schema !== undefined && schema !== null);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------- requests and JSON

function assistantParam(context: RouteContext): string {
  return context.params.assistant_id ?? "";
}

/** An assistant's config: an object whose `tags`, `recursion_limit` and `configurable` have their types. */
function configField(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const config = objectField(body, "config");
  if (config === undefined) return undefined;
  const { tags, recursion_limit: recursionLimit, configurable } = config;
  if (tags !== undefined && (!Array.isArray(tags) || tags.some((tag) => typeof tag !== "string"))) {
    throw new HttpError(
      422,
      `Invalid config.tags: expected an array of strings, got ${describe(tags)}`,
    );
  }
  if (
    recursionLimit !== undefined &&
    (typeof recursionLimit !== "number" || !Number.isInteger(recursionLimit))
  ) {
    throw new HttpError(
      422,
      `Invalid config.recursion_limit: expected an integer, got ${describeValue(recursionLimit)}`,
    );
  }
  if (
    configurable !== undefined &&
    (typeof configurable !== "object" || configurable === null || Array.isArray(configurable))
  ) {
    throw new HttpError(
      422,
      `Invalid config.configurable: expected an object, got ${describe(configurable)}`,
    );
  }
  return config;
}

function filterFields(body: Record<string, unknown>): AssistantFilter {
  const graphId = optionalString(body, "graph_id");
  const name = optionalString(body, "name");
  const metadata = objectField(body, "metadata");
  return {
    ...(graphId !== undefined ? { graphId } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
  };
}

function enumField<T extends string>(
  body: Record<string, unknown>,
  field: string,
  allowed: readonly T[],
): T | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value)) {
    throw new HttpError(
      422,
      `Invalid ${field}: expected one of ${allowed.join(", ")}, got ${describeValue(value)}`,
    );
  }
  return value as T;
}

function selectField(body: Record<string, unknown>): readonly string[] | undefined {
  const value = body.select;
  if (value === undefined || value === null) return undefined;
  const fields: readonly string[] = ASSISTANT_FIELDS;
  if (!Array.isArray(value) || value.some((field) => !fields.includes(field as string))) {
    throw new HttpError(
      422,
      `Invalid select: expected an array of ${ASSISTANT_FIELDS.join(", ")}, got ${describe(value)}`,
    );
  }
  return value as string[];
}

/** `xray`: a boolean, or a depth (a non-negative integer: 0 is none). */
function xrayQuery(value: string | undefined): boolean | number | undefined {
  if (value === undefined) return undefined;
  if (/^\d{1,4}$/.test(value)) return Number(value) === 0 ? false : Number(value);
  return booleanQuery("xray", value, "a boolean or a depth");
}

function booleanQuery(
  field: string,
  value: string | undefined,
  expected = "a boolean",
): boolean | undefined {
  if (value === undefined) return undefined;
  const lower = value.toLowerCase();
  if (lower === "true" || lower === "yes" || lower === "1") return true;
  if (lower === "false" || lower === "no" || lower === "0") return false;
  throw new HttpError(422, `Invalid ${field}: expected ${expected}, got ${describeValue(value)}`);
}

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
