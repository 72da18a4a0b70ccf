import { execFile, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/**
 * Runs terraform offline against the local provider mirror, in temporary copies of the module and fixtures
 * (never a `.terraform/` in the repository). Where terraform or the mirror is missing, `missing` says which.
 */

const REPO = resolve(__dirname, "../../..");
export const PROVIDER_MIRROR = process.env.MEMORY_TABLE_TF_PLUGIN_MIRROR ?? "/opt/tf-plugins";

export interface TerraformAvailability {
  available: boolean;
  /** What is missing, for the SKIP line. */
  missing?: string;
}

export function terraformAvailability(): TerraformAvailability {
  const version = spawnSync("terraform", ["version"], {
    encoding: "utf8",
    env: { ...process.env, TF_CLI_CONFIG_FILE: "/dev/null" },
  });
  if (version.error || version.status !== 0) {
    return { available: false, missing: "the terraform binary is not on PATH" };
  }
  if (!existsSync(join(PROVIDER_MIRROR, "registry.terraform.io/hashicorp/aws"))) {
    return {
      available: false,
      missing: `the hashicorp/aws provider mirror (${PROVIDER_MIRROR}/registry.terraform.io/hashicorp/aws) is absent`,
    };
  }
  return { available: true };
}

/** `describe`, or `describe.skip` with a visible SKIP line naming what is missing. */
export function describeWithTerraform(title: string, body: () => void): void {
  const availability = terraformAvailability();
  if (!availability.available) {
    console.log(`SKIP: ${title}: ${availability.missing}`);
    describe.skip(title, body);
    return;
  }
  describe(title, body);
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A temporary tree mirroring the repository's layout for the paths it copies, with its own CLI config. */
export class TerraformWorkspace {
  readonly root = mkdtempSync(join(tmpdir(), "memory-table-tf-"));
  private readonly cliConfig = join(this.root, "terraform.tfrc");

  constructor(paths: string[]) {
    writeFileSync(
      this.cliConfig,
      [
        "provider_installation {",
        `  filesystem_mirror {`,
        `    path    = ${JSON.stringify(PROVIDER_MIRROR)}`,
        `    include = ["registry.terraform.io/hashicorp/aws"]`,
        "  }",
        `  direct {`,
        `    exclude = ["registry.terraform.io/hashicorp/aws"]`,
        "  }",
        "}",
        "",
      ].join("\n"),
    );
    for (const path of paths) cpSync(join(REPO, path), join(this.root, path), { recursive: true });
  }

  path(...parts: string[]): string {
    return join(this.root, ...parts);
  }

  run(cwd: string, args: string[], timeoutMs = 170_000): Promise<RunResult> {
    return new Promise((done) => {
      execFile(
        "terraform",
        args,
        {
          cwd: join(this.root, cwd),
          timeout: timeoutMs,
          maxBuffer: 64 * 1024 * 1024,
          env: {
            ...process.env,
            TF_CLI_CONFIG_FILE: this.cliConfig,
            TF_IN_AUTOMATION: "1",
            TF_INPUT: "0",
            CHECKPOINT_DISABLE: "1",
            // The consumer's provider block carries fake credentials; nothing from the machine may leak in.
            AWS_PROFILE: "",
            AWS_CONFIG_FILE: "/dev/null",
            AWS_SHARED_CREDENTIALS_FILE: "/dev/null",
          },
        },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
          done({ code, stdout, stderr });
        },
      );
    });
  }

  /** Runs and fails the test with terraform's own output when the command fails. */
  async expectSuccess(cwd: string, args: string[]): Promise<string> {
    const result = await this.run(cwd, args);
    if (result.code !== 0) {
      throw new Error(
        `terraform ${args.join(" ")} failed (${result.code}):\n${result.stdout}\n${result.stderr}`,
      );
    }
    return result.stdout;
  }

  dispose(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}
