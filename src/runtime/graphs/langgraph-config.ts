/**
 * Serves the graphs of a LangGraph project: reads its `langgraph.json`, imports each `"<path>:<export>"` entry and
 * turns the export into a {@link GraphFactory}, the way the LangGraph server (`@langchain/langgraph-api`) reads
 * the same file, so a project runs here unchanged:
 *   - paths are relative to the directory of langgraph.json; an empty export name means `default`;
 *   - the export may be a compiled graph, an uncompiled `StateGraph`, a promise of either, or a (possibly async)
 *     function of a config returning either; a `createAgent` agent is served through the graph it wraps;
 *   - every graph runs on the handler's checkpointer and long-term store, whatever it was compiled with (see
 *     withHandlerStorage in graph-factory.ts), as the LangGraph server attaches its own to every graph;
 *   - `env` (an object, or the path of a dotenv file) fills in variables that are not set yet, before any graph
 *     module is imported: the function's own environment wins, as the process environment wins there;
 *   - `getLogger()` of `@langchain/langgraph-sdk/logging` works in graph modules, from their first line: a logger
 *     is registered for it before they are imported (see {@link registerGraphLogger}).
 * What differs, because of Lambda:
 *   - a function export is called once per (assistant, tenant) and container, with an empty config, not once per
 *     run with the run's config: a graph that builds itself from a run's `configurable` values gets the defaults;
 *   - fields for the container build, custom routes, generative UI and the store's settings do not apply: each
 *     present one is reported through the logger (see IGNORED_FIELDS in langgraph-json.ts) and ignored; `auth` is
 *     read by loadLangGraphAuth (langgraph-auth-config.ts) and given to the handler as its `auth` option;
 *   - TypeScript graphs need a loader: tsx, when the project has it (a development setup; the Lambda image runs
 *     JavaScript), registered once for the process, or a loader the process already runs under.
 */
import { dirname, resolve } from "node:path";
import type { Logger } from "pino";
import type { GraphFactory } from "../types";
import { toGraphFactory } from "./graph-factory";
import { importGraphModule, readExport } from "./graph-module-import";
import { registerGraphLogger } from "./graph-sdk-logger";
import {
  applyEnv,
  noteIgnoredFields,
  readConfig,
  readEnv,
  readGraphEntries,
  type Warn,
} from "./langgraph-json";

export interface LangGraphConfigOptions {
  /** The environment `env` fills in (default `process.env`); variables it already has keep their values. */
  env?: Record<string, string | undefined>;
  /**
   * The container logger: it receives a warning for each field that does not apply here, and what graphs log
   * through the LangGraph SDK's `getLogger()`. Default: process warnings and the console.
   */
  logger?: Logger;
}

/**
 * Reads the langgraph.json at `configPath` and returns its graphs as factories by graph id, ready for the
 * handler's `assistants` option. Everything is checked before anything is imported: a bad field, a graph entry
 * that is not `"<path>:<export>"` or a module file that does not exist throws {@link InvalidConfigurationError}
 * naming the field; so does a module that fails to load, an export that is missing or not a graph.
 */
export async function loadLangGraphConfig(
  configPath: string,
  options: LangGraphConfigOptions = {},
): Promise<Record<string, GraphFactory>> {
  const path = resolve(configPath);
  const projectDir = dirname(path);
  const warn: Warn = (field, message) => {
    if (options.logger) options.logger.warn({ field, config: path }, message);
    else process.emitWarning(message, "LangGraphConfigWarning");
  };
  const config = await readConfig(path);
  const entries = await readGraphEntries(config.graphs, projectDir);
  const env = await readEnv(config.env, projectDir, warn);
  noteIgnoredFields(config, warn);

  applyEnv(env, options.env ?? process.env);
  registerGraphLogger(options.logger);
  const modules = new Map<string, Promise<unknown>>();
  const factories: Array<[string, GraphFactory]> = [];
  for (const entry of entries) {
    if (!modules.has(entry.file)) modules.set(entry.file, importGraphModule(entry, projectDir));
    const exported = readExport(await modules.get(entry.file), entry);
    factories.push([entry.id, await toGraphFactory(exported, entry, warn)]);
  }
  // fromEntries defines own properties: a graph id such as "__proto__" stays an ordinary key.
  return Object.fromEntries(factories);
}
