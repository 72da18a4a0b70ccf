import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isLangGraphAuth } from "../../../src/runtime/auth/langgraph-auth";
import { loadLangGraphAuth } from "../../../src/runtime/graphs/langgraph-auth-config";
import { InvalidConfigurationError } from "../../../src/shared/errors";

const AUTH_FILE = join(__dirname, "fixtures/langgraph-project/auth/auth.ts");
const GRAPH = join(__dirname, "fixtures/langgraph-project/graphs/counter.js:compiled");

const temporaryDirs: string[] = [];
afterAll(() => temporaryDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function project(auth: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), "langgraph-auth-"));
  temporaryDirs.push(dir);
  writeFileSync(join(dir, "langgraph.json"), JSON.stringify({ graphs: { g: GRAPH }, auth }));
  return join(dir, "langgraph.json");
}

describe("loadLangGraphAuth (langgraph.json `auth.path`)", () => {
  it("loads the named export of a TypeScript module, and `default` when the path names none", async () => {
    const named = await loadLangGraphAuth(project({ path: `${AUTH_FILE}:auth` }));
    expect(isLangGraphAuth(named)).toBe(true);
    const byDefault = await loadLangGraphAuth(project({ path: AUTH_FILE }));
    expect(byDefault).toBe(named);
  });

  it("is undefined without auth or without a path (as LangGraph Server)", async () => {
    expect(await loadLangGraphAuth(project(undefined))).toBeUndefined();
    expect(await loadLangGraphAuth(project({ disable_studio_auth: true }))).toBeUndefined();
  });

  it.each([
    [{ path: 42 }, /Invalid auth.path: expected "<path>:<export>", got number 42/],
    ["./auth.ts", /Invalid auth: expected an object with a path/],
    [{ path: "./missing.ts:auth" }, /Invalid auth.path: expected a module file/],
    [{ path: `${AUTH_FILE}:nothing` }, /Invalid auth.path: expected .* to export "nothing"/],
    [{ path: `${AUTH_FILE}:notAuth` }, /Invalid auth.path: expected an instance of Auth/],
  ])("refuses %j, naming the field", async (auth, message) => {
    const loading = loadLangGraphAuth(project(auth));
    await expect(loading).rejects.toThrow(InvalidConfigurationError);
    await expect(loadLangGraphAuth(project(auth))).rejects.toThrow(message);
  });
});
