import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { CreateTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { build, type Plugin } from "esbuild";
import { createTableInput } from "../../src/table/definition";
import { checkFor, type CheckContext, type CheckOutcome } from "./command-checks";
import { startDevProcess, type DevProcess } from "./dev-process";
import { expectedOutput, location, missingOutput, type Snippet } from "./markdown";
import { shellCommands } from "./shell-words";
import { createWorkspace, type Workspace } from "./workspace";

const run = promisify(execFile);

/**
 * What became of one block. `ran`: executed (TypeScript through esbuild and node, shell through bash or a command
 * check that runs the program for real). `skipped`: not executed as written, for `reason` (a `not-run:` marker,
 * or a command check that says what it verified instead). `illustration`: output or configuration shown to the
 * reader in a non-code fence (`text`, `dockerfile`), which nothing executes.
 */
export type BlockOutcome =
  | { status: "ran"; detail: string; notes: string[] }
  | { status: "skipped"; reason: string }
  | { status: "illustration"; detail: string };

/** The addresses the docs use for the dev server; the run's own replace them. */
const DEV_ADDRESSES = [/http:\/\/127\.0\.0\.1:3000/g, /http:\/\/localhost:3000/g];
const NEEDS_DEV_SERVER = /(127\.0\.0\.1|localhost):3000/;
const BLOCK_TIMEOUT_MS = 45_000;

/** The environment of everything a block starts: DynamoDB Local, fake credentials, no AWS profile. */
function baseEnvironment(endpoint: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
    DYNAMODB_ENDPOINT: endpoint,
    LOG_LEVEL: "silent",
  };
  // Nothing a developer's shell holds may reach a block: the dev server would use DynamoDB, the SDK a profile.
  for (const name of ["TABLE_NAME", "AWS_PROFILE", "AWS_SESSION_TOKEN", "PORT", "TOKEN"])
    delete env[name];
  return env;
}

/**
 * Runs the docs' blocks: one workspace for the TypeScript, one dev server (`npm start`, PORT=0) shared by every
 * block that talks to `127.0.0.1:3000`, one DynamoDB table per TypeScript block on the suite's DynamoDB Local.
 */
