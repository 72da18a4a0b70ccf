import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../../scripts/build-image";

/**
 * scripts/push-image.sh: `--dry-run` prints every command it would run, and nothing runs. The PATH of the
 * dry runs has neither `aws` nor `docker`, so a command that ran instead of being printed would fail the script.
 */
const SCRIPT = join(REPO_ROOT, "scripts", "push-image.sh");
const REPOSITORY = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/memory-table";
const BARE_PATH = "/usr/bin:/bin";

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function push(args: string[], path = BARE_PATH) {
  const result = spawnSync("bash", [SCRIPT, ...args], {
    encoding: "utf8",
    env: { PATH: path, HOME: "/tmp" },
    cwd: REPO_ROOT,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("scripts/push-image.sh", () => {
  beforeAll(() => {
    // The premise of the dry-run tests: these tools are not reachable on the bare PATH.
    for (const tool of ["aws", "docker"]) {
      expect(
        spawnSync("bash", ["-c", `command -v ${tool}`], { env: { PATH: BARE_PATH } }).status,
      ).not.toBe(0);
    }
  });

  it("--dry-run prints login, buildx build without attestations and with a metadata file, then the image_uri", () => {
    const result = push(["--repository", REPOSITORY, "--tag", "v1.2.3", "--dry-run"]);
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout.trim().split("\n")).toEqual([
      "+ aws ecr get-login-password --region eu-west-1 | docker login --username AWS --password-stdin 123456789012.dkr.ecr.eu-west-1.amazonaws.com",
      expect.stringMatching(
        new RegExp(
          `^\\+ docker buildx build --provenance=false --sbom=false --platform linux/amd64 --tag ${escape(REPOSITORY)}:v1\\.2\\.3 --metadata-file \\S+/push-image-metadata\\.\\w+ --push ${escape(REPO_ROOT)}$`,
        ),
      ),
      `image_uri=${REPOSITORY}@sha256:<containerimage.digest of memory-table:v1.2.3>`,
    ]);
  });

  it("builds for linux/arm64 when the function's architecture is arm64", () => {
    const result = push([
      "--repository",
      REPOSITORY,
      "--tag",
      "v1",
      "--arch",
      "arm64",
      "--dry-run",
    ]);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("--platform linux/arm64");
  });

  it("tags with the git commit by default", () => {
    const head = spawnSync("git", ["rev-parse", "--short=12", "HEAD"], {
      cwd: REPO_ROOT,
      encoding: "utf8",
    });
    if (head.status !== 0) {
      console.log("SKIP: default tag check: not a git checkout");
      return;
    }
    const result = push(["--repository", REPOSITORY, "--dry-run"], process.env.PATH ?? BARE_PATH);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`--tag ${REPOSITORY}:git-${head.stdout.trim()} `);
  });

  it.each([
    [
      ["--repository", "docker.io/library/memory-table"],
      /^Invalid --repository: expected <account>\.dkr\.ecr\.<region>\.amazonaws\.com\/<name>, got 'docker\.io/,
    ],
    [
      ["--repository", REPOSITORY, "--arch", "amd64"],
      /^Invalid --arch: expected x86_64 or arm64, got 'amd64'/,
    ],
    [["--repository", REPOSITORY, "--tag", "bad tag!"], /^Invalid --tag: expected letters, digits/],
    [
      ["--repository", REPOSITORY, "--force"],
      /^Invalid argument: expected --repository, --tag, --arch or --dry-run, got '--force'/,
    ],
    [["--repository"], /^Invalid --repository: expected a value, got nothing/],
  ])("rejects %j before running anything", (args, message) => {
    const result = push([...args, "--dry-run"]);
    expect(result.status).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(message);
  });

  it("takes the digest from buildx's metadata file, not a lookup by tag (stub aws/docker: no registry here)", () => {
    const bin = mkdtempSync(join(tmpdir(), "push-image-bin-"));
    const calls = join(bin, "calls.log");
    const digest = `sha256:${"ab".repeat(32)}`;
    // Stubs for tools that need a registry; each records its arguments.
    writeFileSync(
      join(bin, "aws"),
      `#!/bin/bash\necho "aws $*" >> ${calls}\n[ "$2" = get-login-password ] && echo pw\nexit 0\n`,
      { mode: 0o755 },
    );
    writeFileSync(
      join(bin, "docker"),
      [
        "#!/bin/bash",
        `echo "docker $*" >> ${calls}`,
        'if [ "$1" = buildx ] && [ "$2" = build ]; then',
        '  while [ $# -gt 0 ]; do [ "$1" = --metadata-file ] && file="$2"; shift; done',
        `  printf '{"containerimage.config.digest": "sha256:${"cd".repeat(32)}", "containerimage.digest": "${digest}"}' > "$file"`,
        "fi",
        "cat > /dev/null",
        "exit 0",
      ].join("\n"),
      { mode: 0o755 },
    );
    try {
      const result = push(["--repository", REPOSITORY, "--tag", "v9"], `${bin}:${BARE_PATH}`);
      expect(result.status).toBe(0);
      expect(result.stdout.trim().split("\n").at(-1)).toBe(`image_uri=${REPOSITORY}@${digest}`);
      const log = readFileSync(calls, "utf8");
      expect(log).toMatch(/docker buildx build .*--metadata-file /);
      expect(log).not.toMatch(/describe-images/);
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it("without --dry-run, stops before any command when the aws CLI is missing", () => {
    const result = push(["--repository", REPOSITORY, "--tag", "v1"]);
    expect(result.status).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^The aws CLI is missing/);
  });
});
