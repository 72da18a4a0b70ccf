import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import ts from "typescript";
import {
  DYNAMODB_AUTHORIZER_ACTIONS,
  DYNAMODB_CLEANER_ACTIONS,
  DYNAMODB_ITEM_ACTIONS,
} from "../../src/table/iam-actions";
import { ROUTE_HANDLERS } from "../../src/runtime/handler";
import { ROUTES } from "../../src/runtime/http/routes";

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

describe("the runtime's contracts with the infrastructure", () => {
  it("serves exactly the routes the Terraform module creates (ROUTES)", () => {
    expect(Object.keys(ROUTE_HANDLERS).sort()).toEqual(
      ROUTES.map((route) => `${route.method} ${route.path}`).sort(),
    );
  });

  it("sends, from anywhere in src/ and image/, only DynamoDB commands the module can grant", () => {
    const used = new Set<string>();
    // src/dev is the local development server (never built into the package or the image): it creates tables.
    const shipped = sourceFiles(join(ROOT, "src")).filter(
      (file) => !file.startsWith(join(ROOT, "src", "dev")),
    );
    for (const file of [...shipped, ...sourceFiles(join(ROOT, "image"))]) {
      const module = parseModule(file);
      // Clients that send without a command class (DynamoDBDocument's methods, paginators) would hide actions.
      expect({ file, bypass: module.bypasses }).toEqual({ file, bypass: [] });
      for (const command of module.constructedCommands) used.add(toAction(command));
    }
    expect([...used].sort()).toEqual([...DYNAMODB_ITEM_ACTIONS].sort());
  });

  it("grants the API function exactly what its code (image/index.ts handler) sends", () => {
    expect(actionsReachableFrom(join(ROOT, "image/index.ts"), "handler")).toEqual(
      [...DYNAMODB_ITEM_ACTIONS].sort(),
    );
  });

  it("grants the authorizer exactly what its code (image/authorizer.ts handler) sends", () => {
    expect(actionsReachableFrom(join(ROOT, "image/authorizer.ts"), "handler")).toEqual(
      [...DYNAMODB_AUTHORIZER_ACTIONS].sort(),
    );
  });

  it("grants the cleaner exactly what its code (image/cleaner.ts handler) sends", () => {
    expect(actionsReachableFrom(join(ROOT, "image/cleaner.ts"), "handler")).toEqual(
      [...DYNAMODB_CLEANER_ACTIONS].sort(),
    );
  });
});

/*
 * A small static import graph, symbol by symbol: from an exported function, follow the top-level declarations
 * it references in its own file and the named imports into other files, and collect the DynamoDB command
 * classes it constructs. Symbol level, not file level: the cleaner imports helpers from files whose other
 * functions send commands the cleaner never sends.
 */

const ROOT = resolve(__dirname, "../..");
const SDK_MODULES = new Set(["@aws-sdk/lib-dynamodb", "@aws-sdk/client-dynamodb"]);

/** Document-client commands map to their item actions (Get -> GetItem, BatchWrite -> BatchWriteItem, ...). */
function toAction(command: string): string {
  const base = command.replace(/Command$/, "");
  const documentClient: Record<string, string> = {
    Get: "GetItem",
    Put: "PutItem",
    Update: "UpdateItem",
    Delete: "DeleteItem",
    BatchGet: "BatchGetItem",
    BatchWrite: "BatchWriteItem",
    TransactGet: "TransactGetItems",
    TransactWrite: "TransactWriteItems",
  };
  return `dynamodb:${documentClient[base] ?? base}`;
}

interface ParsedModule {
  /** Top-level runtime declarations by name. */
  declarations: Map<string, ts.Node>;
  /** Top-level statements that run on import. */
  sideEffects: ts.Node[];
  /** Local name -> where it comes from (`*` for a namespace import). */
  imports: Map<string, { file: string; name: string }>;
  /** `export { a as b } from "./x"` and `export * from "./x"`. */
  reexports: Map<string, { file: string; name: string }>;
  starExports: string[];
  /** Local names of the DynamoDB command classes imported from the SDK. */
  sdkCommands: Set<string>;
  /** Every `new <SdkCommand>(` in the file. */
  constructedCommands: string[];
  bypasses: string[];
}

const parsed = new Map<string, ParsedModule>();

function resolveImport(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  // An ECMAScript import names the compiled file (`./x.js`); its source is `./x.ts`.
  const base = resolve(dirname(from), specifier.replace(/\.js$/, ""));
  return [`${base}.ts`, join(base, "index.ts")].find((candidate) => existsSync(candidate));
}