export class SnippetRunner {
  readonly workspace: Workspace;
  private readonly scratch = mkdtempSync(join(tmpdir(), "memory-table-docs-scratch-"));
  private readonly client: DynamoDBClient;
  private server: Promise<DevProcess> | undefined;
  private readonly env: NodeJS.ProcessEnv;
  /** Blocks that run npm scripts rebuild dist/dev: one at a time. */
  private npmQueue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly root: string,
    readonly endpoint: string,
    private readonly snippets: Snippet[],
  ) {
    this.workspace = createWorkspace(root);
    this.client = new DynamoDBClient({
      endpoint,
      region: "us-east-1",
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
    });
    this.env = baseEnvironment(endpoint);
    // Every TypeScript block is in the workspace before anything type checks or bundles it.
    for (const snippet of snippets) {
      if (snippet.kind === "ts") this.workspace.write(snippet, snippet.code);
    }
  }

  devServer(): Promise<DevProcess> {
    this.server ??= startDevProcess(this.root, ["start"], { ...this.env, PORT: "0" });
    return this.server;
  }

  /** The token the dev server's banner printed (tenant `demo`), as a reader copies it into TOKEN. */
  private async devToken(): Promise<string> {
    const banner = (await this.devServer()).banner;
    const token = /Dev token for tenant[^\n]*\n(\S+)/.exec(banner)?.[1];
    if (!token) throw new Error(`the dev server's banner prints no token:\n${banner}`);
    return token;
  }

  private async substitute(text: string): Promise<string> {
    if (!NEEDS_DEV_SERVER.test(text)) return text;
    const url = (await this.devServer()).url;
    return DEV_ADDRESSES.reduce((current, pattern) => current.replace(pattern, url), text).replace(
      /(^|[\s'"/])(localhost|127\.0\.0\.1):3000/g,
      (_, before: string) => `${before}${url.replace(/^http:\/\//, "")}`,
    );
  }

  /** TypeScript of the docs, type checked together as a reader's project would (strict). */
  async typecheck(): Promise<string[]> {
    try {
      await run(
        process.execPath,
        [join(this.root, "node_modules/typescript/bin/tsc"), "-p", this.workspace.tsconfig],
        { cwd: this.workspace.root, maxBuffer: 16 * 1024 * 1024, timeout: 120_000 },
      );
      return [];
    } catch (error) {
      const output = `${(error as { stdout?: string }).stdout ?? ""}`;
      if (output.trim() === "") throw error;
      // `<file>(line,col): error ...` back to the page and line a reader sees.
      return output
        .split("\n")
        .filter((line) => /error TS\d+/.test(line))
        .map((line) => {
          const match = /^(.+?)\((\d+),(\d+)\): (.*)$/.exec(line);
          const snippet = match && this.workspace.snippetOf(join(this.workspace.root, match[1]!));
          if (!match || !snippet) return line;
          // +1: the fence line itself.
          return `${snippet.page}:${snippet.line + Number(match[2])}: ${match[4]}`;
        });
    }
  }

  async runBlock(snippet: Snippet): Promise<BlockOutcome> {
    if (snippet.notRun !== undefined) return { status: "skipped", reason: snippet.notRun };
    switch (snippet.kind) {
      case "ts":
        return snippet.file === undefined ? this.runTypeScript(snippet) : this.fileBlock(snippet);
      case "sh":
        return this.runShell(snippet);
      case "json":
        JSON.parse(snippet.code);
        return { status: "ran", detail: "parsed as JSON", notes: [] };
      case "hcl":
        return this.formatHcl(snippet);
      default:
        return {
          status: "illustration",
          detail: `a ${snippet.language} block: nothing to execute`,
        };
    }
  }

  /**
   * A module of the reader's project: it runs when a later block of its page imports or bundles it (that block
   * then runs it), else it is only type checked, and says so.
   */
  private fileBlock(snippet: Snippet): BlockOutcome {
    const stem = snippet.file!.replace(/\.ts$/, "");
    const user = this.snippets.find(
      (other) =>
        other.page === snippet.page &&
        other.line > snippet.line &&
        other.notRun === undefined &&
        (other.kind === "ts" || other.kind === "sh") &&
        (other.code.includes(snippet.file!) || other.code.includes(`${stem.split("/").pop()}"`)),
    );
    if (user) {
      return {
        status: "ran",
        detail: `saved as ${snippet.file}; run by the block at line ${user.line}`,
        notes: [],
      };
    }
    return {
      status: "skipped",
      reason: `a module of the reader's project (${snippet.file}) that no block runs; checked: it type checks`,
    };
  }

  private async runTypeScript(snippet: Snippet): Promise<BlockOutcome> {
    const source = await this.substitute(snippet.code);
    const file = this.workspace.write(snippet, source);
    const outfile = join(dirname(file), ".out", `block-line-${snippet.line}.mjs`);
    await build({
      entryPoints: [file],
      outfile,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node22",
      tsconfig: this.workspace.tsconfig,
      logLevel: "silent",
      plugins: [externalPackages],
      // The repository's sources are CommonJS-flavoured (`require`, `__dirname`): give them theirs in ESM.
      banner: {
        js: [
          'import { createRequire as __docsRequire } from "node:module";',
          'import { fileURLToPath as __docsPath } from "node:url";',
          "const require = __docsRequire(import.meta.url);",
          "const __filename = __docsPath(import.meta.url);",
          'const __dirname = __filename.replace(/\\/[^/]*$/, "");',
        ].join("\n"),
      },
    });
    const env: NodeJS.ProcessEnv = { ...this.env };
    if (/\bTABLE_NAME\b/.test(source)) env.TABLE_NAME = await this.createTable();
    if (/\bTOKEN\b/.test(source)) env.TOKEN = await this.devToken();
    const { stdout } = await this.exec(process.execPath, [outfile], dirname(file), env);
    const missing = missingOutput(expectedOutput(snippet), stdout);
    if (missing !== undefined) {
      throw new Error(`${location(snippet)}: the output lacks "${missing}":\n${stdout}`);
    }
    return { status: "ran", detail: `node (bundled by esbuild)${describeTable(env)}`, notes: [] };
  }

  private async runShell(snippet: Snippet): Promise<BlockOutcome> {
    const commands = shellCommands(snippet.code);
    if (commands.length === 0)
      throw new Error(`${location(snippet)}: a shell block with no command`);
    const checks = commands.map((command) => checkFor(command));
    const checked = checks.filter((check) => check !== undefined).length;
    if (checked === commands.length) {
      const context = this.checkContext();
      const outcomes: Array<[string, CheckOutcome]> = [];
      for (const [index, command] of commands.entries()) {
        outcomes.push([command.text, await this.npm(() => checks[index]!.run(command, context))]);
      }
      const ran = outcomes.filter(([, outcome]) => "ran" in outcome);
      const skipped = outcomes.filter(
        (entry): entry is [string, { skipped: string }] => "skipped" in entry[1],
      );
      if (ran.length === 0) {
        return {
          status: "skipped",
          reason: skipped.map(([text, outcome]) => `\`${text}\`: ${outcome.skipped}`).join("; "),
        };
      }
      return {
        status: "ran",
        detail: ran
          .map(([text, outcome]) => `\`${text}\` ${"ran" in outcome ? outcome.ran : ""}`)
          .join("; "),
        notes: skipped.map(([text, outcome]) => `\`${text}\` not run: ${outcome.skipped}`),
      };
    }
    if (checked > 0) {
      const named = commands.filter((_, index) => checks[index] !== undefined).map((c) => c.text);
      throw new Error(
        `${location(snippet)}: ${named.join(", ")} cannot run as written here, the rest can: split the block`,
      );
    }
    const script = await this.substitute(snippet.code);
    const env: NodeJS.ProcessEnv = { ...this.env };
    if (/\$TOKEN|\$\{TOKEN\}/.test(script) && !/\bTOKEN=/.test(script)) {
      env.TOKEN = await this.devToken();
    }
    const cwd = this.blockDirectory(snippet);
    const execute = () =>
      this.exec("bash", ["-euo", "pipefail", "-c", script], cwd, env).then(({ stdout }) => stdout);
    const stdout = /\bnpm\b|\bnpx\b/.test(script) ? await this.npm(execute) : await execute();
    const missing = missingOutput(expectedOutput(snippet), stdout);
    if (missing !== undefined) {
      throw new Error(`${location(snippet)}: the output lacks "${missing}":\n${stdout}`);
    }
    return {
      status: "ran",
      detail: `bash in ${cwd === this.root ? "the repository root" : "the page's workspace"}`,
      notes: [],
    };
  }

  /** The repository root, or the page's workspace when the block names a file a `file:` block saved. */
  private blockDirectory(snippet: Snippet): string {
    const files = this.snippets
      .filter((other) => other.page === snippet.page && other.file !== undefined)
      .map((other) => other.file!);
    return files.some((file) => snippet.code.includes(file))
      ? this.workspace.pageDirectory(snippet.page)
      : this.root;
  }

  private async formatHcl(snippet: Snippet): Promise<BlockOutcome> {
    if (!(await onPath("terraform"))) {
      return {
        status: "skipped",
        reason: "terraform is not installed (its formatting is not checked)",
      };
    }
    const directory = join(
      this.scratch,
      `hcl-${snippet.page.replace(/\W+/g, "-")}-${snippet.line}`,
    );
    mkdirSync(directory, { recursive: true });
    const file = join(directory, "main.tf");
    writeFileSync(file, snippet.code);
    try {
      await run("terraform", ["fmt", "-check", "-diff", file], { timeout: 20_000 });
    } catch (error) {
      throw new Error(
        `${location(snippet)}: terraform fmt would change it:\n${(error as { stdout?: string }).stdout ?? error}`,
        { cause: error },
      );
    }
    return {
      status: "skipped",
      reason:
        "applying it needs AWS credentials (test/modules plans the module offline); checked: terraform fmt",
    };
  }

  private checkContext(): CheckContext {
    return {
      root: this.root,
      devServer: () => this.devServer(),
      env: this.env,
      scratch: this.scratch,
      // The docs' DynamoDB Local (`DYNAMODB_ENDPOINT=http://127.0.0.1:8000`) is the suite's.
      substitute: (text) => text.replace(/http:\/\/(127\.0\.0\.1|localhost):8000/g, this.endpoint),
    };
  }

  private npm<T>(task: () => Promise<T>): Promise<T> {
    const next = this.npmQueue.then(task, task);
    this.npmQueue = next.catch(() => undefined);
    return next;
  }

  private async createTable(): Promise<string> {
    const tableName = `docs-${randomUUID()}`;
    await this.client.send(new CreateTableCommand(createTableInput(tableName)));
    return tableName;
  }

  private async exec(
    program: string,
    args: string[],
    cwd: string,
    env: NodeJS.ProcessEnv,
  ): Promise<{ stdout: string }> {
    try {
      const { stdout } = await run(program, args, {
        cwd,
        env,
        timeout: BLOCK_TIMEOUT_MS,
        maxBuffer: 16 * 1024 * 1024,
      });
      return { stdout };
    } catch (error) {
      const failure = error as { stdout?: string; stderr?: string; code?: unknown };
      throw new Error(
        `exited with ${String(failure.code)}\n--- stdout\n${failure.stdout ?? ""}\n--- stderr\n${failure.stderr ?? ""}`,
        { cause: error },
      );
    }
  }

  async close(): Promise<void> {
    const server = await this.server?.catch(() => undefined);
    await server?.stop();
    this.client.destroy();
    rmSync(this.scratch, { recursive: true, force: true });
    rmSync(this.workspace.root, { recursive: true, force: true });
  }
}

function describeTable(env: NodeJS.ProcessEnv): string {
  return env.TABLE_NAME ? `, TABLE_NAME a fresh table on DynamoDB Local` : "";
}

async function onPath(program: string): Promise<boolean> {
  try {
    await run("bash", ["-c", `command -v ${program}`]);
    return true;
  } catch {
    return false;
  }
}

/**
 * Packages stay external (node loads them from node_modules, one copy shared with the repository's sources),
 * except `memory-table` itself, which the workspace's tsconfig maps to the sources, and JSON files, which ESM
 * cannot import without an attribute.
 */
const externalPackages: Plugin = {
  name: "external-packages",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path === "memory-table" || args.path.startsWith("memory-table/")) return undefined;
      if (args.path.endsWith(".json")) return undefined;
      if (args.path.startsWith("node:")) return { external: true };
      return { path: args.path, external: true };
    });
  },
};
