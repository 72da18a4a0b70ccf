import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph-checkpoint";
import { InvalidConfigurationError } from "../../shared/errors";
import type { GraphFactory, HandlerGraph } from "../types";
import { describeConfigValue, isRecord, property } from "./config-values";
import type { GraphEntry, Warn } from "./langgraph-json";

/** A langgraph.json graph's export, served as a GraphFactory on the handler's checkpointer and store. */

/** A graph, or a function building one: checked now when it is a graph, at each call when it is a function. */
export async function toGraphFactory(
  exported: unknown,
  entry: GraphEntry,
  warn: Warn,
): Promise<GraphFactory> {
  if (typeof exported === "function") {
    const build = exported as (config: { configurable: Record<string, unknown> }) => unknown;
    const source = `the function exported as "${entry.exportName}" by ${entry.file}`;
    return async ({ checkpointer, store }) =>
      withHandlerStorage(
        checkGraph(await build({ configurable: {} }), entry, source),
        checkpointer,
        store,
      );
  }
  const graph = checkGraph(await exported, entry, `"${entry.exportName}" of ${entry.file}`);
  if (isCompiled(graph) && property(graph, "store") != null) {
    warn(
      entry.field,
      `Graph "${entry.id}" was compiled with a store of its own: it is served with the handler's store instead, each tenant's own (none when the handler's store option is false)`,
    );
  }
  return ({ checkpointer, store }) => withHandlerStorage(graph, checkpointer, store);
}

/** What a loaded export can be: an uncompiled graph, or a compiled one (the handler's needs and `withConfig`). */
type LoadedGraph =
  | { compile(options: { checkpointer?: BaseCheckpointSaver; store?: BaseStore }): unknown }
  | (HandlerGraph & { withConfig(config: Record<string, never>): unknown });

function checkGraph(value: unknown, entry: GraphEntry, source: string): LoadedGraph {
  const graph = unwrapAgent(value);
  if (isUncompiled(graph) || isCompiled(graph)) return graph;
  throw new InvalidConfigurationError(
    entry.field,
    `expected ${source} to be a compiled graph, a StateGraph or a function returning one, got ${describeConfigValue(value)}`,
  );
}

/**
 * The graph on the handler's checkpointer and store. An uncompiled graph is compiled with them. A compiled graph
 * is served as a copy (`withConfig({})`, sharing its nodes) whose checkpointer and store are replaced, as the
 * LangGraph server replaces them: a saver or store the module compiled in would be shared by every tenant, and
 * lost with the container. The exported graph itself is never changed, so two handlers in one process (or the
 * project's own tests) never see each other's. Each factory call gets its own copy; the checkpointer and store it
 * receives are the same for every tenant of the container anyway: they hold no tenant state and forward each call
 * to the request in progress's (scoped-checkpointer.ts), so cached graphs serve every tenant safely.
 */
function withHandlerStorage(
  graph: LoadedGraph,
  checkpointer: BaseCheckpointSaver | undefined,
  store: BaseStore | undefined,
): HandlerGraph {
  if (isUncompiled(graph)) return graph.compile({ checkpointer, store }) as HandlerGraph;
  const copy = graph.withConfig({}) as HandlerGraph & {
    checkpointer?: BaseCheckpointSaver;
    store?: BaseStore;
  };
  copy.checkpointer = checkpointer;
  copy.store = store;
  return copy;
}

/**
 * `createAgent` (langchain 1.x) returns an agent that looks like a compiled graph but runs an inner one, exposed
 * as `graph`: the inner graph is the one to serve, with the checkpointer set on it.
 */
function unwrapAgent(value: unknown): unknown {
  const inner = property(value, "graph");
  return isCompiled(inner) && isRecord(property(inner, "builder")) ? inner : value;
}

function isUncompiled(value: unknown): value is Extract<LoadedGraph, { compile: unknown }> {
  return typeof property(value, "compile") === "function" && !isCompiled(value);
}

function isCompiled(value: unknown): value is Exclude<LoadedGraph, { compile: unknown }> {
  return ["stream", "getState", "getStateHistory", "withConfig"].every(
    (method) => typeof property(value, method) === "function",
  );
}

export function isBuildable(value: unknown): boolean {
  return typeof value === "function" || isUncompiled(value) || isCompiled(value);
}
