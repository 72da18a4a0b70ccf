import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { isInteropZodSchema } from "@langchain/core/utils/types";
import { getJsonSchemaFromSchema } from "@langchain/langgraph";
import { InvalidConfigurationError } from "../../shared/errors";
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

/**
 * Schemas read ahead of time from a graph's TypeScript source (src/dev/graph-source-schemas.ts does it where a
 * compiler is installed): the graph's own, and its subgraphs' by namespace (`node`, `node|inner`).
 */
export interface SourceGraphSchemas {
  graph: GraphSchemas;
  subgraphs: Record<string, GraphSchemas>;
}

/** Source schemas by graph id, as given to the handler (HandlerOptions.graphSchemas) or read from a file. */
export type SourceSchemasByGraph = Readonly<Record<string, SourceGraphSchemas>>;

const PARTS = ["state", "input", "output", "config"] as const;

/**
 * Source schemas checked before use (`field` names where they come from, for the error): an object of graph id to
 * `{graph, subgraphs}`, each schema a JSON object. Throws InvalidConfigurationError naming the first bad entry.
 */
export function checkSourceSchemas(value: unknown, field: string): SourceSchemasByGraph {
  const fail = (path: string, expected: string, got: unknown): never => {
    throw new InvalidConfigurationError(
      path,
      `expected ${expected}, got ${Array.isArray(got) ? "an array" : got === null ? "null" : typeof got}`,
    );
  };
  const checkSchemas = (schemas: unknown, path: string): GraphSchemas => {
    if (!isObject(schemas))
      return fail(path, "an object of state, input, output and config schemas", schemas);
    for (const part of PARTS) {
      if (schemas[part] !== undefined && !isObject(schemas[part])) {
        fail(`${path}.${part}`, "a JSON schema object", schemas[part]);
      }
    }
    return schemas;
  };
  if (!isObject(value)) return fail(field, "an object of graph id to schemas", value);
  const checked: Record<string, SourceGraphSchemas> = {};
  for (const [graphId, entry] of Object.entries(value)) {
    const path = `${field}.${graphId}`;
    if (!isObject(entry)) return fail(path, "an object with graph and subgraphs", entry);
    const subgraphs = entry.subgraphs ?? {};
    if (!isObject(subgraphs))
      return fail(`${path}.subgraphs`, "an object of namespace to schemas", subgraphs);
    checked[graphId] = {
      graph: checkSchemas(entry.graph ?? {}, `${path}.graph`),
      subgraphs: Object.fromEntries(
        Object.entries(subgraphs).map(([namespace, schemas]) => [
          namespace,
          checkSchemas(schemas, `${path}.subgraphs.${namespace}`),
        ]),
      ),
    };
  }
  return checked;
}

/** Where LangGraph marks an input that is the state schema with every field optional. */
const PARTIAL_STATE = Symbol.for("langgraph.state.partial");

/**
 * JSON schemas of a compiled graph, in LangGraph Server's order of preference: from what it carries at run time
 * (StateSchema's own JSON schemas, then zod schemas with LangGraph's metadata, then plain zod), else those read
 * ahead of time from its TypeScript source (`fromSource`; graphs built with `Annotation` carry no schemas at run
 * time, and a Lambda has no compiler). A part neither tells is left out: unknown, as LangGraph Server leaves it.
 */
export function graphSchemas(graph: IntrospectableGraph, fromSource?: GraphSchemas): GraphSchemas {
  const builder = graph.builder;
  const atRunTime = builder
    ? (stateSchemas(builder) ?? zodRegistrySchemas(graph) ?? plainZodSchemas(builder))
    : undefined;
  return atRunTime ?? fromSource ?? {};
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

function hasAny(schemas: GraphSchemas): boolean {
  return Object.values(schemas).some((schema) => schema !== undefined && schema !== null);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
