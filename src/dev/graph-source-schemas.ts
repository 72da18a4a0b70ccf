import { createRequire } from "node:module";
import { dirname, extname, resolve } from "node:path";
import type * as TypeScript from "typescript";
import type { GraphSchemas, SourceGraphSchemas } from "../runtime/graphs/graph-schemas";

/**
 * JSON schemas of graphs whose types only their TypeScript source tells (graphs built with `Annotation`), found
 * as LangGraph Server finds them: the TypeScript compiler reads each graph's module, and typescript-json-schema
 * writes the schemas of its state, input, output and config types, and of the module-level subgraphs its
 * `addNode` calls add, by namespace. It runs where a TypeScript compiler is installed (the dev server, the image
 * build), never in Lambda: the handler gets the result as data (HandlerOptions.graphSchemas).
 */

/** One graph to read: its id, its module and the export that is the graph (or a function or promise of one). */
export interface GraphSource {
  id: string;
  file: string;
  exportName: string;
}

export interface SourceSchemasResult {
  /** By graph id; a graph nothing could be read of is left out (its schemas stay unknown) and named in `problems`. */
  schemas: Record<string, SourceGraphSchemas>;
  /** What stopped or limited the reading, by graph id (`*`: all of them), for the caller's log. */
  problems: Array<{ graphId: string; message: string }>;
  /** Every file the compiler read (the standard library aside): the result holds while none of them changes. */
  inputs: string[];
}

/** Modules the compiler can read types from; JavaScript ones carry none. */
const TYPESCRIPT_EXTENSIONS = new Set([".ts", ".mts", ".cts", ".tsx"]);

/** Prefix of the names the probe adds to a graph's module, so as not to clash with the module's own. */
const PROBE = "__memory_table_schema";

/** The parts of a graph's schemas, each a helper type of the probe. */
const PARTS = ["state", "input", "output", "config"] as const;

/**
 * Types appended to a graph's module, where its module-level variables are in scope. A graph export may be a
 * builder, a compiled graph, a promise of one or a function returning one. As LangGraph Server describes a JS
 * graph: `state` is the update type of its input channels, `input` the same, `output` the value type of its output
 * channels, `config` the update type of its config channels (none when it declares none). Values are read three
 * levels deep; any list of LangChain messages is `BaseMessage[]` (a reference to BaseMessage's definition) and
 * a value wrapped for overwriting is its plain value.
 */
const PROBE_TYPES = `
type ${PROBE}_Unwrap<T> = T extends (...args: any[]) => infer R ? Awaited<R> : Awaited<T>;
type ${PROBE}_Compiled<T> = ${PROBE}_Unwrap<T> extends infer G ? G extends { compile(...args: any[]): infer C } ? C : G : never;
type ${PROBE}_Builder<T> = ${PROBE}_Compiled<T> extends { builder: infer B } ? B : never;
type ${PROBE}_Message = import("@langchain/core/messages").BaseMessage;
type ${PROBE}_Definition = import("@langchain/langgraph").StateDefinition;
type ${PROBE}_Update<D> = D extends ${PROBE}_Definition ? import("@langchain/langgraph").UpdateType<D> : never;
type ${PROBE}_Values<D> = D extends ${PROBE}_Definition ? import("@langchain/langgraph").StateType<D> : never;
type ${PROBE}_ListOfMessages<V> = V extends readonly (infer E)[] ? (E extends ${PROBE}_Message ? true : never) : never;
type ${PROBE}_AMessage<V> = V extends ${PROBE}_Message ? true : never;
type ${PROBE}_Value<V, D extends 0[]> = 0 extends 1 & V ? V
  : true extends ${PROBE}_ListOfMessages<V> ? ${PROBE}_Message[]
  : true extends ${PROBE}_AMessage<V> ? ${PROBE}_Message
  : ${PROBE}_Shape<V, [0, ...D]>;
type ${PROBE}_Shape<T, D extends 0[] = []> = D["length"] extends 3 ? any
  : { [K in keyof T]: ${PROBE}_Value<Exclude<T[K], { __overwrite__: unknown }>, D> };
type ${PROBE}_Known<T> = 0 extends 1 & T ? never : T;
type ${PROBE}_state<T> = ${PROBE}_Shape<${PROBE}_Known<${PROBE}_Compiled<T> extends { "~InputType": infer S } ? S : never>>;
type ${PROBE}_input<T> = ${PROBE}_Shape<${PROBE}_Known<${PROBE}_Builder<T> extends { _inputDefinition: infer I } ? ${PROBE}_Update<I> : never>>;
type ${PROBE}_output<T> = ${PROBE}_Shape<${PROBE}_Known<${PROBE}_Builder<T> extends { _outputDefinition: infer O } ? ${PROBE}_Values<O> : never>>;
type ${PROBE}_Declared<C> = C extends ${PROBE}_Definition ? string extends keyof C ? never : C : never;
type ${PROBE}_config<T> = ${PROBE}_Shape<${PROBE}_Known<${PROBE}_Builder<T> extends { _configSchema?: infer C } ? ${PROBE}_Update<${PROBE}_Declared<Exclude<C, undefined>>> : never>>;
`;