function parseModule(file: string): ParsedModule {
  const cached = parsed.get(file);
  if (cached) return cached;
  const source = ts.createSourceFile(
    file,
    readFileSync(file, "utf8"),
    ts.ScriptTarget.Latest,
    true,
  );
  const module: ParsedModule = {
    declarations: new Map(),
    sideEffects: [],
    imports: new Map(),
    reexports: new Map(),
    starExports: [],
    sdkCommands: new Set(),
    constructedCommands: [],
    bypasses: [],
  };
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      const specifier = (statement.moduleSpecifier as ts.StringLiteral).text;
      const clause = statement.importClause;
      if (!clause || clause.isTypeOnly) continue;
      const bindings = clause.namedBindings;
      if (SDK_MODULES.has(specifier)) {
        if (bindings && ts.isNamedImports(bindings)) {
          for (const element of bindings.elements) {
            if (element.isTypeOnly) continue;
            const imported = (element.propertyName ?? element.name).text;
            if (imported.endsWith("Command")) module.sdkCommands.add(element.name.text);
            if (imported === "DynamoDBDocument" || imported.startsWith("paginate"))
              module.bypasses.push(imported);
          }
        } else module.bypasses.push(`${specifier} imported whole`);
        continue;
      }
      const target = resolveImport(file, specifier);
      if (!target) continue;
      if (clause.name) module.imports.set(clause.name.text, { file: target, name: "default" });
      if (bindings && ts.isNamespaceImport(bindings))
        module.imports.set(bindings.name.text, { file: target, name: "*" });
      if (bindings && ts.isNamedImports(bindings)) {
        for (const element of bindings.elements) {
          if (element.isTypeOnly) continue;
          const imported = (element.propertyName ?? element.name).text;
          module.imports.set(element.name.text, { file: target, name: imported });
        }
      }
    } else if (ts.isExportDeclaration(statement)) {
      const specifier = statement.moduleSpecifier;
      const target =
        specifier && ts.isStringLiteral(specifier)
          ? resolveImport(file, specifier.text)
          : undefined;
      if (!target || statement.isTypeOnly) continue;
      const clause = statement.exportClause;
      if (!clause) module.starExports.push(target);
      else if (ts.isNamedExports(clause)) {
        for (const element of clause.elements) {
          const imported = (element.propertyName ?? element.name).text;
          module.reexports.set(element.name.text, { file: target, name: imported });
        }
      }
    } else if (
      (ts.isFunctionDeclaration(statement) ||
        ts.isClassDeclaration(statement) ||
        ts.isEnumDeclaration(statement)) &&
      statement.name
    ) {
      module.declarations.set(statement.name.text, statement);
    } else if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        for (const name of bindingNames(declaration.name))
          module.declarations.set(name, declaration);
      }
    } else if (ts.isExportAssignment(statement)) {
      module.declarations.set("default", statement);
    } else if (!ts.isInterfaceDeclaration(statement) && !ts.isTypeAliasDeclaration(statement)) {
      module.sideEffects.push(statement);
    }
  }
  const visit = (node: ts.Node): void => {
    if (
      ts.isNewExpression(node) &&
      ts.isIdentifier(node.expression) &&
      module.sdkCommands.has(node.expression.text)
    )
      module.constructedCommands.push(node.expression.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  parsed.set(file, module);
  return module;
}

function bindingNames(name: ts.BindingName): string[] {
  if (ts.isIdentifier(name)) return [name.text];
  return name.elements.flatMap((element) =>
    ts.isOmittedExpression(element) ? [] : bindingNames(element.name),
  );
}

function actionsReachableFrom(entryFile: string, entrySymbol: string): string[] {
  const visited = new Set<string>();
  const loaded = new Set<string>();
  const actions = new Set<string>();

  const reach = (file: string, name: string): void => {
    const key = `${file}#${name}`;
    if (visited.has(key)) return;
    visited.add(key);
    const module = parseModule(file);
    if (!loaded.has(file)) {
      loaded.add(file);
      for (const statement of module.sideEffects) walk(file, module, statement);
    }
    if (name === "*") {
      for (const declared of module.declarations.keys()) reach(file, declared);
      for (const exported of module.reexports.keys()) reach(file, exported);
      for (const star of module.starExports) reach(star, "*");
      return;
    }
    const declaration = module.declarations.get(name);
    if (declaration) return walk(file, module, declaration);
    const reexport = module.reexports.get(name) ?? module.imports.get(name);
    if (reexport) return reach(reexport.file, reexport.name);
    for (const star of module.starExports) reach(star, name);
  };

  const walk = (file: string, module: ParsedModule, root: ts.Node): void => {
    const visit = (node: ts.Node): void => {
      const onDemand = onDemandSpecifier(node);
      const onDemandFile = onDemand === undefined ? undefined : resolveImport(file, onDemand);
      if (onDemandFile) reach(onDemandFile, "*");
      if (ts.isIdentifier(node) && !isPropertyName(node)) {
        const name = node.text;
        if (
          module.sdkCommands.has(name) &&
          ts.isNewExpression(node.parent) &&
          node.parent.expression === node
        )
          actions.add(toAction(name));
        else if (module.declarations.has(name)) reach(file, name);
        else if (module.imports.has(name)) {
          const imported = module.imports.get(name)!;
          reach(imported.file, imported.name);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(root);
  };

  reach(entryFile, entrySymbol);
  return [...actions].sort();
}

/** `require("./x")` or `import("./x")` where code runs: a module loaded on demand, which counts whole. */
function onDemandSpecifier(node: ts.Node): string | undefined {
  if (!ts.isCallExpression(node)) return undefined;
  const loads =
    node.expression.kind === ts.SyntaxKind.ImportKeyword ||
    (ts.isIdentifier(node.expression) && node.expression.text === "require");
  const [specifier] = node.arguments;
  return loads && specifier && ts.isStringLiteral(specifier) ? specifier.text : undefined;
}

/** `x.name` and `{ name: ... }`: a property, not a reference to a declaration called `name`. */
function isPropertyName(node: ts.Identifier): boolean {
  const parent = node.parent;
  return (
    (ts.isPropertyAccessExpression(parent) && parent.name === node) ||
    (ts.isPropertyAssignment(parent) && parent.name === node) ||
    (ts.isMethodDeclaration(parent) && parent.name === node) ||
    (ts.isPropertyDeclaration(parent) && parent.name === node)
  );
}
