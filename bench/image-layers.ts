/**
 * The runtime stage's layers and their uncompressed sizes, without a container engine and without the base image
 * (no registry but npm's and Debian's is reachable): a stand-in of `node:22-bookworm-slim` is built from the same
 * parts the real one is made of, and the Dockerfile's own instructions are applied to it.
 *
 * - Debian bookworm slim: `mmdebstrap --variant=minbase` (Priority required + apt, what debuerreotype puts in
 *   `debian:bookworm-slim`) with the slim variant's dpkg excludes (no docs but copyrights, no man pages, no
 *   locales), merged /usr. Built once, cached outside the repository.
 * - Node: the official Linux tarball's tree (`scripts/node22.sh`, the npm registry's node-linux-<arch>) in
 *   /usr/local, and the user `node`, as the node image's Dockerfile does. The registry's package has no
 *   lib/node_modules (npm, corepack) and the stand-in no yarn: the "before" image lacks those (about 17 MB).
 * - The runtime stage: the `slim` stage's RUN instructions run in a chroot of that tree, its COPYs from the build
 *   stage made here the way the build stage makes them (Debian's tini-static, Node stripped of its debug
 *   sections), then the task root. The tree is then run: Node starts in it as the user `node`.
 *
 * Needs root (chroot), mmdebstrap, strip (binutils) and tini; without one, the result says what is missing.
 */
