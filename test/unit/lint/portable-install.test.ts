import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

// `npm ci` works on every platform a developer or the image builds on: npm refuses a required (non-optional)
// package whose `os`/`cpu` exclude the machine, and npm scripts run the first `node` on PATH, which a package
// with a `node` bin would replace by its own. Read from the lockfile, which is what `npm ci` installs.
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

describe("portable install (package-lock.json)", () => {
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
