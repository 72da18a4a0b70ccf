import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { isAbsolute, resolve } from "node:path";
import { InvalidConfigurationError } from "../src/shared/errors";
import { ENVIRONMENT } from "../src/runtime/environment";
import { assertPathIdentifier } from "../src/shared/identifiers";
import type { GraphFactory } from "../src/runtime/types";
import { checkLangGraphAuth, type LangGraphAuth } from "../src/runtime/auth/langgraph-auth";

/**
 * Loads the app team's graph named by GRAPH_MODULE: a file path, absolute or relative to the task root.
 * The module (CommonJS, or ESM without top-level await) exports either
 *   - a GraphFactory as its default export (`module.exports = factory` too), served as the assistant `agent`, or
 *   - `assistants`: a map of assistant id to GraphFactory (named export, or a property of the default export).
 * It may also export `auth`, LangGraph's `Auth` (the one langgraph.json's `auth.path` names in development, bundled
 * with the graphs): the handler applies it inside each tenant.
 * Loading is synchronous so that a bad module fails the container's init, not its first request.
 */
export type GraphModuleExports = (
  | { assistants: Record<string, GraphFactory>; graph?: undefined }
  | { graph: GraphFactory; assistants?: undefined }
) & { auth?: LangGraphAuth };

const VARIABLE = ENVIRONMENT.graphModule;

export function loadGraphModule(specifier: string, taskRoot: string): GraphModuleExports {
  const path = isAbsolute(specifier) ? specifier : resolve(taskRoot, specifier);
  if (!existsSync(path)) {
    throw new InvalidConfigurationError(
      VARIABLE,
      `expected a module file (absolute, or relative to ${taskRoot}), got ${JSON.stringify(specifier)}: ${path} does not exist`,
    );
  }
  let loaded: unknown;
  try {
    // createRequire: the bundle has no module tree of its own, so resolve from the graph module's location.
    loaded = createRequire(path)(path);
  } catch (error) {
    throw new InvalidConfigurationError(
      VARIABLE,
      `expected a module that loads, got ${JSON.stringify(specifier)}, which threw ${describe(error)}`,
      { cause: error },
    );
  }
  return readExports(loaded, specifier);
}

function readExports(loaded: unknown, specifier: string): GraphModuleExports {
  const graphs = readGraphExports(loaded, specifier);
  const auth = property(loaded, "auth") ?? property(property(loaded, "default"), "auth");
  if (auth === undefined) return graphs;
  return { ...graphs, auth: checkLangGraphAuth(auth, `${VARIABLE} export auth`) };
}

function readGraphExports(loaded: unknown, specifier: string): GraphModuleExports {
  for (const candidate of [loaded, property(loaded, "default")]) {
    const assistants = property(candidate, "assistants");
    if (assistants !== undefined) return { assistants: checkAssistantMap(assistants, specifier) };
  }
  const factory = typeof loaded === "function" ? loaded : property(loaded, "default");
  if (typeof factory === "function") return { graph: factory as GraphFactory };
  throw new InvalidConfigurationError(
    VARIABLE,
    `expected ${JSON.stringify(specifier)} to export a GraphFactory (default export) or an \`assistants\` map, got exports ${describeExports(loaded)}`,
  );
}

function checkAssistantMap(value: unknown, specifier: string): Record<string, GraphFactory> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidConfigurationError(
      VARIABLE,
      `expected \`assistants\` of ${JSON.stringify(specifier)} to be an object of GraphFactory functions, got ${describe(value)}`,
    );
  }
  const entries = Object.entries(value);
  if (entries.length === 0) {
    throw new InvalidConfigurationError(
      VARIABLE,
      `expected \`assistants\` of ${JSON.stringify(specifier)} to name at least one assistant, got {}`,
    );
  }
  for (const [id, factory] of entries) {
    try {
      assertPathIdentifier("assistant id", id);
    } catch (error) {
      throw new InvalidConfigurationError(
        VARIABLE,
        `expected assistant ids of ${JSON.stringify(specifier)} to be identifiers, got ${JSON.stringify(id)} (${describe(error)})`,
        { cause: error },
      );
    }
    if (typeof factory !== "function") {
      throw new InvalidConfigurationError(
        VARIABLE,
        `expected assistants[${JSON.stringify(id)}] of ${JSON.stringify(specifier)} to be a GraphFactory function, got ${describe(factory)}`,
      );
    }
  }
  return value as Record<string, GraphFactory>;
}

function property(value: unknown, key: string): unknown {
  return (typeof value === "object" || typeof value === "function") && value !== null
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

function describeExports(value: unknown): string {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) {
    return describe(value);
  }
  const keys = Object.keys(value).filter((key) => key !== "__esModule");
  return keys.length === 0 ? "{}" : `{${keys.join(", ")}}`;
}

function describe(value: unknown): string {
  // Duck-typed: an error thrown while loading may come from another realm (not `instanceof Error` here).
  const name = property(value, "name");
  const message = property(value, "message");
  if (typeof name === "string" && typeof message === "string") return `${name}: ${message}`;
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "string" ? JSON.stringify(value) : typeof value;
}