import { spawn, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { REPO_ROOT } from "../scripts/build-image";
import { parseDockerfile, type Stage } from "../test/image/dockerfile";
import { buildWithBuildah, type BuildahResult } from "./image-buildah";

export interface Layer {
  image: "before" | "after";
  name: string;
  /** Bytes of the layer's tar stream (uncompressed). */
  bytes: number;
}

export interface ImageLayers {
  layers: Layer[];
  totalBytes: number;
}

export type LayersResult =
  | { skipped: string }
  | {
      base: string;
      before: ImageLayers;
      after: ImageLayers;
      checks: string[];
      /** The same stages built by buildah, where it is installed. */
      buildah: BuildahResult;
    };

/** Bumped when the stand-in's recipe changes, so that a cached one is rebuilt. */
const STAND_IN_VERSION = "debian-bookworm-slim-1";
const DEBIAN_SOURCES = [
  "deb http://deb.debian.org/debian bookworm main",
  "deb http://deb.debian.org/debian bookworm-updates main",
  "deb http://deb.debian.org/debian-security bookworm-security main",
];
/** debian:*-slim's dpkg filter (debuerreotype's slimify): copyrights stay, other docs, man pages and locales go. */
const SLIM_DPKG_OPTIONS = [
  "path-exclude=/usr/share/doc/*",
  "path-include=/usr/share/doc/*/copyright",
  "path-exclude=/usr/share/groff/*",
  "path-exclude=/usr/share/info/*",
  "path-exclude=/usr/share/linda/*",
  "path-exclude=/usr/share/lintian/overrides/*",
  "path-exclude=/usr/share/locale/*",
  "path-exclude=/usr/share/man/*",
];
/** The files of Node's tarball (the registry's package.json aside), as the node image extracts it to /usr/local. */
const NODE_TREE = ["bin", "include", "share", "LICENSE", "CHANGELOG.md", "README.md"];
const HOST_TINI = "/usr/bin/tini-static";

export async function measureLayers(taskRoots: {
  before: string;
  after: string;
}): Promise<LayersResult> {
  const missing = missingTools();
  if (missing) return { skipped: missing };
  const nodePackage = nodePackageDir();
  if (typeof nodePackage !== "string") return nodePackage;
  const base = debianStandIn();
  if (typeof base !== "string") return base;

  const work = mkdtempSync(join(tmpdir(), "memory-table-image-layers-"));
  try {
    const nodeLayer = join(work, "node-layer");
    mkdirSync(join(nodeLayer, "usr", "local"), { recursive: true });
    for (const entry of NODE_TREE) {
      cpSync(join(nodePackage, entry), join(nodeLayer, "usr", "local", entry), {
        recursive: true,
      });
    }
    symlinkSync("node", join(nodeLayer, "usr", "local", "bin", "nodejs"));

    const tiniLayer = join(work, "tini-layer");
    mkdirSync(join(tiniLayer, "usr", "local", "bin"), { recursive: true });
    cpSync(HOST_TINI, join(tiniLayer, "usr", "local", "bin", "tini"));

    const before: Layer[] = [
      { image: "before", name: "base: Debian bookworm slim", bytes: await tarBytes(base) },
      {
        image: "before",
        name: "base: Node (tarball in /usr/local; no npm, corepack, yarn here)",
        bytes: await tarBytes(nodeLayer),
      },
      { image: "before", name: "tini", bytes: await tarBytes(tiniLayer) },
      { image: "before", name: "/var/task", bytes: await tarBytes(taskRoots.before, "var/task") },
    ];

    // The slim stage: the base (Debian, Node, the user node), its RUNs in a chroot, its COPYs from the build stage.
    const root = join(work, "root");
    run("cp", ["-a", base, root]);
    run("cp", ["-a", `${nodeLayer}/usr/local/.`, join(root, "usr", "local")]);
    chroot(root, [
      "sh",
      "-c",
      "groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node",
    ]);
    const stripped = join(work, "node-stripped");
    run("strip", ["--strip-debug", "-o", stripped, join(root, "usr", "local", "bin", "node")]);
    const buildah = await buildWithBuildah({
      baseDir: root,
      taskRoot: taskRoots.after,
      strippedNode: stripped,
      tini: HOST_TINI,
      work,
    }).catch((error: unknown) => ({ skipped: `buildah failed: ${String(error)}` }));
    const slim = slimStage();
    for (const instruction of slim.instructions) {
      if (instruction.keyword === "RUN") chroot(root, ["/bin/sh", "-c", instruction.args]);
      if (instruction.keyword === "COPY") copyFromBuildStage(instruction.args, root, stripped);
    }
    const checks = checkTree(root);
    const after: Layer[] = [
      { image: "after", name: "system: the slim stage, flattened", bytes: await tarBytes(root) },
      { image: "after", name: "/var/task", bytes: await tarBytes(taskRoots.after, "var/task") },
    ];
    const total = (layers: Layer[]) => layers.reduce((sum, layer) => sum + layer.bytes, 0);
    return {
      base: `stand-in of node:22-bookworm-slim: mmdebstrap minbase bookworm (${packageCount(base)} packages) + Node ${nodeVersionOf(nodePackage)}`,
      before: { layers: before, totalBytes: total(before) },
      after: { layers: after, totalBytes: total(after) },
      checks,
      buildah,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Bytes of the files under `dir` (their sizes, as `du --apparent-size` counts them). */
export function treeBytes(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce((total, entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return total + treeBytes(path);
    return total + lstatSync(path).size;
  }, 0);
}

function missingTools(): string | undefined {
  if (process.platform !== "linux")
    return `Linux (the stand-in base is a Debian tree), not ${process.platform}`;
  if (process.getuid?.() !== 0) return "root: the Dockerfile's RUN instructions run in a chroot";
  for (const [tool, install] of [
    ["mmdebstrap", "apt-get install mmdebstrap"],
    ["strip", "apt-get install binutils"],
    ["tar", "apt-get install tar"],
  ]) {
    if (spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0) return `${tool} (${install})`;
  }
  if (!existsSync(HOST_TINI)) return `${HOST_TINI} (apt-get install tini)`;
  return undefined;
}

function nodePackageDir(): string | { skipped: string } {
  const result = spawnSync("bash", [join(REPO_ROOT, "scripts", "node22.sh")], { encoding: "utf8" });
  if (result.status !== 0)
    return { skipped: `Node's tarball tree: scripts/node22.sh failed: ${result.stderr.trim()}` };
  return dirname(result.stdout.trim());
}

/** The cached Debian bookworm slim tree, built by mmdebstrap on first use. */
function debianStandIn(): string | { skipped: string } {
  const cache = join(
    process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"),
    "memory-table",
    "image-base",
  );
  const target = join(cache, STAND_IN_VERSION);
  if (existsSync(join(target, "etc", "debian_version"))) return target;
  mkdirSync(cache, { recursive: true });
  const partial = `${target}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  console.log(
    `building the stand-in Debian bookworm slim tree in ${target} (once, about a minute)`,
  );
  const result = spawnSync(
    "mmdebstrap",
    [
      "--variant=minbase",
      "--mode=root",
      "--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr",
      "--quiet",
      ...SLIM_DPKG_OPTIONS.map((option) => `--dpkgopt=${option}`),
      "bookworm",
      partial,
      ...DEBIAN_SOURCES,
    ],
    { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 600_000 },
  );
  if (result.status !== 0) {
    rmSync(partial, { recursive: true, force: true });
    return {
      skipped: `mmdebstrap failed (${result.status ?? result.signal}): ${result.stderr.trim().split("\n").slice(-3).join(" ")}`,
    };
  }
  renameSync(partial, target);
  return target;
}

function slimStage(): Stage {
  const dockerfile = parseDockerfile(readFileSync(join(REPO_ROOT, "Dockerfile"), "utf8"));
  const stage = dockerfile.stages.find((each) => each.name === "slim");
  if (!stage)
    throw new Error("The Dockerfile has no `slim` stage: bench/image-layers.ts measures it");
  return stage;
}

/**
 * `COPY --from=build <source> <dest>` of the slim stage, with the build stage's file made here as the build stage
 * makes it. A source this does not know fails the bench, naming it: teach it here.
 */
function copyFromBuildStage(args: string, root: string, strippedNode: string): void {
  const words = args.split(/\s+/).filter((word) => !word.startsWith("--"));
  const [source, dest] = [words[0]!, words[1]!];
  if (!args.includes("--from=build") || words.length !== 2) {
    throw new Error(
      `bench/image-layers.ts reads only COPY --from=build <file> <dest>, got COPY ${args}`,
    );
  }
  const made: Record<string, string> = {
    "/usr/bin/tini-static": HOST_TINI,
    "/build/node": strippedNode,
  };
  if (!made[source]) {
    throw new Error(`bench/image-layers.ts does not know how the build stage makes ${source}`);
  }
  cpSync(made[source], join(root, dest));
}

/** Node starts in the flattened tree as the user `node`, its text decoding (ICU, not iconv) intact. */
function checkTree(root: string): string[] {
  const script =
    'const latin1 = new TextDecoder("latin1").decode(Uint8Array.of(0xe9));' +
    'const date = new Intl.DateTimeFormat("de-DE", { timeZone: "Europe/Berlin" }).format(0);' +
    "console.log(JSON.stringify([process.version, latin1, date]));";
  const output = chroot(root, ["/usr/local/bin/node", "-e", script], "1000:1000");
  const [version, latin1, date] = JSON.parse(output.trim()) as string[];
  if (latin1 !== "é" || date !== "1.1.1970") {
    throw new Error(`Node in the flattened tree decodes text wrongly: ${output}`);
  }
  const removed = ["usr/local/include", "usr/local/lib/node_modules", "usr/local/bin/npm"].filter(
    (path) => existsSync(join(root, path)),
  );
  if (removed.length > 0) throw new Error(`the slim stage left ${removed.join(", ")}`);
  return [`node ${version} runs as user node in the flattened tree; latin1 and Intl dates decode`];
}

function packageCount(root: string): number {
  return readFileSync(join(root, "var", "lib", "dpkg", "status"), "utf8")
    .split("\n")
    .filter((line) => line.startsWith("Package: ")).length;
}

function nodeVersionOf(nodePackage: string): string {
  return (
    JSON.parse(readFileSync(join(nodePackage, "package.json"), "utf8")) as { version: string }
  ).version;
}

function chroot(root: string, command: string[], userspec?: string): string {
  const args = [...(userspec ? [`--userspec=${userspec}`] : []), root, ...command];
  const result = spawnSync("chroot", args, {
    encoding: "utf8",
    env: { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", HOME: "/tmp" },
  });
  if (result.status !== 0) {
    throw new Error(`chroot ${args.join(" ")} failed (${result.status}): ${result.stderr}`);
  }
  return result.stdout;
}

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed: ${result.stderr}`);
}

/** Bytes of the tar stream of `dir`'s content, placed at `prefix` (e.g. `var/task`) as a layer would hold it. */
function tarBytes(dir: string, prefix?: string): Promise<number> {
  const args = ["--numeric-owner", "-cf", "-", "-C", dir];
  if (prefix) args.push(`--transform=s,^\\.,${prefix},`);
  args.push(".");
  return new Promise((resolve, reject) => {
    const tar = spawn("tar", args, { stdio: ["ignore", "pipe", "pipe"] });
    let bytes = 0;
    let errors = "";
    tar.stdout.on("data", (chunk: Buffer) => (bytes += chunk.length));
    tar.stderr.on("data", (chunk: Buffer) => (errors += chunk.toString()));
    tar.once("error", reject);
    tar.once("close", (code) =>
      code === 0 ? resolve(bytes) : reject(new Error(`tar of ${dir} failed (${code}): ${errors}`)),
    );
  });
}
