import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { promisify } from "node:util";

// Jest compiles test files without type checking (fast); the whole project is type checked here instead, once,
// with the same strict tsconfig.json `npm run typecheck` uses. Its deadline is wide: tsc takes 30 s on a quiet
// machine and more than 120 s on a loaded one.
const ROOT = resolve(__dirname, "../..");

describe("TypeScript", () => {
  it("type checks the whole project (src, test, bench, image, modules, scripts) in strict mode", async () => {
    const result = await promisify(execFile)(
      process.execPath,
      [
        join(ROOT, "node_modules/typescript/bin/tsc"),
        "-p",
        join(ROOT, "tsconfig.json"),
        "--noEmit",
      ],
      { cwd: ROOT, timeout: 300_000 },
    ).then(
      () => ({ code: 0, output: "" }),
      (error: { code?: number; stdout?: string }) => ({
        code: error.code ?? 1,
        output: error.stdout ?? "",
      }),
    );
    expect(result.output).toBe("");
    expect(result.code).toBe(0);
  }, 300_000);
});
