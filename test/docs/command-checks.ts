import { execFile, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { promisify } from "node:util";
import { startDevProcess, type DevProcess } from "./dev-process";
import type { ShellCommand } from "./shell-words";

/**
 * Commands the docs name that the docs test cannot run as written, and what it does instead, each saying so in
 * its outcome: it clones nothing (no network), installs nothing (the tree is shared), runs no suite inside the
 * suite, rewrites no committed file; it starts the dev server for real, on a free port, until its banner.
 */
export interface CheckContext {
  root: string;
  /** The dev server `npm start` started for the docs (started on first use). */
  devServer(): Promise<DevProcess>;
  /** The environment of commands the docs test starts (fake AWS credentials, DynamoDB Local). */
  env: NodeJS.ProcessEnv;
  /** A folder for data the commands keep (DynamoDB Local's files). */
  scratch: string;
  /** The block's text with the docs' default addresses replaced by those of the test run. */
  substitute(text: string): string;
}

/**
 * `ran`: the command (or the very program it names, on a free port) ran and did what the docs say.
 * `skipped`: it was not run as written, for the reason given, which also says what was checked instead.
 */
export type CheckOutcome = { ran: string } | { skipped: string };

interface CommandCheck {
  matches(words: string[]): boolean;
  run(command: ShellCommand, context: CheckContext): Promise<CheckOutcome>;
}

const run = promisify(execFile);

interface Manifest {
  name: string;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

function manifest(root: string): Manifest {
  return JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Manifest;
}

const startsWith = (words: string[], ...prefix: string[]) =>
  prefix.every((word, index) => words[index] === word);

/** Scripts that blocks run as written (no check needed: they are quick and change nothing committed). */
const RUN_AS_WRITTEN = new Set(["token"]);

/** The script an `npm run` command names, past npm's own flags (`npm run -s token`). */
function scriptOf(words: string[]): string | undefined {
  return words.slice(2).find((word) => !word.startsWith("-"));
}

/** Why a script is checked and not run. */
const NOT_RUN_SCRIPTS: Record<string, string> = {
  synth: "it rewrites modules/memory-table, which changes only with the construct",
  "build:image": "it rewrites dist/image, which the image tests run",
  build: "it writes dist/src",
  lint: "ESLint and Prettier over the whole tree take minutes",
  typecheck: "test/lint/typecheck.test.ts runs the same check",
  format: "it rewrites files",
  "api-key":
    "it writes a deployed table (test/runtime/api-keys.test.ts runs it against DynamoDB Local)",
};

const CHECKS: CommandCheck[] = [
  {
    matches: (words) => startsWith(words, "git", "clone"),
    async run(command, context) {
      const url = command.words[2] ?? "";
      const folder = command.words[3] ?? basename(url).replace(/\.git$/, "");
      const name = manifest(context.root).name;
      if (folder !== name) {
        throw new Error(`git clone makes folder ${folder}, but the package is ${name}`);
      }
      return { skipped: `it needs the network; checked: the clone's folder is ${name}` };
    },
  },
  {
    matches: (words) => words[0] === "cd",
    async run(command, context) {
      const name = manifest(context.root).name;
      if (command.words[1] !== name) {
        throw new Error(`cd ${command.words[1]}: expected the clone's folder ${name}`);
      }
      return {
        ran: `the clone's folder (${name}) is the repository root, where the docs test runs`,
      };
    },
  },
  {
    matches: (words) => words.length === 2 && startsWith(words, "npm", "ci"),
    async run(_command, context) {
      const pkg = manifest(context.root);
      const lock = JSON.parse(readFileSync(join(context.root, "package-lock.json"), "utf8")) as {
        name: string;
        packages: Record<string, Partial<Manifest>>;
      };
      const locked = lock.packages[""] ?? {};
      expectSame("package-lock.json name", lock.name, pkg.name);
      expectSame("locked dependencies", locked.dependencies ?? {}, pkg.dependencies);
      expectSame("locked devDependencies", locked.devDependencies ?? {}, pkg.devDependencies);
      return {
        skipped:
          "it would reinstall the node_modules every test shares; checked: package-lock.json matches package.json, as npm ci requires",
      };
    },
  },
  {
    matches: (words) => words.length === 2 && startsWith(words, "npm", "start"),
    async run(command, context) {
      if (Object.keys(command.assignments).length === 0) {
        const server = await context.devServer();
        await expectAnswers(server);
        return { ran: `PORT=0: banner, then GET /ok answered on ${server.url}` };
      }
      const env = { ...context.env, ...substituted(command, context), PORT: "0" };
      const server = await startDevProcess(context.root, ["start"], env);
      try {
        await expectAnswers(server);
      } finally {
        await server.stop();
      }
      return {
        ran: `with ${Object.keys(command.assignments).join(", ")} (PORT=0): banner, GET /ok, stopped`,
      };
    },
  },
  {
    matches: (words) => words.length === 3 && startsWith(words, "npm", "run", "dev:dynamodb"),
    async run(command, context) {
      const java = spawnSync(process.env.JAVA ?? "java", ["-version"], { encoding: "utf8" });
      if (java.error || java.status !== 0) {
        return { skipped: "java is not installed (DynamoDB Local needs it)" };
      }
      const env: Record<string, string | undefined> = {
        ...context.env,
        ...substituted(command, context),
        PORT: "0",
        DYNAMODB_LOCAL_DIR: join(context.scratch, "dynamodb-local"),
      };
      delete env.DYNAMODB_ENDPOINT;
      delete env.TABLE_NAME;
      const server = await startDevProcess(context.root, ["run", "dev:dynamodb"], env, 120_000);
      try {
        if (!server.banner.includes("DynamoDB Local")) {
          throw new Error(`the banner does not name DynamoDB Local:\n${server.banner}`);
        }
        await expectAnswers(server);
      } finally {
        await server.stop();
      }
      return {
        ran: "PORT=0, data in a scratch folder: banner naming DynamoDB Local, GET /ok, stopped",
      };
    },
  },
  {
    matches: (words) =>
      startsWith(words, "npm", "test") ||
      (startsWith(words, "npm", "run") && (words[2] ?? "").startsWith("test:")) ||
      startsWith(words, "npx", "jest"),
    async run(command) {
      return listTests(command);
    },
  },
  {
    matches: (words) => startsWith(words, "npm", "run", "bench"),
    async run(command, context) {
      const sections = [
        ...readFileSync(join(context.root, "bench/run.ts"), "utf8").matchAll(
          /\{ name: "([a-z-]+)", run: /g,
        ),
      ].map((match) => match[1]!);
      const dash = command.words.indexOf("--");
      const named = dash === -1 ? [] : command.words.slice(dash + 1);
      for (const section of named) {
        if (!sections.includes(section)) {
          throw new Error(`bench section ${section} is not one of ${sections.join(", ")}`);
        }
      }
      return {
        skipped: `it takes minutes and rewrites bench/results; checked: ${named.length > 0 ? `section ${named.join(", ")} exists` : `the sections ${sections.join(", ")}`} in bench/run.ts`,
      };
    },
  },
  {
    // The real push needs AWS and Docker; its dry run, with the same options, prints every command it would run.
    matches: (words) => words[0] === "scripts/push-image.sh" && !words.includes("--dry-run"),
    async run(command, context) {
      const { stdout } = await run(
        join(context.root, "scripts/push-image.sh"),
        [...command.words.slice(1), "--dry-run"],
        { cwd: context.root, env: context.env, timeout: 30_000 },
      );
      const uri = /^image_uri=(.+)$/m.exec(stdout)?.[1];
      if (!uri) throw new Error(`push-image.sh --dry-run printed no image_uri line:\n${stdout}`);
      return {
        skipped: `it pushes to ECR (AWS credentials, Docker); checked: its --dry-run with the same options prints ${uri}`,
      };
    },
  },
  {
    matches: (words) =>
      words[0] === "terraform" && ["init", "plan", "apply"].includes(words[1] ?? ""),
    async run(command) {
      return {
        skipped: `terraform ${command.words[1]} of a consumer needs AWS credentials (the module's own plan runs offline in test/modules)`,
      };
    },
  },
  {
    matches: (words) => words[0] === "docker",
    async run() {
      return { skipped: "it needs a Docker engine (test/image runs the image's tree without one)" };
    },
  },
  {
    matches: (words) =>
      startsWith(words, "npm", "run") &&
      scriptOf(words) !== undefined &&
      !RUN_AS_WRITTEN.has(scriptOf(words)!),
    async run(command, context) {
      const script = scriptOf(command.words)!;
      const reason = NOT_RUN_SCRIPTS[script];
      const defined = manifest(context.root).scripts[script];
      if (!defined) throw new Error(`package.json has no script ${script}`);
      if (!reason) throw new Error(`npm run ${script}: the docs test has no check for it`);
      if (script === "synth" && !existsSync(join(context.root, "main.ts"))) {
        throw new Error("npm run synth: main.ts is missing");
      }
      return { skipped: `${reason}; checked: the script exists (\`${defined}\`)` };
    },
  },
];

/** The check of a command, or undefined when the command runs as written. */
export function checkFor(command: ShellCommand): CommandCheck | undefined {
  return CHECKS.find((check) => check.matches(command.words));
}

function substituted(command: ShellCommand, context: CheckContext): Record<string, string> {
  return Object.fromEntries(
    Object.entries(command.assignments).map(([name, value]) => [name, context.substitute(value)]),
  );
}

/** The dev server answers a request with the token its banner printed. */
async function expectAnswers(server: DevProcess): Promise<void> {
  const token = /Dev token for tenant[^\n]*\n(\S+)/.exec(server.banner)?.[1];
  if (!token) throw new Error(`the banner prints no token:\n${server.banner}`);
  const response = await fetch(`${server.url}/ok`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (response.status !== 200) {
    throw new Error(`GET ${server.url}/ok answered ${response.status}: ${await response.text()}`);
  }
}

/** One `jest --listTests` per selection: the docs name some commands on several pages. */
const listed = new Map<string, Promise<CheckOutcome>>();

/** A test command, checked with `jest --listTests` and the same selection. */
function listTests(command: ShellCommand): Promise<CheckOutcome> {
  const key = command.words.join(" ");
  if (!listed.has(key)) listed.set(key, listTestsOnce(command));
  return listed.get(key)!;
}

async function listTestsOnce(command: ShellCommand): Promise<CheckOutcome> {
  const { words } = command;
  let args: string[];
  if (startsWith(words, "npx", "jest")) args = words.slice(2);
  else if (startsWith(words, "npm", "test")) args = words.slice(words[2] === "--" ? 3 : 2);
  else {
    const project = words[2]!.slice("test:".length);
    args = ["--selectProjects", project, ...words.slice(words[3] === "--" ? 4 : 3)];
  }
  const root = join(__dirname, "..", "..");
  const { stdout } = await run(
    process.execPath,
    [join(root, "node_modules/jest/bin/jest.js"), "--listTests", ...args],
    { cwd: root, maxBuffer: 16 * 1024 * 1024, timeout: 60_000 },
  );
  const files = stdout
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.endsWith(".test.ts"));
  if (files.length === 0) throw new Error(`jest --listTests ${args.join(" ")} lists no test`);
  const project = args[args.indexOf("--selectProjects") + 1];
  const unit = files.filter((file) => file.includes("/test/unit/"));
  if (args.includes("--selectProjects") && project === "unit" && unit.length !== files.length) {
    throw new Error("the unit selection lists files outside test/unit");
  }
  const dash = args.indexOf("--");
  const paths = dash === -1 ? [] : args.slice(dash + 1);
  const outside = files.filter((file) => !paths.every((path) => file.includes(`/${path}`)));
  if (paths.length > 0 && outside.length > 0) {
    throw new Error(`the selection ${paths.join(" ")} lists ${outside[0]}`);
  }
  return {
    skipped: `the suite does not run itself; checked: ${["jest --listTests", ...args].join(" ")} selects ${files.length} test files`,
  };
}

function expectSame(what: string, actual: unknown, expected: unknown): void {
  if (JSON.stringify(sorted(actual)) !== JSON.stringify(sorted(expected))) {
    throw new Error(`${what}: ${JSON.stringify(actual)} differs from ${JSON.stringify(expected)}`);
  }
}

function sorted(value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)));
}
