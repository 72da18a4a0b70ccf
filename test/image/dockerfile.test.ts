import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { IMAGE_HANDLERS } from "../../src/runtime/environment";
import { BOOTSTRAP_FILE, buildImage, REPO_ROOT, type ImageBuild } from "../../scripts/build-image";
import { envOf, execForm, last, parseDockerfile, type Stage } from "./dockerfile";
import { IMAGE_NODE_MAJOR, missingRuntimeClient } from "./ric-process";

/**
 * What no build can check here (no Docker engine): the Dockerfile's shape, and that it ships exactly the tree
 * `npm run build:image` writes, which the end-to-end test runs.
 */
const dockerfileText = readFileSync(join(REPO_ROOT, "Dockerfile"), "utf8");
const dockerfile = parseDockerfile(dockerfileText);
const dockerignore = readFileSync(join(REPO_ROOT, ".dockerignore"), "utf8")
  .split("\n")
  .map((line) => line.trim())
  .filter((line) => line !== "" && !line.startsWith("#"));
const finalStage = dockerfile.stages.at(-1)!;
const stageNames = dockerfile.stages.map((stage) => stage.name);
const COMPILERS =
  /\b(gcc|g\+\+|clang|cmake|make|build-essential|autoconf|automake|libtool|node-gyp)\b/;
/** PID 1 of the container: the init the runtime stage copies from the build stage. */
const INIT = "/usr/local/bin/tini";

function runs(stage: Stage): string[] {
  return stage.instructions.filter((item) => item.keyword === "RUN").map((item) => item.args);
}

function copies(
  stage: Stage,
): Array<{ from: string | undefined; sources: string[]; dest: string }> {
  return stage.instructions
    .filter((item) => item.keyword === "COPY")
    .map((item) => {
      const words = item.args.split(/\s+/);
      const from = words.find((word) => word.startsWith("--from="))?.slice("--from=".length);
      const paths = words.filter((word) => !word.startsWith("--"));
      return { from, sources: paths.slice(0, -1), dest: paths.at(-1)! };
    });
}

