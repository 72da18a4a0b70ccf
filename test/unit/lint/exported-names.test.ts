import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "typescript";

// One name, one concept: no two modules of the library (or of the image and the Terraform module) declare an
// export with the same name, so an import never picks the wrong one and a reader never has to ask which.
const ROOT = resolve(__dirname, "../../..");
/** Names an outside contract fixes: Lambda calls every image entry's `handler` (CMD `<file>.handler`). */
const CONTRACT_NAMES = new Set(["handler"]);

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") && !path.endsWith(".d.ts") ? [path] : [];
  });
}

/** Names a file declares and exports itself (re-exports of other files' names are not declarations). */
function declaredExports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest);
  const names: string[] = [];
  for (const statement of source.statements) {
    const exported = ts.canHaveModifiers(statement)
      ? ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
      : false;
    if (!exported) continue;
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (ts.isIdentifier(declaration.name)) names.push(declaration.name.text);
      }
    } else if (
      (ts.isFunctionDeclaration(statement) ||
        ts.isClassDeclaration(statement) ||
        ts.isInterfaceDeclaration(statement) ||
        ts.isTypeAliasDeclaration(statement) ||
        ts.isEnumDeclaration(statement)) &&
      statement.name
    ) {
      names.push(statement.name.text);
    }
  }
  // A value and a type of the same name in one file are one concept (`const X` with `type X`).
  return [...new Set(names)];
}

describe("exported names", () => {
  it("are declared by exactly one module across src, image and modules", () => {
    const owners = new Map<string, string[]>();
    for (const directory of ["src", "image", "modules"]) {
      for (const file of sourceFiles(join(ROOT, directory))) {
        for (const name of declaredExports(file)) {
          owners.set(name, [...(owners.get(name) ?? []), relative(ROOT, file)]);
        }
      }
    }
    const shared = [...owners].filter(
      ([name, files]) => files.length > 1 && !CONTRACT_NAMES.has(name),
    );
    expect(Object.fromEntries(shared)).toEqual({});
    // The scan saw the library: a broken scan would pass vacuously.
    expect(owners.get("DynamoDBSaver")).toEqual(["src/checkpoint/dynamodb/saver.ts"]);
  });
});
