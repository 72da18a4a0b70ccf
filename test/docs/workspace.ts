import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import type { Snippet } from "./markdown";

/**
 * Where the documentation's TypeScript blocks are written and run: a folder outside the repository whose
 * `node_modules` is the repository's, and whose tsconfig maps `memory-table` and its subpaths to the source files
 * behind package.json's `exports`, so a block imports the package exactly as a reader's project does. Each page
 * has a folder of its own, where its `file:` blocks live beside its runnable blocks.
 */
export interface Workspace {
  root: string;
  tsconfig: string;
  /** The folder of a page's blocks. */
  pageDirectory(page: string): string;
  /** Writes a block where it runs (a `file:` block at its path); returns the file's absolute path. */
  write(snippet: Snippet, code: string): string;
  /** The block a written file holds. */
  snippetOf(file: string): Snippet | undefined;
}

export function createWorkspace(repositoryRoot: string): Workspace {
  const root = mkdtempSync(join(tmpdir(), "memory-table-docs-"));
  symlinkSync(join(repositoryRoot, "node_modules"), join(root, "node_modules"), "dir");
  // ES modules, as a reader's project: blocks use top-level await.
  writeFileSync(join(root, "package.json"), `${JSON.stringify({ type: "module" }, null, 2)}\n`);
  const tsconfig = join(root, "tsconfig.json");
  writeFileSync(
    tsconfig,
    `${JSON.stringify(
      {
        compilerOptions: {
          target: "ES2022",
          lib: ["ES2023", "DOM"],
          module: "ESNext",
          moduleResolution: "Bundler",
          strict: true,
          esModuleInterop: true,
          skipLibCheck: true,
          resolveJsonModule: true,
          noEmit: true,
          types: ["node"],
          paths: packagePaths(repositoryRoot),
        },
        include: ["**/*.ts"],
        exclude: ["node_modules"],
      },
      null,
      2,
    )}\n`,
  );
  const written = new Map<string, Snippet>();
  const pageDirectory = (page: string) => join(root, page.replace(/[^A-Za-z0-9]+/g, "-"));
  return {
    root,
    tsconfig,
    pageDirectory,
    write(snippet, code) {
      const name = snippet.file ?? `block-line-${snippet.line}.ts`;
      const file = join(pageDirectory(snippet.page), name);
      if (relative(pageDirectory(snippet.page), file).startsWith("..")) {
        throw new Error(`${snippet.page}:${snippet.line}: file ${name} leaves the page's folder`);
      }
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, code);
      written.set(file, snippet);
      return file;
    },
    snippetOf: (file) => written.get(file),
  };
}

/** `memory-table` and each subpath of package.json's `exports`, mapped to the TypeScript source behind it. */
function packagePaths(repositoryRoot: string): Record<string, string[]> {
  const manifest = JSON.parse(readFileSync(join(repositoryRoot, "package.json"), "utf8")) as {
    name: string;
    exports: Record<string, string | { default?: string }>;
  };
  const paths: Record<string, string[]> = {};
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    const built = typeof target === "string" ? target : target.default;
    if (!built?.startsWith("./dist/src/") || !built.endsWith(".js")) continue;
    const source = join(repositoryRoot, built.replace(/^\.\/dist\//, "").replace(/\.js$/, ".ts"));
    paths[`${manifest.name}${subpath.slice(1)}`] = [source];
  }
  return paths;
}