describe("Dockerfile", () => {
  it("is multi-stage: a named build stage, then a runtime stage that copies only from it", () => {
    expect(dockerfile.stages.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile.stages[0]!.name).toBe("build");
    expect(finalStage.name).toBe("runtime");
    const fromStages = new Set(copies(finalStage).map((copy) => copy.from));
    expect([...fromStages]).toEqual(["build"]);
  });

  it("pins the Dockerfile frontend (the syntax line) by digest, like the base", () => {
    expect(dockerfileText.split("\n")[0]).toMatch(
      /^# syntax=docker\/dockerfile:[\d.]+@sha256:[0-9a-f]{64}$/,
    );
  });

  it("pins every base image by digest, on the image's Node major, slim", () => {
    for (const stage of dockerfile.stages) {
      if (stageNames.includes(stage.from)) continue;
      expect(stage.from).toMatch(/^[\w./-]+:[\w.-]+@sha256:[0-9a-f]{64}$/);
    }
    expect(finalStage.from).toMatch(new RegExp(`^node:${IMAGE_NODE_MAJOR}-[\\w-]*slim@sha256:`));
  });

  it("installs the native build tools in the build stage and none in the final stage", () => {
    const buildRuns = runs(dockerfile.stages[0]!).join("\n");
    for (const tool of [
      "autoconf",
      "automake",
      "cmake",
      "g++",
      "libtool",
      "make",
      "python3",
      "xz-utils",
    ]) {
      expect(buildRuns).toContain(tool);
    }
    for (const run of runs(finalStage)) expect(run).not.toMatch(COMPILERS);
    expect(runs(finalStage).join("\n")).not.toMatch(/apt-get|apk|dnf|yum/);
  });

  it("builds the native addon against the base image's Node headers (no header download)", () => {
    // node-gyp's nodedir, in the spelling npm 11 passes on without an "Unknown env config" warning.
    expect(envOf(dockerfile.stages[0]!).npm_package_config_node_gyp_nodedir).toBe("/usr/local");
  });

  it("removes the base image's package managers from the runtime stage", () => {
    const removed = runs(finalStage).join("\n");
    for (const path of [
      "/usr/local/lib/node_modules",
      "/usr/local/bin/npm",
      "/usr/local/bin/npx",
      "/usr/local/bin/corepack",
      "/usr/local/bin/yarn",
      "/opt/yarn-",
    ]) {
      expect(removed).toContain(path);
    }
  });

  it("removes from the runtime stage what the runtime never reads: C headers, Node's docs and man pages", () => {
    const removed = runs(finalStage).join("\n");
    for (const path of [
      "/usr/local/include",
      "/usr/local/share/doc",
      "/usr/local/share/man",
      "/usr/local/share/systemtap",
      "/usr/local/CHANGELOG.md",
      "/usr/local/README.md",
    ]) {
      expect(removed).toContain(path);
    }
    // Node's license stays with Node.
    expect(removed).not.toContain("/usr/local/LICENSE");
    // The build stage still builds against those headers.
    expect(runs(dockerfile.stages[0]!).join("\n")).not.toContain("/usr/local/include");
  });

  it("builds with npm ci and `npm run build:image`, and ships exactly that tree, read-only, owned by root", () => {
    const buildStage = dockerfile.stages[0]!;
    const buildRuns = runs(buildStage).join("\n");
    expect(buildRuns).toMatch(/npm ci\b/);
    expect(buildRuns).toMatch(/npm run build:image && chmod -R a=rX dist\/image/);
    const scripts = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")).scripts;
    expect(scripts["build:image"]).toBe("tsx scripts/build-image.ts");

    const workdir = last(buildStage, "WORKDIR")!.args;
    const taskRoot = envOf(finalStage).LAMBDA_TASK_ROOT;
    expect(taskRoot).toBe("/var/task");
    const [init, tree] = copies(finalStage);
    // Besides the init (PID 1), the runtime stage gets exactly the built tree, owned by root.
    expect(init).toEqual({ from: "build", sources: ["/usr/bin/tini-static"], dest: INIT });
    expect(tree).toEqual({
      from: "build",
      sources: [`${workdir}/dist/image/`],
      dest: `${taskRoot}/`,
    });
    expect(copies(finalStage)).toHaveLength(2);
    for (const copy of finalStage.instructions.filter((item) => item.keyword === "COPY")) {
      expect(copy.args).toContain("--chown=root:root");
    }
    expect(runs(dockerfile.stages[0]!).join("\n")).toMatch(/\btini\b/);
  });

  it("writes only to /tmp: HOME lives there, and it runs as a non-root user", () => {
    const env = envOf(finalStage);
    expect(env.HOME).toBe("/tmp");
    expect(envOf(dockerfile.stages[0]!).NPM_CONFIG_CACHE).toMatch(/^\/tmp\//);
    const user = last(finalStage, "USER")?.args;
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)(:|$)/);
  });

  it("keeps tests, sources outside the build and secrets out of the context (.dockerignore allowlist)", () => {
    expect(dockerignore[0]).toBe("*");
    const allowed = dockerignore
      .filter((line) => line.startsWith("!"))
      .map((line) => line.slice(1));
    const copied = copies(dockerfile.stages[0]!).flatMap((copy) => copy.sources);
    expect([...allowed].sort()).toEqual([...copied].sort());
    for (const excluded of ["**/*.test.ts", "**/.env*", "**/node_modules", "**/dist"]) {
      expect(dockerignore).toContain(excluded);
    }
  });
});

// The checks against the tree `npm run build:image` writes: it holds the runtime interface client's native
// addon, which aws-lambda-ric builds only on Linux.
const cannotBuildTree = missingRuntimeClient();
if (cannotBuildTree)
  console.log(`SKIP: Dockerfile against the built image tree: ${cannotBuildTree}`);
(cannotBuildTree ? describe.skip : describe)("Dockerfile and the tree it ships", () => {
  let built: ImageBuild;
  let outDir: string;

  beforeAll(async () => {
    // Its own output directory: the end-to-end test may be writing dist/image at the same time.
    outDir = mkdtempSync(join(tmpdir(), "memory-table-image-tree-"));
    built = await buildImage(outDir);
  }, 60_000);

  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it("copies into the build context every repository file the image build reads", () => {
    const copied = copies(dockerfile.stages[0]!).flatMap((copy) => copy.sources);
    for (const input of built.inputs) {
      expect(copied.some((source) => input === source || input.startsWith(source))).toBe(true);
    }
    expect(copied).toEqual(
      expect.arrayContaining(["package.json", "package-lock.json", "tsconfig.json"]),
    );
  });

  it("has an ENTRYPOINT and a CMD that name files and exports of the built tree", () => {
    const entrypoint = execForm(last(finalStage, "ENTRYPOINT"));
    const cmd = execForm(last(finalStage, "CMD"));
    const taskRoot = envOf(finalStage).LAMBDA_TASK_ROOT!;
    // An init as PID 1 forwards SIGTERM/SIGINT to Node, which as PID 1 would ignore them.
    expect(entrypoint).toEqual([
      INIT,
      "--",
      "/usr/local/bin/node",
      posix.join(taskRoot, BOOTSTRAP_FILE),
    ]);
    expect(built.files).toContain(BOOTSTRAP_FILE);
    expect(cmd).toEqual([IMAGE_HANDLERS.api]);
    // Every handler the Terraform module may set as the command resolves to an exported function.
    for (const handler of Object.values(IMAGE_HANDLERS)) {
      const [file, name] = handler.split(".");
      expect(built.files).toContain(`${file}.mjs`);
      expect(built.exports[`${file}.mjs`]).toContain(name);
    }
    expect(built.files).toEqual(expect.arrayContaining(["ric/index.mjs", "ric/rapid-client.node"]));
  });
});