type Ts = typeof TypeScript;
type SchemaWriter = typeof import("typescript-json-schema");

/** The compiler and the schema writer, or why they cannot be loaded (an install without dev dependencies). */
function loadTools(): { ts: Ts; tjs: SchemaWriter } | string {
  const require = createRequire(__filename);
  try {
    const tjs = require("typescript-json-schema") as SchemaWriter;
    // The writer's own copy of the compiler: it reads the program with that copy's syntax kinds.
    const ts = createRequire(require.resolve("typescript-json-schema"))("typescript") as Ts;
    return { ts, tjs };
  } catch (error) {
    return `TypeScript or typescript-json-schema is not installed (${firstLine(error)}): run npm ci with the dev dependencies`;
  }
}

/** A graph or subgraph whose schemas are asked for: its namespace ("" for the graph) and probe alias. */
interface Probed {
  namespace: string;
  alias: string;
}

/**
 * Reads the JSON schemas of `sources` from their TypeScript. A graph it cannot read is left out, the reason in
 * `problems`. One program serves every graph: each module is read with a probe appended, types that name the
 * export and the module-level variables its `addNode` calls mention (see {@link findSubgraphSites}).
 */
export function extractSourceSchemas(sources: readonly GraphSource[]): SourceSchemasResult {
  const result: SourceSchemasResult = { schemas: {}, problems: [], inputs: [] };
  const readable = sources.filter((source) => {
    if (TYPESCRIPT_EXTENSIONS.has(extname(source.file))) return true;
    result.problems.push({
      graphId: source.id,
      message: `${source.file} is not TypeScript: only the graph's own zod or StateSchema schemas describe it`,
    });
    return false;
  });
  if (readable.length === 0) return result;
  const tools = loadTools();
  if (typeof tools === "string") {
    result.problems.push({ graphId: "*", message: tools });
    return result;
  }
  const { ts, tjs } = tools;
  const options = compilerOptions(ts, dirname(resolve(readable[0]!.file)));
  const host = ts.createCompilerHost(options);

  // Each module's probe: an alias per module-level name a graph may be, and its four schema types.
  const probes = new Map<string, { aliases: Map<string, string>; sites: Map<string, Site[]> }>();
  const roots: Array<{ source: GraphSource; file: string; local: string }> = [];
  for (const source of readable) {
    const file = resolve(source.file);
    const text = host.readFile(file);
    const parsed =
      text === undefined ? undefined : ts.createSourceFile(file, text, options.target!, true);
    const local = parsed && exportedLocalName(ts, parsed, source.exportName);
    if (!parsed || !local) {
      result.problems.push({
        graphId: source.id,
        message: `found no module-level declaration of the export "${source.exportName}" in ${file}`,
      });
      continue;
    }
    const probe = probes.get(file) ?? { aliases: new Map<string, string>(), sites: new Map() };
    probes.set(file, probe);
    const name = (candidate: string) => {
      if (!probe.aliases.has(candidate)) {
        probe.aliases.set(candidate, `${PROBE}_${probes.size}_${probe.aliases.size}`);
      }
    };
    name(local);
    const sites = findSubgraphSites(ts, parsed, local);
    const nameAll = (list: Site[]) =>
      list.forEach((site) =>
        site.candidates.forEach((candidate) => (name(candidate.local), nameAll(candidate.sites))),
      );
    nameAll(sites);
    probe.sites.set(local, sites);
    roots.push({ source, file, local });
  }
  if (roots.length === 0) return result;

  const probedHost: TypeScript.CompilerHost = {
    ...host,
    getSourceFile(fileName, languageVersion, onError, shouldCreate) {
      const probe = probes.get(resolve(fileName));
      if (!probe) return host.getSourceFile(fileName, languageVersion, onError, shouldCreate);
      const lines = [host.readFile(fileName) ?? "", PROBE_TYPES];
      for (const [local, alias] of probe.aliases) {
        lines.push(`type ${alias} = typeof ${local};`);
        for (const part of PARTS) {
          lines.push(`export type ${alias}_${part} = ${PROBE}_${part}<${alias}>;`);
        }
      }
      return ts.createSourceFile(fileName, lines.join("\n"), languageVersion, true);
    },
  };
  const program = ts.createProgram({ rootNames: [...probes.keys()], options, host: probedHost });
  const checker = program.getTypeChecker();
  // The reading's own code is an input too: a new extractor or writer may read the same files differently.
  result.inputs = [
    __filename,
    createRequire(__filename).resolve("typescript-json-schema"),
    ...program
      .getSourceFiles()
      .filter((file) => !program.isSourceFileDefaultLibrary(file))
      .map((file) => file.fileName),
  ];
  // The graph's own type errors do not stop the reading, as on LangGraph Server.
  const writer = tjs.buildGenerator(program, { ignoreErrors: true });
  if (!writer) {
    result.problems.push({ graphId: "*", message: "typescript-json-schema read no program" });
    return result;
  }

  for (const { source, file, local } of roots) {
    const probe = probes.get(file)!;
    const sourceFile = program.getSourceFile(file)!;
    const isGraph = (name: string) => {
      const declaration = moduleLevelDeclaration(ts, sourceFile, name);
      return declaration !== undefined && isGraphType(checker.getTypeAtLocation(declaration));
    };
    const graphs: Probed[] = [{ namespace: "", alias: probe.aliases.get(local)! }];
    const collect = (sites: Site[], namespace: string[]) => {
      for (const site of sites) {
        // The first module-level graph the node's action mentions is the subgraph.
        const chosen = site.candidates.find((candidate) => isGraph(candidate.local));
        if (!chosen) continue;
        const path = [...namespace, site.node];
        const key = path.join("|");
        if (!graphs.some((graph) => graph.namespace === key)) {
          graphs.push({ namespace: key, alias: probe.aliases.get(chosen.local)! });
        }
        collect(chosen.sites, path);
      }
    };
    collect(probe.sites.get(local) ?? [], []);
    const entry: SourceGraphSchemas = { graph: {}, subgraphs: {} };
    for (const graph of graphs) {
      const schemas: GraphSchemas = {};
      for (const part of PARTS) {
        try {
          const schema = writer.getSchemaForSymbol(`${graph.alias}_${part}`);
          if (isDescribed(schema)) schemas[part] = withPlainDefinitionNames(schema);
        } catch (error) {
          // `never`: the graph has no such part (no config schema declared).
          if (/Unsupported type: never/.test(firstLine(error))) continue;
          result.problems.push({
            graphId: source.id,
            message: `no ${part} schema for ${graph.namespace || "the graph"}: ${firstLine(error)}`,
          });
        }
      }
      if (graph.namespace === "") entry.graph = schemas;
      else entry.subgraphs[graph.namespace] = schemas;
    }
    result.schemas[source.id] = entry;
  }
  return result;
}

