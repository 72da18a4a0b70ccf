/**
 * Serves the graphs of a LangGraph project: reads its `langgraph.json`, imports each `"<path>:<export>"` entry and
 * turns the export into a {@link GraphFactory}, the way the LangGraph server (`@langchain/langgraph-api`) reads
 * the same file, so a project runs here unchanged:
 *   - paths are relative to the directory of langgraph.json; an empty export name means `default`;
 *   - the export may be a compiled graph, an uncompiled `StateGraph`, a promise of either, or a (possibly async)
 *     function of a config returning either; a `createAgent` agent is served through the graph it wraps;
 *   - every graph runs on the handler's checkpointer and long-term store, whatever it was compiled with (see
 *     {@link withHandlerStorage}), as the LangGraph server attaches its own to every graph;
 *   - `env` (an object, or the path of a dotenv file) fills in variables that are not set yet, before any graph
 *     module is imported: the function's own environment wins, as the process environment wins there;
 *   - `getLogger()` of `@langchain/langgraph-sdk/logging` works in graph modules, from their first line: a logger
 *     is registered for it before they are imported (see {@link registerGraphLogger}).
 * What differs, because of Lambda:
 *   - a function export is called once per (assistant, tenant) and container, with an empty config, not once per
 *     run with the run's config: a graph that builds itself from a run's `configurable` values gets the defaults;
 *   - fields for the container build, custom auth, custom routes, generative UI and the store's settings do not
 *     apply: each present one is reported through the logger (see IGNORED_FIELDS) and ignored;
 *   - TypeScript graphs need a loader: tsx, when the project has it (a development setup; the Lambda image runs
 *     JavaScript), registered once for the process, or a loader the process already runs under.
 */
import { readFileSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { basename, dirname, extname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseEnv } from "node:util";
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph-checkpoint";
import type { Logger } from "pino";
import { InvalidConfigurationError, InvalidIdentifierError } from "../../shared/errors";
import { assertPathIdentifier } from "../../shared/identifiers";
import type { GraphFactory, HandlerGraph } from "../types";

export interface LangGraphConfigOptions {
  /** The environment `env` fills in (default `process.env`); variables it already has keep their values. */
  env?: Record<string, string | undefined>;
  /**
   * The container logger: it receives a warning for each field that does not apply here, and what graphs log
   * through the LangGraph SDK's `getLogger()`. Default: process warnings and the console.
   */
  logger?: Logger;
}

/** Fields of langgraph.json that have no effect here, with the reason given to the user. */
const IGNORED_FIELDS: Readonly<Record<string, string>> = {
  node_version: "the function's runtime (Node.js 22 in the image) runs the graphs",
  node_loader: "TypeScript graphs load through the project's tsx",
  dependencies: "the graphs' dependencies are installed when the image is built",
  dockerfile_lines: "the image is built from Memory Table's Dockerfile",
  docker_compose_file: "the image is built from Memory Table's Dockerfile",
  base_image: "the image is built from Memory Table's Dockerfile",
  image_distro: "the image is built from Memory Table's Dockerfile",
  _INTERNAL_docker_tag: "the image is built from Memory Table's Dockerfile",
  api_version: "the handler serves its own version of the API",
  auth: "the tenant comes from the verified JWT claim, not from a custom auth handler",
  http: "custom routes are not served, and CORS is configured on API Gateway",
  ui: "generative UI components are not served",
  ui_config: "generative UI components are not served",
  store:
    "langgraph.json configures no long-term store here: the handler's store option does (index and TTL included)",
  checkpointer: "checkpoints expire with the saver's ttlSeconds",
  python_version: "Python graphs are not served",
  pip_config_file: "Python graphs are not served",
  pip_installer: "Python graphs are not served",
};

const HANDLED_FIELDS = new Set(["graphs", "env"]);

/** Extensions Node imports by itself; the others need a loader (tsx). */
const JAVASCRIPT_EXTENSIONS = [".js", ".mjs", ".cjs"];
const LOADER_EXTENSIONS = [".ts", ".mts", ".cts", ".tsx", ".jsx"];

const EXPORT_NAME = /^[A-Za-z_$][\w$]*$/;

/** One entry of `graphs`, checked: its module file exists. */
interface GraphEntry {
  id: string;
  /** `graphs.<id>`, the field errors name. */
  field: string;
  /** As written in langgraph.json, for messages. */
  spec: string;
  file: string;
  exportName: string;
}

type Warn = (field: string, message: string) => void;

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

async function readConfig(path: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const reason = errorCode(error) === "ENOENT" ? "which does not exist" : describeError(error);
    throw new InvalidConfigurationError(
      "configPath",
      `expected a langgraph.json file, got ${path}, ${reason}`,
      { cause: error },
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new InvalidConfigurationError(
      basename(path),
      `expected JSON, got text that does not parse (${describeError(error)}) in ${path}`,
      { cause: error },
    );
  }
  if (!isRecord(parsed)) {
    throw new InvalidConfigurationError(
      basename(path),
      `expected a JSON object, got ${describe(parsed)} in ${path}`,
    );
  }
  return parsed;
}

async function readGraphEntries(graphs: unknown, projectDir: string): Promise<GraphEntry[]> {
  if (!isRecord(graphs)) {
    throw new InvalidConfigurationError(
      "graphs",
      `expected an object of graph id to "<path>:<export>", got ${describe(graphs)}`,
    );
  }
  const ids = Object.keys(graphs);
  if (ids.length === 0) {
    throw new InvalidConfigurationError("graphs", "expected at least one graph, got {}");
  }
  const entries = ids.map((id) => parseGraphEntry(id, graphs[id], projectDir));
  for (const entry of entries) await checkModuleFile(entry);
  return entries;
}

function parseGraphEntry(id: string, raw: unknown, projectDir: string): GraphEntry {
  try {
    assertPathIdentifier("graph id", id);
  } catch (error) {
    if (!(error instanceof InvalidIdentifierError)) throw error;
    throw new InvalidConfigurationError(
      "graphs",
      `expected graph ids usable as assistant ids, got ${JSON.stringify(id)} (${error.reason})`,
      { cause: error },
    );
  }
  const field = `graphs.${id}`;
  // The long form `{"path": "...", "description": "..."}` is accepted; assistants carry no description here.
  const spec = isRecord(raw) ? raw.path : raw;
  const colon = typeof spec === "string" ? spec.lastIndexOf(":") : -1;
  if (typeof spec !== "string" || colon <= 0) {
    throw new InvalidConfigurationError(field, `expected "<path>:<export>", got ${describe(raw)}`);
  }
  const exportName = spec.slice(colon + 1) || "default";
  if (!EXPORT_NAME.test(exportName)) {
    throw new InvalidConfigurationError(
      field,
      `expected "<path>:<export>" with an export name, got ${JSON.stringify(spec)}`,
    );
  }
  const file = resolve(projectDir, spec.slice(0, colon));
  const extension = extname(file);
  if (!JAVASCRIPT_EXTENSIONS.includes(extension) && !LOADER_EXTENSIONS.includes(extension)) {
    throw new InvalidConfigurationError(
      field,
      `expected a JavaScript or TypeScript module (${[...JAVASCRIPT_EXTENSIONS, ...LOADER_EXTENSIONS].join(", ")}), got ${JSON.stringify(spec)}`,
    );
  }
  return { id, field, spec, file, exportName };
}

async function checkModuleFile(entry: GraphEntry): Promise<void> {
  const found = await stat(entry.file).catch(() => undefined);
  if (!found?.isFile()) {
    throw new InvalidConfigurationError(
      entry.field,
      `expected a module file, got ${JSON.stringify(entry.spec)}: ${entry.file} ${found ? "is not a file" : "does not exist"}`,
    );
  }
}

/** `env`: variables, or the path of a dotenv file relative to langgraph.json (a missing file is only noted). */
async function readEnv(
  value: unknown,
  projectDir: string,
  warn: Warn,
): Promise<Record<string, string>> {
  if (value === undefined || value === null) return {};
  if (typeof value === "string") {
    const path = resolve(projectDir, value);
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      if (errorCode(error) !== "ENOENT") {
        throw new InvalidConfigurationError("env", `expected a readable env file, got ${path}`, {
          cause: error,
        });
      }
      // As the LangGraph CLI does: the file usually holds a developer's secrets and is not deployed.
      warn("env", `Env file ${path} not found: continuing without it`);
      return {};
    }
    return checkEnvNames(parseEnv(text) as Record<string, string>);
  }
  if (Array.isArray(value)) {
    throw new InvalidConfigurationError(
      "env",
      "expected an object of variables or the path of an env file, got an array (secrets of the LangGraph platform): set them on the function instead",
    );
  }
  if (!isRecord(value)) {
    throw new InvalidConfigurationError(
      "env",
      `expected an object of variables or the path of an env file, got ${describe(value)}`,
    );
  }
  for (const [name, variable] of Object.entries(value)) {
    if (typeof variable !== "string") {
      throw new InvalidConfigurationError(
        `env.${name}`,
        `expected a string, got ${describe(variable)}`,
      );
    }
  }
  return checkEnvNames(value as Record<string, string>);
}

