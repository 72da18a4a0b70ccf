import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { isInteropZodSchema } from "@langchain/core/utils/types";
import { getJsonSchemaFromSchema } from "@langchain/langgraph";
import {
  getConfigTypeSchema,
  getInputTypeSchema,
  getOutputTypeSchema,
  getUpdateTypeSchema,
} from "@langchain/langgraph/zod/schema";

/** What a compiled graph tells of itself besides running: its drawing and its JSON schemas (served per assistant). */

/** What the routes read of a compiled graph, besides running it: present on every LangGraph JS graph. */
export interface IntrospectableGraph {
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

export interface GraphSchemas {
  state?: unknown;
  input?: unknown;
  output?: unknown;
  config?: unknown;
}

/** Where LangGraph marks an input that is the state schema with every field optional. */
const PARTIAL_STATE = Symbol.for("langgraph.state.partial");

/**
 * JSON schemas of a compiled graph, from what it carries at run time, in LangGraph Server's order of preference:
 * StateSchema's own JSON schemas, then Zod schemas (with LangGraph's metadata, then plain). LangGraph Server then
 * parses the graph's TypeScript source; a Lambda has no source, so an Annotation graph is described by its
 * channels: an object with one property, of any type, per channel (and no config schema).
 */
export function graphSchemas(graph: IntrospectableGraph): GraphSchemas {
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