/**
 * The project's compiler options (the tsconfig.json nearest the first graph), made strict as LangGraph Server
 * makes them: without strictNullChecks `string | null` would read as `string`. Libraries are not type checked (it
 * only costs time) and nothing is emitted.
 */
function compilerOptions(ts: Ts, directory: string): TypeScript.CompilerOptions {
  let options: TypeScript.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    esModuleInterop: true,
  };
  const configPath = ts.findConfigFile(directory, ts.sys.fileExists, "tsconfig.json");
  if (configPath) {
    const read = ts.readConfigFile(configPath, ts.sys.readFile);
    if (!read.error) {
      options = ts.parseJsonConfigFileContent(read.config, ts.sys, dirname(configPath)).options;
    }
  }
  return {
    ...options,
    target: options.target ?? ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    declaration: false,
  };
}

/** A module-level variable, function or class declaration of `name`, where the probe can name it. */
function moduleLevelDeclaration(
  ts: Ts,
  sourceFile: TypeScript.SourceFile,
  name: string,
): TypeScript.Declaration | undefined {
  for (const statement of sourceFile.statements) {
    if (ts.isVariableStatement(statement)) {
      const found = statement.declarationList.declarations.find(
        (declaration) => ts.isIdentifier(declaration.name) && declaration.name.text === name,
      );
      if (found) return found;
    } else if (
      (ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)) &&
      statement.name?.text === name
    ) {
      return statement;
    }
  }
  return undefined;
}

