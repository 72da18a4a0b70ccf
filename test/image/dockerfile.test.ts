import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
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
/** The runtime's filesystem before it is flattened: the base less what nothing at run time reads, plus tini. */
const slimStage = dockerfile.stages.find((stage) => stage.name === "slim")!;
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
  it("is multi-stage: build, then slim (the base trimmed), then a runtime stage that copies only from them", () => {
    expect(stageNames).toEqual(["build", "slim", "runtime"]);
    const fromStages = new Set(copies(finalStage).map((copy) => copy.from));
    expect([...fromStages].sort()).toEqual(["build", "slim"]);
    expect([...new Set(copies(slimStage).map((copy) => copy.from))]).toEqual(["build"]);
  });

  it("flattens the runtime stage: scratch, the whole slim stage as one layer, then the task root", () => {
    // Files removed in a layer above the base would still be in the base layer that is pulled.
    expect(finalStage.from).toBe("scratch");
    const layers = finalStage.instructions.filter((item) =>
      ["RUN", "COPY", "ADD"].includes(item.keyword),
    );
    expect(layers.map((item) => item.keyword)).toEqual(["COPY", "COPY"]);
    expect(copies(finalStage)[0]).toEqual({ from: "slim", sources: ["/"], dest: "/" });
    // scratch has no configuration: PATH comes back with the ENV of the runtime stage.
    expect(envOf(finalStage).PATH?.split(":")).toEqual(
      expect.arrayContaining(["/usr/local/bin", "/usr/bin", "/bin"]),
    );
  });

  it("pins the Dockerfile frontend (the syntax line) by digest, like the base", () => {
    expect(dockerfileText.split("\n")[0]).toMatch(
      /^# syntax=docker\/dockerfile:[\d.]+@sha256:[0-9a-f]{64}$/,
    );
  });

  it("pins every base image by digest, on the image's Node major, slim", () => {
    for (const stage of dockerfile.stages) {
      if (stageNames.includes(stage.from) || stage.from === "scratch") continue;
      expect(stage.from).toMatch(/^[\w./-]+:[\w.-]+@sha256:[0-9a-f]{64}$/);
    }
    expect(slimStage.from).toMatch(new RegExp(`^node:${IMAGE_NODE_MAJOR}-[\\w-]*slim@sha256:`));
    expect(slimStage.from).toBe(dockerfile.stages[0]!.from);
  });

  it("installs the native build tools in the build stage and none in the final stage", () => {
    const buildRuns = runs(dockerfile.stages[0]!).join("\n");
    for (const tool of [
      "autoconf",
      "automake",
      "binutils",
      "cmake",
      "g++",
      "libtool",
      "make",
      "python3",
      "xz-utils",
    ]) {
      expect(buildRuns).toContain(tool);
    }
    for (const stage of [slimStage, finalStage]) {
      for (const run of runs(stage)) expect(run).not.toMatch(COMPILERS);
      expect(runs(stage).join("\n")).not.toMatch(/apt-get|apk|dnf|yum/);
    }
  });

  it("builds the native addon against the base image's Node headers (no header download)", () => {
    // node-gyp's nodedir, in the spelling npm 11 passes on without an "Unknown env config" warning.
    expect(envOf(dockerfile.stages[0]!).npm_package_config_node_gyp_nodedir).toBe("/usr/local");
  });

  it("removes the base image's package managers from the runtime's filesystem", () => {
    const removed = runs(slimStage).join("\n");
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

  it("removes from the runtime's filesystem what the runtime never reads: C headers, Node's docs, iconv's modules", () => {
    const removed = runs(slimStage).join("\n");
    for (const path of [
      "/usr/lib/*-linux-gnu/gconv",
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
    // apt, dpkg and perl-base stay: an image built on this one can still apt-get install.
    expect(removed).not.toMatch(/\/usr\/bin\/(apt|dpkg|perl)|\/var\/lib\/dpkg/);
  });

  it("ships Node without its debug sections only (its symbols stay), made in the build stage", () => {
    expect(runs(dockerfile.stages[0]!).join("\n")).toContain(
      "strip --strip-debug -o /build/node /usr/local/bin/node",
    );
    expect(copies(slimStage)).toContainEqual({
      from: "build",
      sources: ["/build/node"],
      dest: "/usr/local/bin/node",
    });
  });

  it("builds with npm ci and `npm run build:image`, and ships exactly that tree, read-only, owned by root", () => {
    const buildStage = dockerfile.stages[0]!;
    const buildRuns = runs(buildStage).join("\n");
    expect(buildRuns).toMatch(/npm ci\b/);
    // Built where it runs: the compile cache names each module by its absolute path.
    expect(buildRuns).toMatch(
      /npm run build:image -- --out \/var\/task --compile-cache && chmod -R a=rX \/var\/task/,
    );
    const scripts = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")).scripts;
    expect(scripts["build:image"]).toBe("tsx scripts/build-image.ts");

    const taskRoot = envOf(finalStage).LAMBDA_TASK_ROOT;
    expect(taskRoot).toBe("/var/task");
    // The init (PID 1) goes into the system layer; the runtime stage adds exactly the built tree.
    expect(copies(slimStage)).toContainEqual({
      from: "build",
      sources: ["/usr/bin/tini-static"],
      dest: INIT,
    });
    expect(copies(slimStage)).toHaveLength(2);
    const [, tree] = copies(finalStage);
    expect(tree).toEqual({
      from: "build",
      sources: [`${taskRoot}/`],
      dest: `${taskRoot}/`,
    });
    const fromBuild = [slimStage, finalStage].flatMap((stage) =>
      stage.instructions.filter(
        (item) => item.keyword === "COPY" && item.args.includes("--from=build"),
      ),
    );
    expect(fromBuild).toHaveLength(3);
    for (const copy of fromBuild) expect(copy.args).toContain("--chown=root:root");
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
    // The build script and the scripts it imports (src/ and image/ are copied whole), each allowed by the
    // .dockerignore allowlist.
    const script = "scripts/build-image.ts";
    const scriptImports = [
      ...readFileSync(join(REPO_ROOT, script), "utf8").matchAll(/from "\.\/([\w-]+)"/g),
    ].map((match) => `scripts/${match[1]}.ts`);
    const allowed = readFileSync(join(REPO_ROOT, ".dockerignore"), "utf8").split("\n");
    for (const file of [script, ...scriptImports]) {
      expect(copied).toContain(file);
      expect(allowed).toContain(`!${file}`);
    }
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

  it("holds the code the entries share once: entry modules import it from chunks/, each loading at most 5 MB", () => {
    const modules = built.files.filter((file) => file.endsWith(".mjs") && !file.startsWith("ric/"));
    const bytes = (file: string) => statSync(join(outDir, file)).size;
    const entries = Object.values(IMAGE_HANDLERS).map((handler) => `${handler.split(".")[0]}.mjs`);
    for (const entry of entries) {
      expect(built.handlerBytes[entry]).toBeLessThanOrEqual(5 * 1024 * 1024);
      // The entry's module itself is small: its code is in the chunks it imports.
      expect(built.handlerBytes[entry]).toBeGreaterThan(10 * bytes(entry));
    }
    // Every module is on disk once: the tree is smaller than what the entries load, added up.
    const treeBytes = modules.reduce((total, file) => total + bytes(file), 0);
    const loadedTotal = entries.reduce((total, entry) => total + built.handlerBytes[entry]!, 0);
    expect(treeBytes).toBeLessThan(loadedTotal / 2);
    // The Secrets Manager and SSM clients are chunks of their own, loaded only when ENVIRONMENT_ARNS names
    // something: no entry's cold start parses them.
    const clients = modules.filter((file) =>
      /(SecretsManagerClient|SSMClient)=class extends/.test(
        readFileSync(join(outDir, file), "utf8"),
      ),
    );
    expect(clients).toHaveLength(2);
    for (const file of clients) {
      expect(file.startsWith("chunks/")).toBe(true);
      for (const entry of entries) expect(built.loads[entry]).not.toContain(file);
    }
    for (const entry of entries) {
      expect(built.loads[entry]).toContain(entry);
      expect(built.loads[entry]!.length).toBeGreaterThan(1);
    }
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
