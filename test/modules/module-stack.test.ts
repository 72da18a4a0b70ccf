import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Testing } from "../../modules/cdktf";
import {
  AWS_PROVIDER_CONSTRAINT,
  ModuleStack,
  TERRAFORM_CONSTRAINT,
} from "../../modules/module-stack";
import { buildApp, MODULE_DIR, renderModuleFiles } from "../../modules/synth";
import { routeId } from "../../modules/construct/api";
import { ROUTES } from "../../src/runtime/routes";
import { useScratchOutdir } from "./support/outdir";
import { expectSecurityBar } from "./support/security-bar";
import { synthesize } from "./support/synthesized";

/** Every address but the routes (one per entry of ROUTES). Changing one needs a `moved` block for consumers. */
const STABLE_ADDRESSES = [
  "aws_apigatewayv2_api.http_api",
  "aws_apigatewayv2_authorizer.http_api_authorizer",
  "aws_apigatewayv2_integration.http_api_integration",
  "aws_apigatewayv2_stage.http_api_stage",
  "aws_cloudwatch_log_group.access_log_group",
  "aws_cloudwatch_log_group.api_log_group",
  "aws_cloudwatch_log_group.cleaner_log_group",
  "aws_cognito_user_pool.user_pool",
  "aws_cognito_user_pool_client.user_pool_client",
  "aws_dynamodb_table.table",
  "aws_ecr_lifecycle_policy.repository_lifecycle",
  "aws_ecr_repository.repository",
  "aws_iam_role.cleaner_role",
  "aws_iam_role.function_role",
  "aws_iam_role.tenant_role",
  "aws_iam_role_policy.cleaner_role_policy",
  "aws_iam_role_policy.function_role_policy",
  "aws_iam_role_policy.tenant_role_assume",
  "aws_iam_role_policy.tenant_role_policy",
  "aws_kms_alias.key_alias",
  "aws_kms_key.key",
  "aws_lambda_event_source_mapping.cleaner_trigger",
  "aws_lambda_function.cleaner_function",
  "aws_lambda_function.function",
  "aws_lambda_permission.http_api_permission",
  "aws_sqs_queue.dead_letter_queue",
  "data.aws_caller_identity.environment_caller",
  "data.aws_partition.environment_partition",
  "data.aws_region.environment_region",
];

const outdir = useScratchOutdir();
const build = () => new ModuleStack(Testing.app({ outdir: outdir() }), "memory-table-module");

describe("HCL module stack (synth)", () => {
  it("meets the security bar, with exact IAM actions per role, through its variables", () => {
    expectSecurityBar(synthesize(build()));
  });

  it("has no backend, no provider block and a provider range instead of CDKTF's exact pin", () => {
    const synthesized = synthesize(build());
    expect(synthesized.provider).toBeUndefined();
    expect(synthesized.terraform).toEqual({
      required_providers: { aws: { source: "hashicorp/aws", version: AWS_PROVIDER_CONSTRAINT } },
      required_version: TERRAFORM_CONSTRAINT,
    });
  });

  it("declares snake_case variables with descriptions; only name and image_uri are required", () => {
    const variables = synthesize(build()).variable!;
    for (const [name, variable] of Object.entries(variables)) {
      expect(name).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(variable).toMatchObject({ type: expect.any(String), description: expect.any(String) });
    }
    const required = Object.entries(variables).filter(([, variable]) => !("default" in variable));
    expect(required.map(([name]) => name).sort()).toEqual(["image_uri", "name"]);
    for (const name of [
      "name",
      "image_uri",
      "timeout",
      "log_retention_in_days",
      "cors_allow_origins",
      "environment",
    ]) {
      expect(variables[name]!.validation).toEqual([
        {
          condition: expect.stringMatching(/^\$\{.+\}$/),
          error_message: expect.stringMatching(`^Invalid ${name}: expected`),
        },
      ]);
    }
    expect(variables.timeout!.default).toBe(29);
    expect(variables.log_retention_in_days!.default).toBe(365);
    expect(variables.create_ecr_repository!.default).toBe(false);
    expect(variables.create_kms_key!.default).toBe(true);
    expect(variables.kms_key_arn!.default).toBeNull();
    // The bundled handler makes no STS call: the tenant role is opt-in, and says so.
    expect(variables.create_tenant_role!.default).toBe(false);
    expect(variables.create_tenant_role!.description).toMatch(
      /^Create a role for tenant-scoped credentials .*for callers that assume it per tenant.*The bundled handler does not assume it yet$/,
    );
  });

  it("exports the outputs platform teams expect", () => {
    const outputs = Object.keys(synthesize(build()).output!);
    expect(outputs).toEqual(
      expect.arrayContaining([
        "dynamodb_table_name",
        "dynamodb_table_arn",
        "dynamodb_table_stream_arn",
        "lambda_function_name",
        "lambda_function_arn",
        "lambda_role_arn",
        "lambda_role_name",
        "kms_key_arn",
        "kms_key_alias",
        "api_id",
        "api_endpoint",
        "api_execution_arn",
        "stage_invoke_url",
        "lambda_log_group_name",
        "access_log_group_name",
        "cognito_user_pool_id",
        "cognito_user_pool_client_id",
        "dead_letter_queue_arn",
        "tenant_role_arn",
        "cleaner_role_arn",
      ]),
    );
  });

  it("gives resources readable addresses without hash suffixes", () => {
    const synthesized = synthesize(build());
    const addresses = Object.entries(synthesized.resource).flatMap(([type, resources]) =>
      Object.keys(resources).map((name) => `${type}.${name}`),
    );
    expect(addresses).toEqual(
      expect.arrayContaining([
        "aws_dynamodb_table.table",
        "aws_kms_key.key",
        "aws_lambda_function.function",
      ]),
    );
    for (const address of addresses) expect(address).not.toMatch(/_[0-9A-F]{8}$/);
  });

  it("keeps every resource address stable (a rename destroys and recreates consumers' resources)", () => {
    const synthesized = synthesize(build());
    const addresses = [
      ...Object.entries(synthesized.resource).flatMap(([type, resources]) =>
        Object.keys(resources).map((name) => `${type}.${name}`),
      ),
      ...Object.entries(synthesized.data ?? {}).flatMap(([type, sources]) =>
        Object.keys(sources).map((name) => `data.${type}.${name}`),
      ),
    ];
    expect(addresses.sort()).toEqual(
      [
        ...STABLE_ADDRESSES,
        ...ROUTES.map((route) => `aws_apigatewayv2_route.http_api_${routeId(route)}`),
      ].sort(),
    );
  });

  it("is committed exactly as synthesized: re-running npm run synth gives no diff", () => {
    const files = renderModuleFiles(build());
    const committed = readdirSync(MODULE_DIR).filter(
      (name) => name.endsWith(".tf.json") || name === "README.md",
    );
    expect(committed.sort()).toEqual(Object.keys(files).sort());
    // A change to a shared contract (table definition, routes, environment, IAM actions) changes the module too.
    const stale = Object.entries(files)
      .filter(([name, content]) => readFileSync(join(MODULE_DIR, name), "utf8") !== content)
      .map(
        ([name]) => `modules/memory-table/${name} is stale: run \`npm run synth\` and commit it`,
      );
    expect(stale).toEqual([]);
  });
});

describe("example stack (synth)", () => {
  it("uses the construct directly and meets the security bar", () => {
    const { exampleStack } = buildApp(outdir());
    expectSecurityBar(synthesize(exampleStack));
  });
});
