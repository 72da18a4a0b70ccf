import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadGraphModule } from "../../image/graph-module";
import { atColdStart, isInitError } from "../../image/init-error";
import { InvalidConfigurationError } from "../../src/shared/errors";

describe("GRAPH_MODULE loading", () => {
  let root: string;
  const factory = "({ checkpointer }) => ({ checkpointer })";

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "memory-table-graph-modules-"));
    // CommonJS only: Jest's module system cannot require ES modules. The end-to-end test loads ESM graph
    // modules in the real runtime.
    const files: Record<string, string> = {
      "default.cjs": `exports.__esModule = true; exports.default = ${factory};\n`,
      "function.cjs": `module.exports = ${factory};\n`,
      "map.cjs": `exports.assistants = { booking: ${factory}, support: ${factory} };\n`,
      "default-map.cjs": `exports.default = { assistants: { triage: ${factory} } };\n`,
      "not-a-function.cjs": `exports.assistants = { booking: "graph" };\n`,
      "empty-map.cjs": "exports.assistants = {};\n",
      "bad-id.cjs": `exports.assistants = { "": ${factory} };\n`,
      "array.cjs": "exports.assistants = [];\n",
      "nothing.cjs": "exports.version = 1;\n",
      "syntax.cjs": "module.exports = (;\n",
      "throws.cjs": 'throw new TypeError("no API key");\n',
      // An Auth of the bundle's own copy of the SDK: recognised by its shape, not its class.
      "with-auth.cjs": `exports.assistants = { booking: ${factory} };\nexports.auth = { "~handlerCache": { callbacks: {} } };\n`,
      "bad-auth.cjs": `exports.assistants = { booking: ${factory} };\nexports.auth = 42;\n`,
    };
    for (const [name, text] of Object.entries(files)) writeFileSync(join(root, name), text);
  });

  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("takes a default-exported GraphFactory as the single graph (assistant `agent`)", () => {
    expect(typeof loadGraphModule("default.cjs", root).graph).toBe("function");
    expect(typeof loadGraphModule(join(root, "function.cjs"), "/elsewhere").graph).toBe("function");
  });

  it("takes an `assistants` map, named or on the default export", () => {
    expect(Object.keys(loadGraphModule("map.cjs", root).assistants!)).toEqual([
      "booking",
      "support",
    ]);
    expect(Object.keys(loadGraphModule("default-map.cjs", root).assistants!)).toEqual(["triage"]);
  });

  it("takes an `auth` export (LangGraph's Auth, bundled with the graphs) for the handler", () => {
    const loaded = loadGraphModule("with-auth.cjs", root);
    expect(Object.keys(loaded.assistants!)).toEqual(["booking"]);
    expect(loaded.auth).toEqual({ "~handlerCache": { callbacks: {} } });
    expect(loadGraphModule("map.cjs", root).auth).toBeUndefined();
  });

  it.each([
    [
      "bad-auth.cjs",
      /^Invalid GRAPH_MODULE export auth: expected an instance of Auth from @langchain\/langgraph-sdk\/auth$/,
    ],
    [
      "missing.cjs",
      /^Invalid GRAPH_MODULE: expected a module file \(absolute, or relative to .*\), got "missing\.cjs": .* does not exist$/,
    ],
    [
      "syntax.cjs",
      /^Invalid GRAPH_MODULE: expected a module that loads, got "syntax\.cjs", which threw SyntaxError/,
    ],
    [
      "nothing.cjs",
      /^Invalid GRAPH_MODULE: expected "nothing\.cjs" to export a GraphFactory \(default export\) or an `assistants` map, got exports \{version\}$/,
    ],
    [
      "not-a-function.cjs",
      /^Invalid GRAPH_MODULE: expected assistants\["booking"\] of "not-a-function\.cjs" to be a GraphFactory function, got "graph"$/,
    ],
    [
      "empty-map.cjs",
      /^Invalid GRAPH_MODULE: expected `assistants` of "empty-map\.cjs" to name at least one assistant, got \{\}$/,
    ],
    [
      "bad-id.cjs",
      /^Invalid GRAPH_MODULE: expected assistant ids of "bad-id\.cjs" to be identifiers, got ""/,
    ],
    [
      "array.cjs",
      /^Invalid GRAPH_MODULE: expected `assistants` of "array\.cjs" to be an object of GraphFactory functions, got an array$/,
    ],
    [
      "throws.cjs",
      /^Invalid GRAPH_MODULE: expected a module that loads, got "throws\.cjs", which threw TypeError: no API key$/,
    ],
  ])("rejects %s", (file, message) => {
    let thrown: unknown;
    try {
      loadGraphModule(file, root);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidConfigurationError);
    expect((thrown as Error).message).toMatch(message);
  });

  it("marks what cold-start setup throws as an init error, and passes results through", () => {
    expect(atColdStart(() => 42)).toBe(42);
    let thrown: unknown;
    try {
      atColdStart(() => loadGraphModule("missing.cjs", root));
    } catch (error) {
      thrown = error;
    }
    expect(isInitError(thrown)).toBe(true);
    expect(isInitError(new Error("other"))).toBe(false);
  });
});