function hasExportModifier(ts: Ts, node: TypeScript.Node): boolean {
  return (
    ts.canHaveModifiers(node) &&
    (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
  );
}

/**
 * The module-level name an export is declared under: `export const graph`, `export function graph`,
 * `export { built as graph }`, `export default graph`. An export of an expression (`export default x.compile()`)
 * or of another module has none the probe could name.
 */
function exportedLocalName(
  ts: Ts,
  sourceFile: TypeScript.SourceFile,
  exportName: string,
): string | undefined {
  for (const statement of sourceFile.statements) {
    if (ts.isVariableStatement(statement) && hasExportModifier(ts, statement)) {
      const declared = statement.declarationList.declarations.some(
        (d) => ts.isIdentifier(d.name) && d.name.text === exportName,
      );
      if (declared) return exportName;
    } else if (
      (ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)) &&
      hasExportModifier(ts, statement) &&
      statement.name
    ) {
      const isDefault = (ts.getModifiers(statement) ?? []).some(
        (m) => m.kind === ts.SyntaxKind.DefaultKeyword,
      );
      if ((isDefault ? "default" : statement.name.text) === exportName) return statement.name.text;
    } else if (ts.isExportDeclaration(statement) && !statement.moduleSpecifier) {
      const clause = statement.exportClause;
      if (clause && ts.isNamedExports(clause)) {
        const element = clause.elements.find((e) => e.name.text === exportName);
        const local = element && (element.propertyName ?? element.name).text;
        if (local && moduleLevelDeclaration(ts, sourceFile, local)) return local;
      }
    } else if (
      ts.isExportAssignment(statement) &&
      !statement.isExportEquals &&
      exportName === "default" &&
      ts.isIdentifier(statement.expression) &&
      moduleLevelDeclaration(ts, sourceFile, statement.expression.text)
    ) {
      return statement.expression.text;
    }
  }
  return undefined;
}

/** A graph builder or a compiled graph, by what its type offers. */
function isGraphType(type: TypeScript.Type): boolean {
  const has = (name: string) => type.getProperty(name) !== undefined;
  return (has("compile") && has("addNode")) || (has("lg_is_pregel") && has("invoke"));
}

/**
 * An `addNode("<node>", action)` call: the module-level names its action reads, each with the calls that build
 * it in turn. Which of them is a graph only the compiler can tell (extractSourceSchemas asks it).
 */
interface Site {
  node: string;
  candidates: Array<{ local: string; sites: Site[] }>;
}

/**
 * Where a module-level graph adds subgraphs, read from the syntax alone: the `addNode` calls in its declaration
 * and in the module-level statements that start with its name (`builder.addNode(...)`), and those of every
 * module-level name it is built from (`graph = builder.compile()`), as far as they go.
 */
