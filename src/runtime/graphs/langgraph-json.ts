import { readFile, stat } from "node:fs/promises";
import { basename, extname, resolve } from "node:path";
import { parseEnv } from "node:util";
import { InvalidConfigurationError, InvalidIdentifierError } from "../../shared/errors";
import { assertPathIdentifier } from "../../shared/identifiers";
import { describeConfigValue, describeError, errorCode, isRecord } from "./config-values";

/**
 * langgraph.json read and checked before anything is imported (langgraph-config.ts): the file, its graph
 * entries and their module files, `env`, and the fields that do not apply here.
 */

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

// `auth` is read by loadLangGraphAuth (langgraph-auth-config.ts).
const HANDLED_FIELDS = new Set(["graphs", "env", "auth"]);

/** Extensions Node imports by itself; the others need a loader (tsx). */
const JAVASCRIPT_EXTENSIONS = [".js", ".mjs", ".cjs"];
export const LOADER_EXTENSIONS = [".ts", ".mts", ".cts", ".tsx", ".jsx"];

const EXPORT_NAME = /^[A-Za-z_$][\w$]*$/;

/** One entry of `graphs`, checked: its module file exists. */
export interface GraphEntry {
  id: string;
  /** `graphs.<id>`, the field errors name. */
  field: string;
  /** As written in langgraph.json, for messages. */
  spec: string;
  file: string;
  exportName: string;
}

export type Warn = (field: string, message: string) => void;

export async function readConfig(path: string): Promise<Record<string, unknown>> {
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
      `expected a JSON object, got ${describeConfigValue(parsed)} in ${path}`,
    );
  }
  return parsed;
}

export async function readGraphEntries(graphs: unknown, projectDir: string): Promise<GraphEntry[]> {
  if (!isRecord(graphs)) {
    throw new InvalidConfigurationError(
      "graphs",
      `expected an object of graph id to "<path>:<export>", got ${describeConfigValue(graphs)}`,
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

export function parseGraphEntry(
  id: string,
  raw: unknown,
  projectDir: string,
  field = `graphs.${id}`,
): GraphEntry {
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
  // The long form `{"path": "...", "description": "..."}` is accepted; assistants carry no description here.
  const spec = isRecord(raw) ? raw.path : raw;
  const colon = typeof spec === "string" ? spec.lastIndexOf(":") : -1;
  if (typeof spec !== "string" || colon <= 0) {
    throw new InvalidConfigurationError(
      field,
      `expected "<path>:<export>", got ${describeConfigValue(raw)}`,
    );
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

export async function checkModuleFile(entry: GraphEntry): Promise<void> {
  const found = await stat(entry.file).catch(() => undefined);
  if (!found?.isFile()) {
    throw new InvalidConfigurationError(
      entry.field,
      `expected a module file, got ${JSON.stringify(entry.spec)}: ${entry.file} ${found ? "is not a file" : "does not exist"}`,
    );
  }
}

/** `env`: variables, or the path of a dotenv file relative to langgraph.json (a missing file is only noted). */
export async function readEnv(
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
      `expected an object of variables or the path of an env file, got ${describeConfigValue(value)}`,
    );
  }
  for (const [name, variable] of Object.entries(value)) {
    if (typeof variable !== "string") {
      throw new InvalidConfigurationError(
        `env.${name}`,
        `expected a string, got ${describeConfigValue(variable)}`,
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

export function applyEnv(
  variables: Record<string, string>,
  target: Record<string, string | undefined>,
) {
  for (const [name, value] of Object.entries(variables)) {
    if (!Object.prototype.hasOwnProperty.call(target, name)) target[name] = value;
  }
}

export function noteIgnoredFields(config: Record<string, unknown>, warn: Warn): void {
  for (const field of Object.keys(config)) {
    if (HANDLED_FIELDS.has(field)) continue;
    const reason = Object.hasOwn(IGNORED_FIELDS, field)
      ? IGNORED_FIELDS[field]
      : "it is not a langgraph.json field this handler knows";
    warn(field, `langgraph.json field "${field}" is ignored: ${reason}`);
  }
}
