import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { promisify } from "node:util";

// The layer rules of .dependency-cruiser.cjs (also run by `npm run lint`), checked with dependency-cruiser itself.
const ROOT = resolve(__dirname, "../../..");
const CONFIG = join(ROOT, ".dependency-cruiser.cjs");
const DEPCRUISE = join(ROOT, "node_modules/dependency-cruiser/bin/dependency-cruiser.mjs");

async function cruise(cwd: string, paths: string[]): Promise<{ code: number; output: string }> {
  try {
    // The Node running the tests (dependency-cruiser needs Node 22 or newer, as the project does).
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [DEPCRUISE, "--config", CONFIG, "--output-type", "err", ...paths],
      { cwd, timeout: 60_000 },
    );
    return { code: 0, output: stdout };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failure.code ?? 1, output: `${failure.stdout ?? ""}${failure.stderr ?? ""}` };
  }
}

/** A throwaway tree with the project's folder names, holding the given files. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "memory-table-layers-"));
  writeFileSync(
    join(root, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { module: "node16", moduleResolution: "node16" } }),
  );
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), source);
  }
  return root;
}

describe("layers import one way (dependency-cruiser)", () => {
  it("holds for the whole tree: src, image, modules, scripts and bench", async () => {
    const result = await cruise(ROOT, ["src", "image", "modules", "scripts", "bench"]);
    expect(result.output).not.toMatch(/error/);
    expect(result.code).toBe(0);
  });

  // One throwaway tree holds every deliberate violation, so dependency-cruiser runs once for all of them.
  const VIOLATIONS = [
    [
      "the table layer importing the runtime",
      "src/table/keys.ts",
      "src/runtime/handler.ts",
      "table-imports-only-shared",
    ],
    [
      "shared code importing the table layer",
      "src/shared/errors.ts",
      "src/table/definition.ts",
      "shared-imports-only-itself",
    ],
    [
      "the runtime importing a saver's internals",
      "src/runtime/graphs/engine.ts",
      "src/checkpoint/dynamodb/saver.ts",
      "runtime-uses-saver-entry-points",
    ],
    [
      "the library importing the dev server",
      "src/runtime/handler.ts",
      "src/dev/server.ts",
      "library-imports-no-application",
    ],
    [
      "the in-memory saver importing the DynamoDB saver",
      "src/checkpoint/memory/index.ts",
      "src/checkpoint/dynamodb/index.ts",
      "savers-are-independent",
    ],
    [
      "the runtime's graphs importing the run machinery",
      "src/runtime/graphs/graph-leg.ts",
      "src/runtime/runs/recent-runs.ts",
      "runtime-graphs-import-no-runs-or-http",
    ],
    [
      "the run machinery importing an HTTP face",
      "src/runtime/runs/webhooks.ts",
      "src/runtime/http/routes.ts",
      "runtime-runs-import-no-http",
    ],
    [
      "a runtime room importing what composes it",
      "src/runtime/http/sse.ts",
      "src/runtime/assembly.ts",
      "runtime-rooms-import-no-composition",
    ],
    ["an import cycle", "src/table/a.ts", "src/table/b.ts", "no-circular"],
  ] as const;
  let probe: { code: number; output: string };

  beforeAll(async () => {
    const files: Record<string, string> = {};
    const source = (from: string, to: string) => {
      const specifier = relative(dirname(from), to).replace(/\.ts$/, "");
      return `import { x } from "${specifier.startsWith(".") ? specifier : `./${specifier}`}";\n`;
    };
    for (const [, from, to] of VIOLATIONS) {
      files[from] = `${files[from] ?? ""}${source(from, to)}`;
      files[to] ??= "";
    }
    // The cycle's way back.
    files["src/table/b.ts"] += source("src/table/b.ts", "src/table/a.ts");
    for (const path of Object.keys(files)) files[path] += "export const x = 1;\n";
    const root = tree(files);
    try {
      probe = await cruise(root, ["src"]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);

  it.each(VIOLATIONS)("reports %s", (_case, from, to, rule) => {
    expect(probe.code).not.toBe(0);
    // dependency-cruiser's err output: "error <rule>: <from> → <to>" (a cycle lists its path after the rule).
    const line = probe.output
      .split("\n")
      .find((text) => text.includes(`${rule}:`) && text.includes(from));
    expect(line).toBeDefined();
    if (rule !== "no-circular") expect(line).toContain(to);
  });
});
