import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildSync } from "esbuild";
import { MemorySaver } from "@langchain/langgraph-checkpoint";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import pino, { type Logger } from "pino";
import { loadLangGraphConfig } from "../../../src/runtime/graphs/langgraph-config";
import { RequestScope } from "../../../src/runtime/graphs/scoped-checkpointer";
import type { GraphFactory } from "../../../src/runtime/types";
import { InvalidConfigurationError } from "../../../src/shared/errors";

const PROJECT = join(__dirname, "fixtures/langgraph-project");
const CONFIG = join(PROJECT, "langgraph.json");
const GRAPHS = join(PROJECT, "graphs");
const logger = pino({ level: "silent" });
/** Jest's require: the fixture modules as the loader got them (the same module registry). */
const requireFixture = createRequire(__filename);

interface CounterState {
  count: number;
  visits: string[];
}
interface RunnableGraph {
  invoke(input: unknown, config: unknown): Promise<CounterState>;
  checkpointer?: unknown;
}

/** A pino logger keeping its lines; `notes` are its warnings as [field, message]. */
function noteLogger(): {
  logger: Logger;
  lines: Array<Record<string, unknown>>;
  readonly notes: Array<[unknown, unknown]>;
} {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: "trace" },
    { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return {
    logger,
    lines,
    get notes() {
      return lines
        .filter((line) => line.level === 40)
        .map((line): [unknown, unknown] => [line.field, line.msg]);
    },
  };
}

async function build(
  factory: GraphFactory | undefined,
  checkpointer: BaseCheckpointSaver | undefined,
  tenantId = "tenant-a",
): Promise<RunnableGraph> {
  const graph = await factory!({
    checkpointer,
    store: undefined,
    tenantId,
    assistantId: "any",
    logger,
  });
  return graph as unknown as RunnableGraph;
}

/** Runs the graph twice on one thread: the second run starts from the first one's checkpoint, if it was kept. */
async function runTwice(graph: RunnableGraph, threadId = "thread-1"): Promise<CounterState> {
  const config = { configurable: { thread_id: threadId } };
  await graph.invoke({}, config);
  return graph.invoke({}, config);
}

const temporaryDirs: string[] = [];
afterAll(() => {
  for (const dir of temporaryDirs) rmSync(dir, { recursive: true, force: true });
});

/** A langgraph.json (and any other files) in a new directory; returns the config's path. */
function project(config: unknown, files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "langgraph-config-"));
  temporaryDirs.push(dir);
  const text = typeof config === "string" ? config : JSON.stringify(config);
  writeFileSync(join(dir, "langgraph.json"), text);
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return join(dir, "langgraph.json");
}

function load(configPath: string, env: Record<string, string | undefined> = {}) {
  return loadLangGraphConfig(configPath, { env, logger: noteLogger().logger });
}

