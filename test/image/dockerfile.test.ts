import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { IMAGE_HANDLERS } from "../../src/runtime/environment";
import { BOOTSTRAP_FILE, buildImage, REPO_ROOT, type ImageBuild } from "../../scripts/build-image";
import { envOf, execForm, last, parseDockerfile, type Stage } from "./dockerfile";
import { IMAGE_NODE_MAJOR } from "./ric-process";

/**
 * What no build can check here (no Docker engine): the Dockerfile's shape, and that it ships exactly the tree
 * `npm run build:image` writes, which the end-to-end test runs.
 */
const dockerfile = parseDockerfile(readFileSync(join(REPO_ROOT, "Dockerfile"), "utf8"));
const dockerignore = readFileSync(join(REPO_ROOT, ".dockerignore"), "utf8")
  .split("\n")
  .map((line) => line.trim())
  .filter((line) => line !== "" && !line.startsWith("#"));
const finalStage = dockerfile.stages.at(-1)!;
const stageNames = dockerfile.stages.map((stage) => stage.name);
const COMPILERS =
  /\b(gcc|g\+\+|clang|cmake|make|build-essential|autoconf|automake|libtool|node-gyp)\b/;

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
  let built: ImageBuild;
  let outDir: string;

  beforeAll(async () => {
    // Its own output directory: the end-to-end test may be writing dist/image at the same time.
    outDir = mkdtempSync(join(tmpdir(), "memory-table-image-tree-"));
    built = await buildImage(outDir);
  }, 60_000);

  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it("is multi-stage: a named build stage, then a runtime stage that copies only from it", () => {
    expect(dockerfile.stages.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile.stages[0]!.name).toBe("build");
    expect(finalStage.name).toBe("runtime");
    const fromStages = copies(finalStage).map((copy) => copy.from);
    expect(fromStages).toEqual(["build"]);
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
    const [copy] = copies(finalStage);
    expect(copy).toEqual({
      from: "build",
      sources: [`${workdir}/dist/image/`],
      dest: `${taskRoot}/`,
    });
    expect(last(finalStage, "COPY")!.args).toContain("--chown=root:root");
  });

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
    expect(entrypoint).toEqual(["/usr/local/bin/node", posix.join(taskRoot, BOOTSTRAP_FILE)]);
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

  it("writes only to /tmp: HOME and the npm cache live there, and it runs as a non-root user", () => {
    const env = envOf(finalStage);
    expect(env.NPM_CONFIG_CACHE).toMatch(/^\/tmp\//);
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