function checkEnvNames(variables: Record<string, string>): Record<string, string> {
  for (const name of Object.keys(variables)) {
    if (name === "" || name.includes("=") || name.includes("\0")) {
      throw new InvalidConfigurationError(
        "env",
        `expected variable names without "=" or NUL, got ${JSON.stringify(name)}`,
      );
    }
  }
  return variables;
}

function applyEnv(variables: Record<string, string>, target: Record<string, string | undefined>) {
  for (const [name, value] of Object.entries(variables)) {
    if (!Object.prototype.hasOwnProperty.call(target, name)) target[name] = value;
  }
}

function noteIgnoredFields(config: Record<string, unknown>, warn: Warn): void {
  for (const field of Object.keys(config)) {
    if (HANDLED_FIELDS.has(field)) continue;
    const reason = Object.hasOwn(IGNORED_FIELDS, field)
      ? IGNORED_FIELDS[field]
      : "it is not a langgraph.json field this handler knows";
    warn(field, `langgraph.json field "${field}" is ignored: ${reason}`);
  }
}

async function importGraphModule(entry: GraphEntry, projectDir: string): Promise<unknown> {
  try {
    return await importModule(entry.file, projectDir);
  } catch (error) {
    if (errorCode(error) === "ERR_UNKNOWN_FILE_EXTENSION") {
      throw new InvalidConfigurationError(
        entry.field,
        `expected a JavaScript module, or tsx in the project to load TypeScript, got ${JSON.stringify(entry.spec)} and no TypeScript loader: add tsx to the project's devDependencies, or point langgraph.json at the compiled JavaScript`,
        { cause: error },
      );
    }
    throw new InvalidConfigurationError(
      entry.field,
      `expected ${JSON.stringify(entry.spec)} to load, got ${describeError(error)}`,
      { cause: error },
    );
  }
}

/**
 * Imports a graph module as the LangGraph server does, with `import()`: ES modules (top-level await included)
 * and CommonJS alike. A host without dynamic import, such as Jest's module sandbox, can still load CommonJS
 * graphs, and TypeScript ones through its own transform, with `require`.
 */
async function importModule(file: string, projectDir: string): Promise<unknown> {
  try {
    if (LOADER_EXTENSIONS.includes(extname(file))) await registerTypeScriptLoader(projectDir);
    return (await import(pathToFileURL(file).href)) as unknown;
  } catch (error) {
    const code = errorCode(error);
    if (
      code === "ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING_FLAG" ||
      code === "ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING"
    ) {
      return createRequire(file)(file) as unknown;
    }
    throw error;
  }
}

/** tsx's hooks, registered once for the process: every later TypeScript import goes through them. */
let typeScriptLoader: Promise<void> | undefined;

/**
 * Registers the project's tsx for the whole process, as running under the `tsx` command would (the LangGraph
 * CLI runs its server so). A namespaced `tsImport` would load every package a graph imports a second time. Without
 * tsx nothing is registered: a loader the process already runs under (or Node's type stripping) may still load
 * the graph, and otherwise the import fails with ERR_UNKNOWN_FILE_EXTENSION.
 */
function registerTypeScriptLoader(projectDir: string): Promise<void> {
  typeScriptLoader ??= (async () => {
    const api = resolveTsxEsmApi(projectDir);
    if (api === undefined) return;
    const { register } = (await import(pathToFileURL(api).href)) as { register: () => unknown };
    register();
  })();
  return typeScriptLoader;
}

/**
 * The ES module build of `tsx/esm/api`, found from the project's directory. Resolved through tsx's exports map
 * by hand: `require.resolve` picks its CommonJS build, which registers its hooks from the wrong path on Node 20.
 */