describe("loadLangGraphConfig: a LangGraph project's graphs as graph factories", () => {
  it("serves every shape of export on the factory's checkpointer, relative to langgraph.json", async () => {
    const factories = await load(CONFIG);
    expect(Object.keys(factories)).toEqual([
      "compiled",
      "own_saver",
      "uncompiled",
      "pending",
      "factory",
      "async_factory",
      "default_export",
      "agent",
    ]);
    const served: Record<string, CounterState> = {};
    for (const [id, factory] of Object.entries(factories)) {
      served[id] = await runTwice(await build(factory, new MemorySaver()));
    }
    const twice = (name: string) => ({ count: 2, visits: [name, name] });
    expect(served).toEqual({
      compiled: twice("compiled"),
      own_saver: twice("own-saver"),
      uncompiled: twice("uncompiled"),
      pending: twice("pending"),
      factory: twice("factory"),
      async_factory: twice("async-factory"),
      default_export: twice("default"),
      // the wrapper's own methods throw: only its inner graph ran
      agent: twice("inner"),
    });
  });

  it("replaces a saver compiled into the module's graph, never changing the exported graph", async () => {
    const { compiledWithOwnSaver } = requireFixture(join(GRAPHS, "counter.js")) as {
      compiledWithOwnSaver: RunnableGraph;
    };
    const ownSaver = compiledWithOwnSaver.checkpointer;
    const factories = await load(CONFIG);
    const saver = new MemorySaver();
    const served = await build(factories.own_saver, saver);
    await runTwice(served, "kept-in-the-factory-saver");

    expect(served).not.toBe(compiledWithOwnSaver);
    expect(compiledWithOwnSaver.checkpointer).toBe(ownSaver);
    expect(
      await saver.getTuple({ configurable: { thread_id: "kept-in-the-factory-saver" } }),
    ).toBeDefined();
    expect(
      await (ownSaver as MemorySaver).getTuple({
        configurable: { thread_id: "kept-in-the-factory-saver" },
      }),
    ).toBeUndefined();
    // A stateless handler (no checkpointer): nothing is kept, not even in the module's saver.
    expect(await runTwice(await build(factories.own_saver, undefined))).toEqual({
      count: 1,
      visits: ["own-saver"],
    });
  });

  it("serves a compiled graph to every tenant through the scoped checkpointer, each on its own saver", async () => {
    const factories = await load(CONFIG);
    const scope = new RequestScope();
    const forA = await build(factories.compiled, scope.checkpointer, "tenant-a");
    const forB = await build(factories.compiled, scope.checkpointer, "tenant-b");
    const saverA = new MemorySaver();
    const saverB = new MemorySaver();

    const a = await scope.run(saverA, () => runTwice(forA, "same-thread-id"));
    const b = await scope.run(saverB, () =>
      forB.invoke({}, { configurable: { thread_id: "same-thread-id" } }),
    );

    expect(forA).not.toBe(forB);
    expect(a).toEqual({ count: 2, visits: ["compiled", "compiled"] });
    expect(b).toEqual({ count: 1, visits: ["compiled"] });
    const config = { configurable: { thread_id: "same-thread-id" } };
    expect((await saverA.getTuple(config))?.checkpoint.channel_values).toMatchObject({ count: 2 });
    expect((await saverB.getTuple(config))?.checkpoint.channel_values).toMatchObject({ count: 1 });
  });

  it("calls a factory function at each factory call (once per assistant and tenant) with an empty config", async () => {
    const { factoryCalls } = requireFixture(join(GRAPHS, "counter.js")) as {
      factoryCalls: unknown[];
    };
    const factories = await load(CONFIG);
    const before = factoryCalls.length;
    await build(factories.factory, new MemorySaver(), "tenant-a");
    await build(factories.async_factory, new MemorySaver(), "tenant-b");
    expect(factoryCalls.slice(before)).toEqual([{ configurable: {} }, { configurable: {} }]);
  });

  it("notes each field that does not apply here, and ignores it", async () => {
    const taker = noteLogger();
    await loadLangGraphConfig(CONFIG, { env: {}, logger: taker.logger });
    expect(taker.notes).toEqual([
      ["node_version", expect.stringMatching(/^langgraph.json field "node_version" is ignored: /)],
      ["dockerfile_lines", expect.stringContaining("Memory Table's Dockerfile")],
      ["http", expect.stringContaining("custom routes are not served")],
      ["store", expect.stringContaining("no long-term store")],
    ]);
    const unknown = noteLogger();
    await loadLangGraphConfig(
      project({ graphs: { g: `${GRAPHS}/counter.js:compiled` }, keep_alive: true }),
      { env: {}, logger: unknown.logger },
    );
    expect(unknown.notes).toEqual([
      ["keep_alive", expect.stringContaining("not a langgraph.json field this handler knows")],
    ]);
  });

  it("warns that a graph compiled with a store of its own is served with the handler's store", async () => {
    const { logger: noteTaker, lines } = noteLogger();
    const configPath = project({ graphs: { g: `${GRAPHS}/shared-store.js:graph` } });
    await loadLangGraphConfig(configPath, { env: {}, logger: noteTaker });
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        field: "graphs.g",
        config: configPath,
        msg: `Graph "g" was compiled with a store of its own: it is served with the handler's store instead, each tenant's own (none when the handler's store option is false)`,
      }),
    ]);
  });
});

