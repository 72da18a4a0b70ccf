import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
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

  it.each([
    [
      "the table layer importing the runtime",
      "src/table/keys.ts",
      "../runtime/handler",
      "src/runtime/handler.ts",
      "table-imports-only-shared",
    ],
    [
      "shared code importing the table layer",
      "src/shared/errors.ts",
      "../table/keys",
      "src/table/keys.ts",
      "shared-imports-only-itself",
    ],
    [
      "the runtime importing a saver's internals",
      "src/runtime/engine.ts",
      "../checkpoint/dynamodb/saver",
      "src/checkpoint/dynamodb/saver.ts",
      "runtime-uses-saver-entry-points",
    ],
    [
      "the library importing the dev server",
      "src/runtime/handler.ts",
      "../dev/server",
      "src/dev/server.ts",
      "library-imports-no-application",
    ],
    [
      "the in-memory saver importing the DynamoDB saver",
      "src/checkpoint/memory/index.ts",
      "../dynamodb/index",
      "src/checkpoint/dynamodb/index.ts",
      "savers-are-independent",
    ],
  ])("reports %s", async (_case, from, specifier, target, rule) => {
    const root = tree({
      [from]: `import { x } from "${specifier}";\nexport const y = x;\n`,
      [target]: "export const x = 1;\n",
    });
    try {
      const result = await cruise(root, ["src"]);
      expect(result.code).not.toBe(0);
      expect(result.output).toContain(rule);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("reports an import cycle", async () => {
    const root = tree({
      "src/table/a.ts": 'import { b } from "./b";\nexport const a = () => b;\n',
      "src/table/b.ts": 'import { a } from "./a";\nexport const b = () => a;\n',
    });
    try {
      const result = await cruise(root, ["src"]);
      expect(result.code).not.toBe(0);
      expect(result.output).toContain("no-circular");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
