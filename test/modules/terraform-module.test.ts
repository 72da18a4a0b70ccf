import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildApp, EXAMPLE_STACK, MODULE_DIR } from "../../modules/synth";
import { TAGGABLE_TYPES } from "./support/security-bar";
import { describeWithTerraform, TerraformWorkspace } from "./support/terraform";

const MODULE = "modules/memory-table";
const TESTS = join(__dirname, "fixtures/module-tests");
const EXAMPLE = "example";
const REFUSED = "refused-environment";

interface ProviderSchema {
  provider_schemas: Record<
    string,
    { resource_schemas: Record<string, { block: { attributes?: Record<string, unknown> } }> }
  >;
}

/** The committed module itself: `terraform init` + `validate`, then `terraform test` with a mocked provider. */
describeWithTerraform("committed HCL module (terraform integration)", () => {
  let workspace: TerraformWorkspace;

  beforeAll(async () => {
    workspace = new TerraformWorkspace([MODULE]);
    // The test files and the mocked provider they share (mocks/, their `mock_provider` source).
    cpSync(TESTS, workspace.path(MODULE, "tests"), { recursive: true });
    // The example stack (the construct used directly), as `cdktf synth` writes it.
    const outdir = workspace.path("cdktf.out");
    buildApp(outdir).app.synth();
    mkdirSync(workspace.path(EXAMPLE));
    writeFileSync(
      workspace.path(EXAMPLE, "cdk.tf.json"),
      readFileSync(join(outdir, "stacks", EXAMPLE_STACK, "cdk.tf.json")),
    );
    // A consumer whose environment holds secrets in plain sight.
    mkdirSync(workspace.path(REFUSED));
    writeFileSync(
      workspace.path(REFUSED, "main.tf"),
      `module "agents" {
  source            = "../${MODULE}"
  name              = "agents"
  image_uri         = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/memory-table@sha256:${"0".repeat(64)}"
  lookup_account_id = false
  account_id        = "123456789012"
  environment = {
    GITHUB_TOKEN = "ghp_plaintext"
    MAX_TOKENS   = "4096"
    DATABASE_URL = "postgres://app:hunter2@db.internal:5432/app"
  }
}
`,
    );
    await Promise.all(
      [MODULE, EXAMPLE, REFUSED].map((dir) =>
        workspace.expectSuccess(dir, ["init", "-backend=false", "-no-color"]),
      ),
    );
  }, 120_000);

  afterAll(() => workspace?.dispose());

  it("passes terraform validate", async () => {
    const output = await workspace.expectSuccess(MODULE, ["validate", "-no-color"]);
    expect(output).toContain("Success! The configuration is valid.");
  });

  it("validates the CDKTF example stack that uses the construct directly", async () => {
    const output = await workspace.expectSuccess(EXAMPLE, ["validate", "-no-color"]);
    expect(output).toContain("Success! The configuration is valid.");
  });

  it("refuses plaintext secrets in environment, naming them (never their values) and pointing to secrets", async () => {
    const result = await workspace.run(REFUSED, ["validate", "-no-color"]);
    const output = `${result.stdout}\n${result.stderr}`.replace(/\s+/g, " ");
    expect(result.code).not.toBe(0);
    expect(output).toContain("Invalid environment: expected no variable named like a secret");
    expect(output).toContain("give its Secrets Manager or SSM SecureString ARN in secrets instead");
    // The refused names, and only them: MAX_TOKENS is an ordinary name.
    expect(output).toContain('got ["DATABASE_URL","GITHUB_TOKEN"].');
    // Terraform quotes the consumer's own source lines; the module's message carries names only.
    const message = /Invalid environment:.*?This was checked/.exec(output)![0];
    expect(message).not.toMatch(/ghp_plaintext|hunter2/);
  });

  it("tags every resource whose type the AWS provider lets carry tags", async () => {
    const schema = JSON.parse(
      await workspace.expectSuccess(MODULE, ["providers", "schema", "-json"]),
    ) as ProviderSchema;
    const resources =
      schema.provider_schemas["registry.terraform.io/hashicorp/aws"]!.resource_schemas;
    const main = JSON.parse(readFileSync(join(MODULE_DIR, "main.tf.json"), "utf8")) as {
      resource: Record<string, Record<string, Record<string, unknown>>>;
    };
    const taggable = Object.keys(main.resource).filter(
      (type) => resources[type]!.block.attributes?.tags !== undefined,
    );
    // The synth-level security bar checks exactly these types.
    expect(taggable.sort()).toEqual([...TAGGABLE_TYPES].sort());
    const untagged = taggable.flatMap((type) =>
      Object.entries(main.resource[type]!)
        .filter(([, config]) => config.tags === undefined)
        .map(([name]) => `${type}.${name}`),
    );
    expect(untagged).toEqual([]);
  }, 120_000);

  it("passes terraform test: every toggle on and off, and every refused value", async () => {
    // The files in parallel: each plans the module dozens of times (minutes each on a loaded machine; six files
    // took 591 s on a 2-CPU machine at load 8, hence the generous bound).
    const files = readdirSync(TESTS).filter((file) => file.endsWith(".tftest.hcl"));
    const results = await Promise.all(
      files.map((file) =>
        workspace.run(MODULE, ["test", "-no-color", `-filter=tests/${file}`], 900_000),
      ),
    );
    const output = results.map((result) => `${result.stdout}\n${result.stderr}`).join("\n");
    for (const result of results) {
      expect({ code: result.code, output }).toEqual({
        code: 0,
        output: expect.stringMatching(/Success! \d+ passed, 0 failed/),
      });
    }
    // Every run block of every file ran (none skipped after an earlier failure).
    const declared = files.flatMap((file) =>
      [...readFileSync(join(TESTS, file), "utf8").matchAll(/^run "([^"]+)"/gm)].map(
        (match) => match[1]!,
      ),
    );
    expect(declared.length).toBeGreaterThanOrEqual(29);
    for (const name of declared) expect(output).toContain(`run "${name}"... pass`);
  }, 920_000);
});
