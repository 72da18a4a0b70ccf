import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import {
  ENVIRONMENT,
  IMAGE_HANDLERS,
  LANGGRAPH_ENVIRONMENT,
  OPTIONAL_ENVIRONMENT,
  SECRET_ENVIRONMENT,
} from "../../src/runtime/environment";
import { ERROR_STATUSES, ROUTES } from "../../src/runtime/http/routes";
import { localEndpoint } from "../support/dynamodb";
import { location, readSnippets, type Snippet } from "./markdown";
import { SnippetRunner, type BlockOutcome } from "./snippet-runner";

/**
 * Every code block of README.md, CONTRIBUTING.md and docs/*.md, run: TypeScript bundled and run with node (against
 * DynamoDB Local or the dev server), shell through bash (curl against one dev server started by `npm start`) or a
 * command check that runs the program itself (test/docs/command-checks.ts). A block that cannot run here says
 * why, with a `SKIP:` line; nothing is left out silently. The tables the docs copy from code or measurements
 * (routes, error statuses, bench results) are compared with their sources.
 */
const root = resolve(__dirname, "../..");
const PAGES = [
  "README.md",
  "CONTRIBUTING.md",
  ...readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`),
];
const snippets = PAGES.flatMap((page) => readSnippets(root, page));
/** Fence languages a block may have: the runnable ones, and output/configuration shown as it is. */
const LANGUAGES = new Set(["ts", "sh", "bash", "json", "hcl", "text", "dockerfile"]);
/** Pages pass their blocks in order (a reader's sequence); this many pages at once. */
const PAGE_CONCURRENCY = 3;

let runner: SnippetRunner | undefined;
const outcomes = new Map<Snippet, Promise<BlockOutcome>>();
const settled: Array<[Snippet, BlockOutcome | Error]> = [];

function runnerOf(): SnippetRunner {
  runner ??= new SnippetRunner(root, localEndpoint(), snippets);
  return runner;
}

/**
 * Starts every block on first use, so that pages run side by side while the tests below await them one by one;
 * a page's blocks run in order, as a reader follows them.
 */
function outcomeOf(snippet: Snippet): Promise<BlockOutcome> {
  if (outcomes.size === 0) {
    const active = runnerOf();
    const lanes = new Map<string, Promise<unknown>>();
    let lane = 0;
    for (const page of PAGES) {
      const key = String(lane++ % PAGE_CONCURRENCY);
      let previous = lanes.get(key) ?? Promise.resolve();
      for (const block of snippets.filter((candidate) => candidate.page === page)) {
        const outcome = previous.then(() => active.runBlock(block));
        outcome.then(
          (value) => settled.push([block, value]),
          (error: Error) => settled.push([block, error]),
        );
        outcomes.set(block, outcome);
        previous = outcome.catch(() => undefined);
      }
      lanes.set(key, previous);
    }
  }
  return outcomes.get(snippet)!;
}

function describeOutcome(snippet: Snippet, outcome: BlockOutcome): string {
  const where = `${location(snippet)} (${snippet.language})`;
  if (outcome.status === "skipped") return `SKIP: ${where}: ${outcome.reason}`;
  if (outcome.status === "illustration") return `NOT CODE: ${where}: ${outcome.detail}`;
  return `RAN: ${where}: ${outcome.detail}`;
}

afterAll(async () => {
  await runner?.close();
  const ran = settled.filter(
    ([, outcome]) => !(outcome instanceof Error) && outcome.status === "ran",
  );
  const skipped = settled.filter(
    ([, outcome]) => !(outcome instanceof Error) && outcome.status === "skipped",
  );
  const shown = settled.filter(
    ([, outcome]) => !(outcome instanceof Error) && outcome.status === "illustration",
  );
  const failed = settled.filter(([, outcome]) => outcome instanceof Error);
  const code = settled.length - shown.length;
  const byKind = ["ts", "sh", "json", "hcl"].map((kind) => {
    const ofKind = settled.filter(([snippet]) => snippet.kind === kind);
    const count = (status: string) =>
      ofKind.filter(([, outcome]) => !(outcome instanceof Error) && outcome.status === status)
        .length;
    return `${kind} ${ofKind.length} (${count("ran")} run, ${count("skipped")} skipped)`;
  });
  const lines = [
    `Docs snippets: ${code} code blocks in ${PAGES.length} pages: ${ran.length} run, ${skipped.length} skipped` +
      `${failed.length > 0 ? `, ${failed.length} failed` : ""}; ${shown.length} text/dockerfile blocks not code`,
    `By kind: ${byKind.join("; ")}`,
    ...skipped.map(([snippet, outcome]) => describeOutcome(snippet, outcome as BlockOutcome)),
    ...ran.flatMap(([snippet, outcome]) =>
      (outcome as Extract<BlockOutcome, { status: "ran" }>).notes.map(
        (note) => `SKIP: ${location(snippet)}: inside a block that ran, ${note}`,
      ),
    ),
  ];
  console.log(lines.join("\n"));
});

describe("documentation (integration)", () => {
  it("has the pages the README links, and every relative link of a page leads to a file", () => {
    for (const page of PAGES) {
      const text = readFileSync(join(root, page), "utf8");
      for (const match of text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
        const target = match[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        expect({ page, target, exists: existsSync(join(root, dirname(page), target)) }).toEqual({
          page,
          target,
          exists: true,
        });
      }
    }
    const readme = readFileSync(join(root, "README.md"), "utf8");
    for (const page of PAGES.filter((name) => name.startsWith("docs/"))) {
      expect({ page, linked: readme.includes(`(${page})`) }).toEqual({ page, linked: true });
    }
  });

  it("gives `npm test` as the test command in the README (CI runs the command the README gives)", () => {
    const commands = snippets
      .filter((snippet) => snippet.page === "README.md" && snippet.kind === "sh")
      .flatMap((snippet) => snippet.code.split("\n").map((line) => line.replace(/#.*/, "").trim()));
    expect(commands).toContain("npm test");
  });

  it("fences every block with a language it knows", () => {
    const unknown = snippets
      .filter((snippet) => !LANGUAGES.has(snippet.language))
      .map((snippet) => `${location(snippet)}: \`${snippet.language || "(none)"}\``);
    expect(unknown).toEqual([]);
  });

  it("type checks every TypeScript block as a strict project importing memory-table", async () => {
    // The blocks start running now, so that their processes overlap with tsc's (single-threaded) check.
    if (snippets.length > 0) void outcomeOf(snippets[0]!).catch(() => undefined);
    expect(await runnerOf().typecheck()).toEqual([]);
  }, 120_000);

  it("lists exactly the routes of src/runtime/http/routes.ts in docs/http-api.md", () => {
    const text = readFileSync(join(root, "docs/http-api.md"), "utf8");
    const listed = [...text.matchAll(/^\| `(GET|POST|PUT|PATCH|DELETE)` +\| `([^`]+)` +\|/gm)].map(
      (match) => `${match[1]} ${match[2]}`,
    );
    expect([...listed].sort()).toEqual(
      ROUTES.map((route) => `${route.method} ${route.path}`).sort(),
    );
    const streaming = [...text.matchAll(/^\| `(GET|POST)` +\| `([^`]+)` +\|.*\bSSE\b/gm)].map(
      (match) => `${match[1]} ${match[2]}`,
    );
    expect(streaming.sort()).toEqual(
      ROUTES.filter((route) => route.streaming)
        .map((route) => `${route.method} ${route.path}`)
        .sort(),
    );
  });

  it("gives each error of ERROR_STATUSES its status on both faces in docs/http-api.md", () => {
    const text = readFileSync(join(root, "docs/http-api.md"), "utf8");
    const rows = new Map(
      [...text.matchAll(/^\| `([A-Za-z]+Error)` +\| (\d{3}) +\| (\d{3}) +\|/gm)].map((match) => [
        match[1]!,
        { simple: Number(match[2]), server: Number(match[3]) },
      ]),
    );
    expect(Object.fromEntries(rows)).toEqual(
      Object.fromEntries(ERROR_STATUSES.map(([type, statuses]) => [type.name, statuses])),
    );
  });

  it("lists exactly the image's handlers and the variables it reads in docs/container-image.md", () => {
    const text = readFileSync(join(root, "docs/container-image.md"), "utf8");
    const variables = [...text.matchAll(/^\| `([A-Z][A-Z0-9_]+)` +\|/gm)].map((match) => match[1]);
    expect(variables.sort()).toEqual(
      [
        ...Object.values(ENVIRONMENT),
        ...Object.values(LANGGRAPH_ENVIRONMENT),
        ...Object.values(OPTIONAL_ENVIRONMENT),
        ...Object.values(SECRET_ENVIRONMENT),
      ].sort(),
    );
    const handlers = [...text.matchAll(/^\| `([a-z]+\.handler)` +\|/gm)].map((match) => match[1]);
    expect(handlers.sort()).toEqual(Object.values(IMAGE_HANDLERS).sort());
  });

  it("gives the module's inputs with their defaults, and outputs that exist, in docs/terraform-module.md", () => {
    const read = (file: string) =>
      JSON.parse(readFileSync(join(root, "modules/memory-table", file), "utf8")) as Record<
        string,
        Record<string, { default?: unknown }>
      >;
    const variables = read("variables.tf.json").variable!;
    const outputs = read("outputs.tf.json").output!;
    const text = readFileSync(join(root, "docs/terraform-module.md"), "utf8");
    const rows = [...text.matchAll(/^\| `([a-z0-9_]+)` +\| (required|`[^`]*`) +\|/gm)];
    expect(rows.length).toBeGreaterThanOrEqual(10);
    for (const [, name, documented] of rows) {
      const variable = variables[name!];
      const actual =
        variable === undefined
          ? "no such input"
          : "default" in variable
            ? `\`${JSON.stringify(variable.default)}\``
            : "required";
      expect({ name, default: documented }).toEqual({ name, default: actual });
    }
    const named = /Main outputs: ([^.]+)\./.exec(text)?.[1] ?? "";
    const listed = [...named.matchAll(/`([a-z0-9_]+)`/g)].map((match) => match[1]!);
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.filter((name) => !(name in outputs))).toEqual([]);
  });

  it("names every section of bench/run.ts in CONTRIBUTING.md", () => {
    const sections = [
      ...readFileSync(join(root, "bench/run.ts"), "utf8").matchAll(/\{ name: "([a-z-]+)", run: /g),
    ].map((match) => match[1]!);
    const text = readFileSync(join(root, "CONTRIBUTING.md"), "utf8");
    expect(sections.length).toBeGreaterThan(0);
    expect(sections.filter((section) => !text.includes(`\`${section}\` (`))).toEqual([]);
  });

  it("copies the DynamoDB saver's costs from bench/results/dynamodb.json", () => {
    const results = JSON.parse(
      readFileSync(join(root, "bench/results/dynamodb.json"), "utf8"),
    ) as Record<string, { requests: number; capacityUnits: number }> & {
      reference: Record<string, Record<string, { requests: number; capacityUnits: number }>>;
    };
    const text = readFileSync(join(root, "docs/dynamodb-saver.md"), "utf8");
    for (const workload of ["booking", "chat"]) {
      const row = new RegExp(`^\\| \`${workload}\`[^|]*\\|(.*)\\|$`, "m").exec(text)?.[1];
      expect({ workload, row: row !== undefined }).toEqual({ workload, row: true });
      const cells = row!.split("|").map((cell) => cell.trim());
      const { courseDesign, langgraphCheckpointAws } = results.reference;
      expect(cells).toEqual([
        String(results[workload]!.requests),
        String(results[workload]!.capacityUnits),
        `${courseDesign![workload]!.requests} / ${courseDesign![workload]!.capacityUnits}`,
        `${langgraphCheckpointAws![workload]!.requests} / ${langgraphCheckpointAws![workload]!.capacityUnits}`,
      ]);
    }
  });

  it("copies the store's costs from bench/results/store.json", () => {
    const results = JSON.parse(readFileSync(join(root, "bench/results/store.json"), "utf8")) as {
      rows: Array<{ operation: string; requests: number; capacityUnits: number }>;
    };
    const text = readFileSync(join(root, "docs/store.md"), "utf8");
    const rows = [...text.matchAll(/^\| ([^|`]+?) +\| (\d+) +\| (\d+(?:\.\d+)?) +\|$/gm)];
    expect(rows.length).toBeGreaterThanOrEqual(5);
    for (const [, operation, requests, capacity] of rows) {
      const measured = results.rows.find((result) => result.operation === operation);
      expect({ operation, requests: Number(requests), capacityUnits: Number(capacity) }).toEqual({
        operation,
        requests: measured?.requests,
        capacityUnits: measured?.capacityUnits,
      });
    }
  });

  describe.each(PAGES)("%s", (page) => {
    const blocks = snippets.filter((snippet) => snippet.page === page);
    if (blocks.length === 0) {
      it("has no code blocks", () => expect(blocks).toEqual([]));
      return;
    }
    it.each(blocks.map((block) => [`line ${block.line} (${block.language})`, block] as const))(
      "%s",
      async (_name, block) => {
        const outcome = await outcomeOf(block);
        if (outcome.status !== "ran") console.log(describeOutcome(block, outcome));
        expect(["ran", "skipped", "illustration"]).toContain(outcome.status);
      },
      120_000,
    );
  });
});
