/**
 * The image bench's cross-check with a real builder, where Debian's buildah is installed: the Dockerfile's
 * `slim` and `runtime` stages, verbatim, built by buildah (chroot isolation) on the stand-in base, their layer
 * sizes read from buildah's storage, and the image's ENTRYPOINT + CMD run in it up to the runtime client's first
 * `invocation/next`. The build stage is the one part stood in for: it compiles the runtime client's addon and
 * needs the base's npm, so its three outputs (the task root, tini-static, Node without debug sections) are made
 * on the host, as image-layers.ts makes them, and copied into a stand-in build stage.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RuntimeApiEmulator } from "../test/image/runtime-api";
import { execForm, last, parseDockerfile } from "../test/image/dockerfile";
import { REPO_ROOT } from "../scripts/build-image";

export type BuildahResult =
  | { skipped: string }
  | {
      builder: string;
      /** Uncompressed bytes of each layer of the built image, bottom first (buildah's diff sizes). */
      layerBytes: number[];
      /** The API entry's init in the built image reached the Runtime API's `invocation/next`. */
      ranEntry: string;
    };

export interface BuildahInputs {
  /** The stand-in base's tree (Debian, Node, the user node), before the slim stage. */
  baseDir: string;
  /** The task root to ship. */
  taskRoot: string;
  /** Node stripped of its debug sections, and tini-static: the build stage's other outputs. */
  strippedNode: string;
  tini: string;
  work: string;
}

const PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export async function buildWithBuildah(inputs: BuildahInputs): Promise<BuildahResult> {
  if (spawnSync("sh", ["-c", "command -v buildah"]).status !== 0) {
    return {
      skipped: "buildah (apt-get install buildah): the layers are not cross-checked by a builder",
    };
  }
  const tag = `localhost/memory-table-bench-${process.pid}`;
  const base = `${tag}-base:latest`;
  const image = `${tag}:latest`;
  const before = new Set(buildah(["images", "-q", "--no-trunc"]).split("\n").filter(Boolean));
  try {
    const container = buildah(["from", "-q", "scratch"]).trim();
    try {
      const mount = buildah(["mount", container]).trim();
      run("cp", ["-a", `${inputs.baseDir}/.`, mount]);
      buildah(["umount", container]);
      buildah(["config", "--env", `PATH=${PATH}`, container]);
      buildah(["commit", "-q", container, base]);
    } finally {
      buildah(["rm", container]);
    }

    const context = join(inputs.work, "buildah-context");
    mkdirSync(context, { recursive: true });
    cpSync(inputs.taskRoot, join(context, "image"), { recursive: true });
    run("chmod", ["-R", "a=rX", join(context, "image")]);
    cpSync(inputs.strippedNode, join(context, "node"));
    cpSync(inputs.tini, join(context, "tini-static"));
    chmodSync(join(context, "node"), 0o755);
    const dockerfile = readFileSync(join(REPO_ROOT, "Dockerfile"), "utf8");
    const slimAndRuntime = dockerfile.slice(dockerfile.indexOf("FROM ${NODE_IMAGE} AS slim"));
    writeFileSync(
      join(context, "Dockerfile"),
      [
        "ARG NODE_IMAGE",
        "FROM ${NODE_IMAGE} AS build",
        "COPY tini-static /usr/bin/tini-static",
        "COPY node /build/node",
        "COPY image/ /var/task/",
        "",
        slimAndRuntime,
      ].join("\n"),
    );
    buildah([
      "build",
      "--isolation",
      "chroot",
      "--layers",
      "-q",
      "--build-arg",
      `NODE_IMAGE=${base}`,
      "-t",
      image,
      "-f",
      join(context, "Dockerfile"),
      context,
    ]);
    const layerBytes = readLayerBytes(image);
    const ranEntry = await runEntry(image, dockerfile);
    return {
      builder: buildah(["--version"]).trim(),
      layerBytes,
      ranEntry,
    };
  } finally {
    // Only what this run made: its two tags (an image of identical content made earlier keeps its other
    // names) and the images its build created.
    for (const name of [image, base]) spawnSync("buildah", ["rmi", name], { stdio: "ignore" });
    const made = buildah(["images", "-q", "--no-trunc"])
      .split("\n")
      .filter((id) => id && !before.has(id));
    for (const id of made) spawnSync("buildah", ["rmi", "-f", id], { stdio: "ignore" });
  }
}

function readLayerBytes(image: string): number[] {
  const info = JSON.parse(buildah(["inspect", "--type", "image", image])) as {
    OCIv1: { rootfs: { diff_ids: string[] } };
  };
  const graphRoot = (JSON.parse(buildah(["info"])) as { store: { GraphRoot: string } }).store
    .GraphRoot;
  const driver = (JSON.parse(buildah(["info"])) as { store: { GraphDriverName: string } }).store
    .GraphDriverName;
  const layers = JSON.parse(
    readFileSync(join(graphRoot, `${driver}-layers`, "layers.json"), "utf8"),
  ) as Array<{ "diff-digest"?: string; "diff-size"?: number }>;
  return info.OCIv1.rootfs.diff_ids.map((digest) => {
    const size = layers.find((layer) => layer["diff-digest"] === digest)?.["diff-size"];
    if (size === undefined) throw new Error(`buildah's storage has no size for layer ${digest}`);
    return size;
  });
}

/** The image's ENTRYPOINT + CMD, in a buildah container, up to the runtime client's first `invocation/next`. */
async function runEntry(image: string, dockerfile: string): Promise<string> {
  const runtime = parseDockerfile(dockerfile).stages.at(-1)!;
  const command = [...execForm(last(runtime, "ENTRYPOINT"))!, ...execForm(last(runtime, "CMD"))!];
  const api = await RuntimeApiEmulator.start();
  const container = buildah(["from", "-q", image]).trim();
  try {
    const child = spawn(
      "buildah",
      [
        "run",
        "--isolation",
        "chroot",
        "--network",
        "host",
        "--env",
        `AWS_LAMBDA_RUNTIME_API=${api.address}`,
        "--env",
        "TABLE_NAME=memory-table-bench",
        "--env",
        "AWS_REGION=us-east-1",
        "--env",
        "LOG_LEVEL=warn",
        container,
        "--",
        ...command,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      api.waitForIdleRuntime().then(() => "ready" as const),
      exited.then((code) => `exited (${code})`),
      new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve("no invocation/next within 60 s"), 60_000);
      }),
    ]).finally(() => clearTimeout(timer));
    // Closing the Runtime API ends the client's poll, and with it the process.
    await api.stop();
    const gone = await Promise.race([
      exited.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 10_000)),
    ]);
    if (!gone) {
      child.kill("SIGKILL");
      await exited;
    }
    if (outcome !== "ready") throw new Error(`the built image's entry ${outcome}:\n${output}`);
    return `${command.join(" ")}: init done, polled invocation/next`;
  } finally {
    await api.stop().catch(() => undefined);
    buildah(["rm", container]);
  }
}

function buildah(args: string[]): string {
  const result = spawnSync("buildah", args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) {
    throw new Error(`buildah ${args.join(" ")} failed (${result.status}): ${result.stderr.trim()}`);
  }
  return result.stdout;
}

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed: ${result.stderr}`);
}
