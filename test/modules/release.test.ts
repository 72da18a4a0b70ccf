import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MODULE_DIR } from "../../modules/synth";
import { MODULE_SOURCE } from "../../modules/readme-examples";
import { MODULE_TAG, MODULE_VERSION } from "../../modules/version";

const REPO = join(__dirname, "../..");
const changelog = readFileSync(join(REPO, "CHANGELOG.md"), "utf8");
const SEMVER = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;

/** `## [<version>] - <date>` headings, newest first, with the text under each. */
function releases(): { version: string; date: string; body: string }[] {
  const parts = changelog.split(/^## /m).slice(1);
  return parts
    .map((part) => /^\[([^\]]+)\](?: - (\S+))?\n([\s\S]*)$/.exec(part)!)
    .filter((match) => match[1] !== "Unreleased")
    .map((match) => ({ version: match[1]!, date: match[2] ?? "", body: match[3]! }));
}

describe("releases (CHANGELOG.md, module_version)", () => {
  it("keeps a changelog: Unreleased first, then releases newest first, each dated and linked", () => {
    expect(changelog).toMatch(/^# Changelog\n/);
    expect(changelog.split(/^## /m)[1]).toMatch(/^\[Unreleased\]\n/);
    const found = releases();
    expect(found.length).toBeGreaterThan(0);
    for (const release of found) {
      expect(release.version).toMatch(SEMVER);
      expect(release.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(changelog).toContain(`[${release.version}]: https://github.com/<owner>/memory-table/`);
    }
    const ordered = found.map((release) => release.version.split(".").map(Number));
    for (let i = 1; i < ordered.length; i++) {
      const [a, b] = [ordered[i - 1]!, ordered[i]!];
      expect(a[0]! * 1e6 + a[1]! * 1e3 + a[2]!).toBeGreaterThan(b[0]! * 1e6 + b[1]! * 1e3 + b[2]!);
    }
  });

  it("gives every release upgrade notes", () => {
    for (const release of releases()) {
      expect({
        version: release.version,
        notes: release.body.includes("### Upgrade notes"),
      }).toEqual({
        version: release.version,
        notes: true,
      });
    }
  });

  it("names one version: package.json's, the newest release, the module's output, README and examples", () => {
    const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string };
    expect(MODULE_VERSION).toBe(pkg.version);
    expect(releases()[0]!.version).toBe(MODULE_VERSION);
    const outputs = JSON.parse(readFileSync(join(MODULE_DIR, "outputs.tf.json"), "utf8")) as {
      output: Record<string, { value: unknown }>;
    };
    expect(outputs.output.module_version!.value).toBe(MODULE_VERSION);
    const readme = readFileSync(join(MODULE_DIR, "README.md"), "utf8");
    expect(readme).toContain(`Version \`${MODULE_VERSION}\` (git tag \`${MODULE_TAG}\``);
    expect(MODULE_SOURCE).toMatch(new RegExp(`\\?ref=${MODULE_TAG.replace(/\./g, "\\.")}$`));
  });
});