describe("loadLangGraphConfig: the LangGraph SDK's getLogger() in graph modules", () => {
  const SDK_LOGGER = Symbol.for("langgraph.api.sdk-logger");
  const global = globalThis as Record<symbol, unknown>;
  beforeEach(() => delete global[SDK_LOGGER]);
  afterAll(() => delete global[SDK_LOGGER]);

  it("registers the container logger before importing the modules, and keeps one registered already", async () => {
    const first = noteLogger();
    const factories = await loadLangGraphConfig(
      project({ graphs: { g: `${GRAPHS}/sdk-logger.js:graph` } }),
      { env: {}, logger: first.logger },
    );
    await runTwice(await build(factories.g, new MemorySaver()));
    expect(first.lines.map(({ level, msg, stage, node }) => ({ level, msg, stage, node }))).toEqual(
      [
        { level: 30, msg: "graph module loading", stage: "import", node: undefined },
        { level: 40, msg: "node ran", stage: undefined, node: "step" },
        { level: 40, msg: "node ran", stage: undefined, node: "step" },
      ],
    );

    const second = noteLogger();
    await loadLangGraphConfig(project({ graphs: { g: `${GRAPHS}/counter.js:compiled` } }), {
      env: {},
      logger: second.logger,
    });
    const registered = global[SDK_LOGGER] as { error(message: object): unknown };
    registered.error({ msg: "still the first logger" });
    expect(first.lines.at(-1)).toMatchObject({ level: 50, msg: "still the first logger" });
    expect(second.lines).toEqual([]);
  });
});

describe("loadLangGraphConfig: env", () => {
  it("fills in variables from the env file next to langgraph.json; variables already set win", async () => {
    const env: Record<string, string | undefined> = {
      MEMORY_TABLE_FIXTURE_ALREADY_SET: "from the function",
    };
    await load(CONFIG, env);
    expect(env).toEqual({
      MEMORY_TABLE_FIXTURE_ALREADY_SET: "from the function",
      MEMORY_TABLE_FIXTURE_FROM_FILE: "from the env file",
      LANGGRAPH_CONFIG: '{"compiled":{"configurable":{"greeting":"from langgraph.json env"}}}',
    });
  });

  it("applies an env object to process.env by default, before the graph modules are imported", async () => {
    const name = "MEMORY_TABLE_FIXTURE_GREETING";
    expect(process.env[name]).toBeUndefined();
    try {
      await loadLangGraphConfig(
        project({ graphs: { g: `${GRAPHS}/env-at-import.js:graph` }, env: { [name]: "hello" } }),
        { logger: noteLogger().logger },
      );
      const { greetingAtImport } = requireFixture(join(GRAPHS, "env-at-import.js")) as {
        greetingAtImport: string;
      };
      expect(greetingAtImport).toBe("hello");
    } finally {
      delete process.env[name];
    }
  });

  it("continues without an env file that is not there, with a note", async () => {
    const taker = noteLogger();
    const env = {};
    const configPath = project({ graphs: { g: `${GRAPHS}/counter.js:compiled` }, env: "./.env" });
    await loadLangGraphConfig(configPath, { env, logger: taker.logger });
    expect(env).toEqual({});
    expect(taker.notes).toEqual([["env", expect.stringMatching(/^Env file .*\.env not found/)]]);
  });

  it.each([
    [
      ["SECRET_NAME"],
      /^Invalid env: expected an object of variables or the path of an env file, got an array/,
    ],
    [
      42,
      /^Invalid env: expected an object of variables or the path of an env file, got number 42$/,
    ],
    [{ PORT: 3000 }, /^Invalid env\.PORT: expected a string, got number 3000$/],
    [{ "A=B": "x" }, /^Invalid env: expected variable names without "=" or NUL, got "A=B"$/],
  ])("refuses env %j", async (envField, message) => {
    const env = {};
    await expect(
      load(project({ graphs: { g: `${GRAPHS}/counter.js:compiled` }, env: envField }), env),
    ).rejects.toThrow(message);
    expect(env).toEqual({});
  });
});

