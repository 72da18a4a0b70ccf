import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, extname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { InvalidConfigurationError } from "../../shared/errors";
import { describeConfigValue, describeError, errorCode, property } from "./config-values";
import { isBuildable } from "./graph-factory";
import { LOADER_EXTENSIONS, type GraphEntry } from "./langgraph-json";

/** A langgraph.json graph entry's module, imported (TypeScript through the project's tsx), and its export. */

export async function importGraphModule(entry: GraphEntry, projectDir: string): Promise<unknown> {
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
 * CLI runs its server so): its ES module hooks and its CommonJS ones. A `.ts` file of a project without
 * `"type": "module"` is CommonJS, and its extensionless imports of sibling TypeScript files (`import { tools }
 * from "./tools"`) are `require` calls only the CommonJS hooks resolve. A namespaced `tsImport` would load every
 * package a graph imports a second time. Without tsx nothing is registered: a loader the process already runs
 * under (or Node's type stripping) may still load the graph, and otherwise the import fails with
 * ERR_UNKNOWN_FILE_EXTENSION.
 */
function registerTypeScriptLoader(projectDir: string): Promise<void> {
  typeScriptLoader ??= (async () => {
    const esm = resolveTsxApi(projectDir, "./esm/api");
    const cjs = resolveTsxApi(projectDir, "./cjs/api");
    if (esm === undefined) return;
    if (cjs !== undefined) {
      const { register } = (await import(pathToFileURL(cjs).href)) as { register: () => unknown };
      register();
    }
    const { register } = (await import(pathToFileURL(esm).href)) as { register: () => unknown };
    register();
  })();
  return typeScriptLoader;
}

/**
 * The ES module build of a tsx API (`./esm/api`, `./cjs/api`), found from the project's directory. Resolved
 * through tsx's exports map by hand: `require.resolve` picks its CommonJS build, which registers its hooks from
 * the wrong path on Node 20.
 */
function resolveTsxApi(projectDir: string, subpath: string): string | undefined {
  let manifestPath: string;
  try {
    manifestPath = createRequire(join(projectDir, "langgraph.json")).resolve("tsx/package.json");
  } catch {
    return undefined;
  }
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as {
    exports?: Record<string, { import?: string | { default?: string } }>;
  };
  const target = manifest.exports?.[subpath]?.import;
  const file = typeof target === "string" ? target : target?.default;
  return file === undefined ? undefined : resolve(dirname(manifestPath), file);
}

export function readExport(loaded: unknown, entry: GraphEntry): unknown {
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

function exportNames(loaded: unknown): string {
  if ((typeof loaded !== "object" && typeof loaded !== "function") || loaded === null) {
    return describeConfigValue(loaded);
  }
  const names = Object.keys(loaded).filter((name) => name !== "__esModule");
  return names.length === 0 ? "{}" : `{${names.join(", ")}}`;
}