function resolveTsxEsmApi(projectDir: string): string | undefined {
  let manifestPath: string;
  try {
    manifestPath = createRequire(join(projectDir, "langgraph.json")).resolve("tsx/package.json");
  } catch {
    return undefined;
  }
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as {
    exports?: Record<string, { import?: string | { default?: string } }>;
  };
  const target = manifest.exports?.["./esm/api"]?.import;
  const file = typeof target === "string" ? target : target?.default;
  return file === undefined ? undefined : resolve(dirname(manifestPath), file);
}

/** Where `getLogger()` of `@langchain/langgraph-sdk/logging` finds the logger the server registered. */
const SDK_LOGGER = Symbol.for("langgraph.api.sdk-logger");

/** The SDK logger's (winston's) levels, as pino levels. */
const SDK_LEVELS = {
  error: "error",
  warn: "warn",
  info: "info",
  help: "info",
  data: "info",
  prompt: "info",
  input: "info",
  http: "debug",
  verbose: "debug",
  debug: "debug",
  silly: "trace",
} as const;

type LogLevel = (typeof SDK_LEVELS)[keyof typeof SDK_LEVELS];

/**
 * Registers the logger graphs reach through the LangGraph SDK's `getLogger()`, as the LangGraph server does
 * before it loads graphs (a module may call it on its first line; without a registered logger it throws). Its
 * calls, `(message, ...meta)` or `(object)`, go to `logger` as pino calls, else to the console. A logger
 * registered already (by an earlier load, or the host) is kept: there is one per process.
 */
function registerGraphLogger(logger: Logger | undefined): void {
  const global = globalThis as Record<symbol, unknown>;
  if (global[SDK_LOGGER] !== undefined) return;
  const write = (level: LogLevel, fields: object, message: string | undefined): void => {
    if (logger) return logger[level](fields, message);
    const print = console[level === "trace" ? "debug" : level];
    if (Object.keys(fields).length === 0) print(message ?? "");
    else print(message ?? "", fields);
  };
  const sdkLogger: Record<string, unknown> = {};
  for (const [sdkLevel, level] of Object.entries(SDK_LEVELS)) {
    sdkLogger[sdkLevel] = (message: unknown, ...meta: unknown[]) => {
      const fields = Object.assign({}, ...meta.filter(isRecord)) as Record<string, unknown>;
      if (isRecord(message)) write(level, { ...fields, ...message }, undefined);
      else write(level, fields, typeof message === "string" ? message : String(message));
      return sdkLogger;
    };
  }
  global[SDK_LOGGER] = sdkLogger;
}

function readExport(loaded: unknown, entry: GraphEntry): unknown {
  let value = property(loaded, entry.exportName);
  // import() of a CommonJS module exposes what its exports parser could not see only under `default`.
  value ??= property(property(loaded, "default"), entry.exportName);
  // require() of `module.exports = graph` returns the graph itself.
  if (value === undefined && entry.exportName === "default" && isBuildable(loaded)) value = loaded;
  if (value === undefined) {
    throw new InvalidConfigurationError(
      entry.field,
      `expected ${JSON.stringify(entry.spec)} to export "${entry.exportName}", got exports ${exportNames(loaded)}`,
    );
  }
  return value;
}

/** A graph, or a function building one: checked now when it is a graph, at each call when it is a function. */
async function toGraphFactory(
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
    `expected ${source} to be a compiled graph, a StateGraph or a function returning one, got ${describe(value)}`,
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

function isBuildable(value: unknown): boolean {
  return typeof value === "function" || isUncompiled(value) || isCompiled(value);
}

function property(value: unknown, key: string): unknown {
  return (typeof value === "object" || typeof value === "function") && value !== null
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function exportNames(loaded: unknown): string {
  if ((typeof loaded !== "object" && typeof loaded !== "function") || loaded === null) {
    return describe(loaded);
  }
  const names = Object.keys(loaded).filter((name) => name !== "__esModule");
  return names.length === 0 ? "{}" : `{${names.join(", ")}}`;
}

function errorCode(error: unknown): unknown {
  return property(error, "code");
}

function describeError(error: unknown): string {
  // Duck-typed: an error thrown by a graph module may come from another realm.
  const name = property(error, "name");
  const message = property(error, "message");
  if (typeof name === "string" && typeof message === "string") return `${name}: ${message}`;
  return describe(error);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean") return `${typeof value} ${value}`;
  if (typeof value === "function") return "a function";
  if (isRecord(value)) {
    const keys = Object.keys(value).slice(0, 8);
    return keys.length === 0 ? "an empty object" : `an object with keys ${keys.join(", ")}`;
  }
  return typeof value;
}