describe("loadLangGraphConfig: bad configurations", () => {
  it("names a missing langgraph.json, and text that is not a JSON object", async () => {
    const missing = join(tmpdir(), "no-such-project", "langgraph.json");
    await expect(load(missing)).rejects.toThrow(
      `Invalid configPath: expected a langgraph.json file, got ${missing}, which does not exist`,
    );
    await expect(load(project("{ graphs: "))).rejects.toThrow(
      /^Invalid langgraph.json: expected JSON, got text that does not parse \(SyntaxError: /,
    );
    await expect(load(project("[]"))).rejects.toThrow(
      /^Invalid langgraph.json: expected a JSON object, got an array in /,
    );
  });

  it.each([
    [{}, 'Invalid graphs: expected an object of graph id to "<path>:<export>", got nothing'],
    [{ graphs: {} }, "Invalid graphs: expected at least one graph, got {}"],
    [
      { graphs: { agent: "./agent.js" } },
      'Invalid graphs.agent: expected "<path>:<export>", got "./agent.js"',
    ],
    [{ graphs: { agent: 42 } }, 'Invalid graphs.agent: expected "<path>:<export>", got number 42'],
    [
      { graphs: { agent: { description: "no path" } } },
      'Invalid graphs.agent: expected "<path>:<export>", got an object with keys description',
    ],
    [
      { graphs: { agent: "./agent.js:my-graph" } },
      'Invalid graphs.agent: expected "<path>:<export>" with an export name, got "./agent.js:my-graph"',
    ],
    [
      { graphs: { agent: "./agent.py:graph" } },
      'Invalid graphs.agent: expected a JavaScript or TypeScript module (.js, .mjs, .cjs, .ts, .mts, .cts, .tsx, .jsx), got "./agent.py:graph"',
    ],
    [
      { graphs: { "..": "./agent.js:graph" } },
      'Invalid graphs: expected graph ids usable as assistant ids, got ".." (expected an id usable in a URL path, got "..")',
    ],
  ])("refuses %j", async (config, message) => {
    const loading = load(project(config));
    await expect(loading).rejects.toBeInstanceOf(InvalidConfigurationError);
    await expect(loading).rejects.toThrow(message);
  });

  it("names a module file that is not there, before importing or applying anything", async () => {
    const env = {};
    const configPath = project({
      graphs: { good: `${GRAPHS}/counter.js:compiled`, agent: "./src/agent.js:graph" },
      env: { APPLIED: "no" },
    });
    const missing = join(configPath, "..", "src", "agent.js");
    await expect(load(configPath, env)).rejects.toThrow(
      `Invalid graphs.agent: expected a module file, got "./src/agent.js:graph": ${missing} does not exist`,
    );
    expect(env).toEqual({});
  });

  it("names a missing export, with the exports the module has", async () => {
    const spec = `${GRAPHS}/counter.js:graph`;
    await expect(load(project({ graphs: { agent: spec } }))).rejects.toThrow(
      `Invalid graphs.agent: expected ${JSON.stringify(spec)} to export "graph", got exports {buildCounter, factoryCalls, compiled, compiledWithOwnSaver, uncompiled, pending, makeGraph, makeGraphAsync}`,
    );
  });

  it.each([
    ["settings", "an object with keys temperature"],
    ["answer", "number 42"],
  ])("refuses an export that is not a graph (%s)", async (name, got) => {
    await expect(
      load(project({ graphs: { agent: `${GRAPHS}/not-graphs.js:${name}` } })),
    ).rejects.toThrow(
      `Invalid graphs.agent: expected "${name}" of ${GRAPHS}/not-graphs.js to be a compiled graph, a StateGraph or a function returning one, got ${got}`,
    );
  });

  it.each([
    ["returnsNothing", "nothing"],
    ["returnsSettings", "an object with keys temperature"],
  ])("refuses, at the factory call, a function that returns no graph (%s)", async (name, got) => {
    const factories = await load(project({ graphs: { agent: `${GRAPHS}/not-graphs.js:${name}` } }));
    await expect(build(factories.agent, new MemorySaver())).rejects.toThrow(
      `Invalid graphs.agent: expected the function exported as "${name}" by ${GRAPHS}/not-graphs.js to be a compiled graph, a StateGraph or a function returning one, got ${got}`,
    );
  });

  it("names a module that throws while it loads, keeping the error as the cause", async () => {
    const spec = `${GRAPHS}/throws-on-load.js:graph`;
    const loading = load(project({ graphs: { agent: spec } }));
    await expect(loading).rejects.toThrow(
      `Invalid graphs.agent: expected ${JSON.stringify(spec)} to load, got Error: model client misconfigured`,
    );
    await expect(loading).rejects.toHaveProperty("cause.message", "model client misconfigured");
  });
});

/**
 * Jest's module sandbox has no dynamic import (the loader falls back to require there), so the import() path is
 * run where it works: the loader bundled to an ES module, in a plain Node process without a TypeScript loader.
 */
describe("loadLangGraphConfig with Node's import() (a child Node process)", () => {
  let loaderBundle: string;
  beforeAll(() => {
    const dir = mkdtempSync(join(tmpdir(), "langgraph-config-bundle-"));
    temporaryDirs.push(dir);
    loaderBundle = join(dir, "langgraph-config.mjs");
    buildSync({
      entryPoints: [join(__dirname, "../../../src/runtime/graphs/langgraph-config.ts")],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      packages: "external",
      outfile: loaderBundle,
      logLevel: "silent",
    });
  });

  function runLoader(configPath: string, nodeOptions: string[] = []): unknown {
    const child = spawnSync(
      process.execPath,
      [...nodeOptions, join(PROJECT, "esm", "run-loader.mjs"), loaderBundle, configPath],
      { encoding: "utf8", timeout: 30_000, env: { PATH: process.env.PATH } },
    );
    if (child.status !== 0) return { exit: child.status, stderr: child.stderr };
    return JSON.parse(child.stdout);
  }

  it("loads an ES module with top-level await, and TypeScript modules through the project's tsx", () => {
    expect(runLoader(join(PROJECT, "esm", "langgraph.json"))).toEqual({
      esm: { visits: ["esm", "esm"] },
      typescript: { visits: ["typescript", "typescript"] },
      // A .ts graph importing a sibling .ts file without an extension (a require() in a CommonJS project).
      imports: { visits: ["imported", "imported"] },
    });
  });

  it("says what to do about a TypeScript graph when the project has no tsx", () => {
    // In the temporary directory no node_modules is found: no tsx. A Node that strips types itself is told not to.
    const strips = (process.features as { typescript?: unknown }).typescript;
    const configPath = project(
      { graphs: { plain: "./plain.mts:graph" } },
      { "plain.mts": "export const graph: number = 1;\n" },
    );
    expect(runLoader(configPath, strips ? ["--no-experimental-strip-types"] : [])).toEqual({
      exit: 1,
      stderr: expect.stringContaining(
        'Invalid graphs.plain: expected a JavaScript module, or tsx in the project to load TypeScript, got "./plain.mts:graph" and no TypeScript loader',
      ),
    });
  });
});