function findSubgraphSites(ts: Ts, sourceFile: TypeScript.SourceFile, root: string): Site[] {
  const moduleNames = new Set<string>();
  for (const statement of sourceFile.statements) {
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (ts.isIdentifier(declaration.name)) moduleNames.add(declaration.name.text);
      }
    } else if (ts.isFunctionDeclaration(statement) && statement.name) {
      moduleNames.add(statement.name.text);
    }
  }
  /** Module-level names an expression reads, not property names (`compile` of `sub.compile()`). */
  const readNames = (node: TypeScript.Node, into: string[] = []): string[] => {
    if (ts.isIdentifier(node)) {
      if (moduleNames.has(node.text) && !into.includes(node.text)) into.push(node.text);
    } else if (ts.isPropertyAccessExpression(node)) {
      readNames(node.expression, into);
    } else {
      ts.forEachChild(node, (child) => void readNames(child, into));
    }
    return into;
  };
  const buildingNodes = (name: string): TypeScript.Node[] => {
    const declaration = moduleLevelDeclaration(ts, sourceFile, name);
    const statements = sourceFile.statements.filter((statement) => {
      if (!ts.isExpressionStatement(statement)) return false;
      let head: TypeScript.Expression = statement.expression;
      while (ts.isCallExpression(head) || ts.isPropertyAccessExpression(head)) {
        head = head.expression;
      }
      return ts.isIdentifier(head) && head.text === name;
    });
    return declaration ? [declaration, ...statements] : statements;
  };
  const sitesOf = (name: string, seen: ReadonlySet<string>): Site[] => {
    if (seen.has(name) || seen.size > 16) return [];
    const chain = new Set([...seen, name]);
    const sites: Site[] = [];
    const walk = (node: TypeScript.Node): void => {
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
        const [nodeName, action] = node.arguments;
        if (node.expression.name.text === "addNode" && nodeName && action) {
          if (ts.isStringLiteralLike(nodeName)) {
            sites.push({
              node: nodeName.text,
              candidates: readNames(action)
                .filter((local) => !chain.has(local))
                .map((local) => ({ local, sites: sitesOf(local, chain) })),
            });
          }
          walk(node.expression.expression);
          return;
        }
      }
      // Built from another module-level graph (`graph = builder.compile()`): what that one adds, it adds.
      if (ts.isIdentifier(node) && moduleNames.has(node.text) && !chain.has(node.text)) {
        sites.push(...sitesOf(node.text, chain));
        return;
      }
      ts.forEachChild(node, walk);
    };
    for (const node of buildingNodes(name)) {
      // A declaration's own name is not a use of it.
      if (ts.isVariableDeclaration(node)) {
        if (node.initializer) walk(node.initializer);
      } else walk(node);
    }
    return sites;
  };
  return sitesOf(root, new Set());
}

/** A schema with something in it: the writer's answer for `never` (a part the graph lacks) is left out. */
function isDescribed(schema: unknown): schema is Record<string, unknown> {
  if (typeof schema !== "object" || schema === null) return false;
  const { $schema: _, ...rest } = schema as Record<string, unknown>;
  return Object.keys(rest).length > 0 && !("not" in rest && Object.keys(rest).length === 1);
}

/**
 * References as LangGraph Server writes them: plain definition names (the writer percent-encodes them), and a type
 * of a package named `Name` rather than `import("/abs/path/...").Name` (unless that name is taken), so the schema
 * reads the same on every machine and in CommonJS and ES modules alike.
 */
function withPlainDefinitionNames(schema: Record<string, unknown>): Record<string, unknown> {
  const definitions = (schema.definitions ?? {}) as Record<string, unknown>;
  const renamed = new Map<string, string>();
  for (const name of Object.keys(definitions)) {
    // `import("/abs/path")`, or in an ES module `import("/abs/path",{with:{"resolution-mode":"import"}})`.
    const plain = name.replace(/import\("[^"]*"(?:,[^)]*)?\)\./g, "");
    if (plain !== name && !(plain in definitions) && ![...renamed.values()].includes(plain)) {
      renamed.set(name, plain);
    }
  }
  const text = JSON.stringify(schema, (key, value: unknown) => {
    // Symbol-keyed members (`[Symbol.toStringTag]`, named `__@toStringTag@<id>`) are never JSON data.
    if (key.startsWith("__@")) return undefined;
    if (key === "$ref" && typeof value === "string" && value.startsWith(DEFINITIONS)) {
      const name = decodeURIComponent(value.slice(DEFINITIONS.length));
      return DEFINITIONS + (renamed.get(name) ?? name);
    }
    return value;
  });
  const result = JSON.parse(text) as Record<string, unknown>;
  if (result.definitions) {
    result.definitions = Object.fromEntries(
      Object.entries(result.definitions as Record<string, unknown>).map(([name, definition]) => [
        renamed.get(name) ?? name,
        definition,
      ]),
    );
  }
  return result;
}

const DEFINITIONS = "#/definitions/";

function firstLine(error: unknown): string {
  return String((error as Error)?.message ?? error).split("\n")[0]!;
}
