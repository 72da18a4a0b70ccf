import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildApp, EXAMPLE_STACK } from "../../modules/synth";
import { describeWithTerraform, TerraformWorkspace } from "./support/terraform";

const MODULE = "modules/memory-table";
const TESTS = join(__dirname, "fixtures/module-tests");
const EXAMPLE = "example";

/** The committed module itself: `terraform init` + `validate`, then `terraform test` with a mocked provider. */
describeWithTerraform("committed HCL module (terraform integration)", () => {
  let workspace: TerraformWorkspace;

  beforeAll(async () => {
    workspace = new TerraformWorkspace([MODULE]);
    mkdirSync(workspace.path(MODULE, "tests"));
    for (const file of readdirSync(TESTS))
      copyFileSync(join(TESTS, file), workspace.path(MODULE, "tests", file));
    // The example stack (the construct used directly), as `cdktf synth` writes it.
    const outdir = workspace.path("cdktf.out");
    buildApp(outdir).app.synth();
    mkdirSync(workspace.path(EXAMPLE));
    writeFileSync(
      workspace.path(EXAMPLE, "cdk.tf.json"),
      readFileSync(join(outdir, "stacks", EXAMPLE_STACK, "cdk.tf.json")),
    );
    await Promise.all([
      workspace.expectSuccess(MODULE, ["init", "-backend=false", "-no-color"]),
      workspace.expectSuccess(EXAMPLE, ["init", "-backend=false", "-no-color"]),
    ]);
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

  it("passes terraform test: toggles (key, issuer, ECR, tenant role) and refused variables", async () => {
    const result = await workspace.run(MODULE, ["test", "-no-color"], 240_000);
    const output = `${result.stdout}\n${result.stderr}`;
    expect({ code: result.code, output }).toEqual({
      code: 0,
      output: expect.stringMatching(/Success! \d+ passed, 0 failed/),
    });
    // Every run block of every file ran (none skipped after an earlier failure).
    const runs = readdirSync(TESTS).length;
    expect(output.match(/^\s+run "[^"]+"\.\.\. pass$/gm)?.length).toBeGreaterThanOrEqual(runs);
    for (const name of [
      "bad_name",
      "image_uri_not_pinned_by_digest",
      "timeout_over_29",
      "retention_not_allowed_by_cloudwatch",
      "bring_your_own_key",
      "http_cors_origin",
      "key_arn_with_the_created_key",
      "audience_with_the_created_user_pool",
      "issuer_with_the_created_user_pool",
      "no_user_pool_and_no_issuer",
      "account_id_while_looked_up",
      "no_lookup_and_no_account_id",
      "valid_values_plan",
      "external_issuer",
      "ecr_on",
      "tenant_role_on",
    ]) {
      expect(output).toContain(`run "${name}"... pass`);
    }
  }, 250_000);
});