/**
 * Signals to PID 1, for real: the runtime stage's ENTRYPOINT (its init, then Node) run as PID 1 of a new PID
 * namespace (`unshare --pid`, what a container gets), and SIGTERM/SIGINT sent to that PID 1 from outside, as
 * `docker stop` and Ctrl-C on `docker run` do. The init is Debian bookworm's tini-static, the file the build
 * stage installs and the runtime stage copies; Node runs a stand-in for bootstrap.mjs that waits forever.
 */
const HOST_INIT = "/usr/bin/tini-static";
const WAIT_FOREVER = "process.stdout.write('ready\\n'); setInterval(() => {}, 1000);";

function cannotRunPid1(): string | undefined {
  if (process.platform !== "linux") return "PID namespaces are Linux only";
  if (!existsSync(HOST_INIT)) return `no ${HOST_INIT} (Debian/Ubuntu: apt-get install tini)`;
  const probe = spawnSync("unshare", ["--pid", "--fork", "true"], { encoding: "utf8" });
  if (probe.error || probe.status !== 0) {
    return `cannot create a PID namespace (unshare --pid: ${probe.error?.message ?? probe.stderr.trim()})`;
  }
  return undefined;
}

/** The command as PID 1 of a new PID namespace; resolves once it printed `ready`, with its host pid. */
async function startAsPid1(command: string[]): Promise<{
  pid1: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(): void;
}> {
  const unshare = spawn("unshare", ["--pid", "--fork", "--kill-child", ...command], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    unshare.once("exit", (code, signal) => resolve({ code, signal })),
  );
  await new Promise<void>((resolve, reject) => {
    let printed = "";
    unshare.stdout!.on("data", (chunk: Buffer) => {
      printed += chunk.toString();
      if (printed.includes("ready")) resolve();
    });
    void exited.then(({ code }) => reject(new Error(`exited (${code}) before it was ready`)));
  });
  // unshare --fork: its one child is the namespace's PID 1.
  const children = readdirSync(`/proc/${unshare.pid}/task`).flatMap((task) =>
    readFileSync(`/proc/${unshare.pid}/task/${task}/children`, "utf8").trim().split(/\s+/),
  );
  const pid1 = Number(children.find((child) => child !== ""));
  return { pid1, exited, kill: () => unshare.kill("SIGKILL") };
}

function within<T>(promise: Promise<T>, ms: number): Promise<T | "still running"> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<"still running">((resolve) => {
      timer = setTimeout(() => resolve("still running"), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

const cannotPid1 = cannotRunPid1();
if (cannotPid1) console.log(`SKIP: signals to the image's PID 1: ${cannotPid1}`);
(cannotPid1 ? describe.skip : describe)("the image's PID 1 and signals", () => {
  /** The ENTRYPOINT with this machine's init and Node, and the stand-in for bootstrap.mjs. */
  function entrypoint(): string[] {
    const [init, separator, node] = execForm(last(finalStage, "ENTRYPOINT"))!;
    expect([init, separator, node]).toEqual([INIT, "--", "/usr/local/bin/node"]);
    return [HOST_INIT, "--", process.execPath, "-e", WAIT_FOREVER];
  }

  it("without an init, Node as PID 1 ignores SIGTERM (why the image has one)", async () => {
    const started = await startAsPid1([process.execPath, "-e", WAIT_FOREVER]);
    try {
      process.kill(started.pid1, "SIGTERM");
      expect(await within(started.exited, 1_000)).toBe("still running");
    } finally {
      started.kill();
    }
  });

  it.each([
    ["SIGTERM", 143],
    ["SIGINT", 130],
  ] as const)("with the init as PID 1, %s stops Node and the container", async (signal, code) => {
    const started = await startAsPid1(entrypoint());
    try {
      process.kill(started.pid1, signal);
      // tini forwards the signal to Node, which ends on it; tini exits with 128 + the signal's number.
      expect(await within(started.exited, 5_000)).toEqual({ code, signal: null });
    } finally {
      started.kill();
    }
  });
});
