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
import { ROUTES } from "../../src/runtime/http/routes";
import { useScratchOutdir } from "./support/outdir";
import { expectSecurityBar } from "./support/security-bar";
import { synthesize, synthesizeWithoutToggles } from "./support/synthesized";

/** Every address but the routes (one per entry of ROUTES). Changing one needs a `moved` block for consumers. */
const STABLE_ADDRESSES = [
  "aws_apigatewayv2_api.http_api",
  "aws_apigatewayv2_api_mapping.api_mapping",
  "aws_apigatewayv2_domain_name.api_domain_name",
  "aws_apigatewayv2_authorizer.http_api_authorizer",
  "aws_apigatewayv2_authorizer.http_api_lambda_authorizer",
  "aws_apigatewayv2_integration.http_api_integration",
  "aws_apigatewayv2_stage.http_api_stage",
  "aws_cloudwatch_log_group.access_log_group",
  "aws_cloudwatch_log_group.api_log_group",
  "aws_cloudwatch_log_group.authorizer_log_group",
  "aws_cloudwatch_log_group.cleaner_log_group",
  "aws_cloudwatch_log_group.worker_log_group",
  "aws_cloudwatch_log_metric_filter.alarms_function_runs_failed_filter",
  "aws_cloudwatch_log_metric_filter.alarms_function_runs_timed_out_filter",
  "aws_cloudwatch_log_metric_filter.alarms_worker_function_runs_failed_filter",
  "aws_cloudwatch_log_metric_filter.alarms_worker_function_runs_timed_out_filter",
  "aws_cloudwatch_metric_alarm.alarms_api_5xx_rate",
  "aws_cloudwatch_metric_alarm.alarms_cleaner_function_errors",
  "aws_cloudwatch_metric_alarm.alarms_cleaner_function_throttles",
  "aws_cloudwatch_metric_alarm.alarms_cleaner_iterator_age",
  "aws_cloudwatch_metric_alarm.alarms_dead_letter_queue",
  "aws_cloudwatch_metric_alarm.alarms_dynamodb_throttles",
  "aws_cloudwatch_metric_alarm.alarms_function_errors",
  "aws_cloudwatch_metric_alarm.alarms_function_runs_failed",
  "aws_cloudwatch_metric_alarm.alarms_function_runs_timed_out",
  "aws_cloudwatch_metric_alarm.alarms_function_throttles",
  "aws_cloudwatch_metric_alarm.alarms_worker_failed_jobs",
  "aws_cloudwatch_metric_alarm.alarms_worker_failure_queue_age",
  "aws_cloudwatch_metric_alarm.alarms_worker_function_errors",
  "aws_cloudwatch_metric_alarm.alarms_worker_function_runs_failed",
  "aws_cloudwatch_metric_alarm.alarms_worker_function_runs_timed_out",
  "aws_cloudwatch_metric_alarm.alarms_worker_function_throttles",
  "aws_cognito_user_pool.user_pool",
  "aws_cognito_user_pool_client.user_pool_client",
  "aws_dynamodb_table.table",
  "aws_ecr_lifecycle_policy.repository_lifecycle",
  "aws_ecr_repository.repository",
  "aws_iam_role.cleaner_role",
  "aws_iam_role.function_role",
  "aws_iam_role.request_authorizer_role",
  "aws_iam_role.tenant_role",
  "aws_iam_role.worker_role",
  "aws_iam_role_policy.cleaner_role_policy",
  "aws_iam_role_policy.function_role_graph_secrets",
  "aws_iam_role_policy.function_role_graph_statements",
  "aws_iam_role_policy.function_role_policy",
  "aws_iam_role_policy.request_authorizer_role_policy",
  "aws_iam_role_policy.request_authorizer_role_table_key",
  "aws_iam_role_policy.request_authorizer_role_vpc",
  "aws_iam_role_policy.tenant_role_assume",
  "aws_iam_role_policy.tenant_role_assume_worker_function",
  "aws_iam_role_policy.tenant_role_policy",
  "aws_iam_role_policy.worker_role_graph_secrets",
  "aws_iam_role_policy.worker_role_graph_statements",
  "aws_iam_role_policy.worker_role_policy",
  "aws_iam_role_policy_attachment.function_role_graph_policies",
  "aws_iam_role_policy_attachment.worker_role_graph_policies",
  "aws_kms_alias.key_alias",
  "aws_kms_key.alarms_topic_key",
  "aws_kms_key.key",
  "aws_lambda_alias.function_alias",
  "aws_lambda_alias.worker_alias",
  "aws_lambda_alias.cleaner_alias",
  "aws_lambda_alias.stream_alias",
  "aws_lambda_alias.request_authorizer_alias",
  "aws_lambda_function.function_external_image",
  "aws_lambda_function.worker_function_external_image",
  "aws_lambda_function.cleaner_function_external_image",
  "aws_lambda_function.stream_function_external_image",
  "aws_lambda_event_source_mapping.cleaner_trigger",
  "aws_lambda_event_source_mapping.worker_failure_trigger",
  "aws_lambda_function.cleaner_function",
  "aws_lambda_function.function",
  "aws_lambda_function.request_authorizer_function",
  "aws_lambda_function.request_authorizer_function_external_image",
  "aws_lambda_function.worker_function",
  "aws_lambda_function_event_invoke_config.worker_invoke_config",
  "aws_lambda_permission.http_api_lambda_authorizer_permission",
  "aws_lambda_permission.http_api_permission",
  "aws_lambda_provisioned_concurrency_config.function_alias_provisioned_concurrency",
  "aws_sns_topic.alarms_topic",
  "aws_sns_topic_policy.alarms_topic_policy",
  "aws_sqs_queue.dead_letter_queue",
  "aws_sqs_queue.worker_failure_queue",
  "aws_cloudwatch_log_group.stream_log_group",
  "aws_iam_role.stream_role",
  "aws_iam_role_policy.stream_role_policy",
  "aws_iam_role_policy.stream_role_graph_statements",
  "aws_iam_role_policy.stream_role_graph_secrets",
  "aws_iam_role_policy.tenant_role_assume_stream_function",
  "aws_iam_role_policy_attachment.stream_role_graph_policies",
  "aws_lambda_function.stream_function",
  "aws_lambda_function_url.stream_url",
  "aws_lambda_permission.stream_url_permission",
  "aws_cloudcontrolapi_resource.stream_invoke_via_url_permission",
  "aws_cloudfront_distribution.stream_domain_distribution",
  "aws_iam_role_policy.cleaner_role_vpc",
  "aws_cloudwatch_metric_alarm.alarms_api_latency",
  "aws_cloudwatch_metric_alarm.alarms_function_provisioned_spillover",
  "aws_cloudwatch_metric_alarm.alarms_function_concurrency",
  "aws_cloudwatch_metric_alarm.alarms_function_duration",
  "aws_cloudwatch_metric_alarm.alarms_worker_function_concurrency",
  "aws_cloudwatch_metric_alarm.alarms_stream_function_concurrency",
  "aws_cloudwatch_metric_alarm.alarms_stream_function_url_5xx_rate",
  "aws_cloudwatch_metric_alarm.alarms_cleaner_function_concurrency",
  "aws_cloudwatch_metric_alarm.alarms_cleaner_function_duration",
  "aws_iam_role_policy.function_role_vpc",
  "aws_iam_role_policy.stream_role_vpc",
  "aws_iam_role_policy.worker_role_vpc",
  "aws_iam_role_policy.function_role_table_key",
  "aws_iam_role_policy.worker_role_table_key",
  "aws_iam_role_policy.cleaner_role_table_key",
  "aws_iam_role_policy.stream_role_table_key",
  "aws_cloudwatch_metric_alarm.alarms_stream_function_errors",
  "aws_cloudwatch_metric_alarm.alarms_stream_function_throttles",
  "aws_cloudwatch_metric_alarm.alarms_stream_function_runs_failed",
  "aws_cloudwatch_metric_alarm.alarms_stream_function_runs_timed_out",
  "aws_cloudwatch_log_metric_filter.alarms_stream_function_runs_failed_filter",
  "aws_cloudwatch_log_metric_filter.alarms_stream_function_runs_timed_out_filter",
  "aws_cloudwatch_event_rule.recovery_sweep_rule",
  "aws_cloudwatch_event_target.recovery_sweep_target",
  "aws_lambda_permission.recovery_sweep_permission",
  "data.aws_caller_identity.environment_caller",
  "data.aws_partition.environment_partition",
  "data.aws_region.environment_region",
];

const outdir = useScratchOutdir();
const build = () => new ModuleStack(Testing.app({ outdir: outdir() }), "memory-table-module");

describe("HCL module stack (synth)", () => {
  it("meets the security bar, with exact IAM actions per role, through its variables", () => {
    expectSecurityBar(synthesizeWithoutToggles(build()));
  });

  it("switches every resource off with create, and gives each function a variant that ignores image_uri", () => {
    const stack = build();
    const base = synthesizeWithoutToggles(stack);
    const toggled = synthesize(stack);
    // The same resources, plus one variant per function.
    const functions = Object.keys(base.resource.aws_lambda_function!);
    expect(Object.keys(toggled.resource.aws_lambda_function!).sort()).toEqual(
      [...functions, ...functions.map((name) => `${name}_external_image`)].sort(),
    );
    for (const [type, resources] of Object.entries(toggled.resource)) {
      for (const [name, config] of Object.entries(resources)) {
        const switched = String(config.count ?? config.for_each);
        expect({ address: `${type}.${name}`, switched }).toEqual({
          address: `${type}.${name}`,
          switched: expect.stringMatching(/^\$\{var\.create \? .+ : (0|\{\})\}$/),
        });
      }
    }
    for (const name of functions) {
      const managed = toggled.resource.aws_lambda_function![name]!;
      const external = toggled.resource.aws_lambda_function![`${name}_external_image`]!;
      expect(external.lifecycle).toEqual({ ignore_changes: ["image_uri"] });
      expect(managed.lifecycle).toBeUndefined();
      // Exactly one of the two: the same settings otherwise.
      expect(String(managed.count)).toContain("!var.image_uri_managed_externally ?");
      expect(String(external.count)).toContain("var.image_uri_managed_externally ?");
      const settings = (config: Record<string, unknown>) =>
        Object.fromEntries(
          Object.entries(config).filter(
            ([key]) => !["count", "lifecycle", "depends_on"].includes(key),
          ),
        );
      expect(settings(external)).toEqual(settings(managed));
    }
    // No reference to a resource reads it as if it had no count.
    const plain = Object.entries(base.resource)
      .flatMap(([type, resources]) =>
        Object.entries(resources)
          .filter(([, config]) => config.count === undefined && config.for_each === undefined)
          .map(([name]) => `${type}.${name}.`),
      )
      .filter((reference) => toggled.text.includes(reference));
    expect(plain).toEqual([]);
    // Outputs that read a resource are null without it; module_version is always known.
    for (const [name, output] of Object.entries(toggled.output!)) {
      if (name === "module_version") continue;
      expect({ name, value: output.value }).toEqual({
        name,
        value: expect.stringMatching(/^\$\{var\.create \? .+ : null\}$|^\$\{var\.[a-z_]+\}$/),
      });
    }
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
      "secrets",
      "secrets_kms_key_arns",
      "graph_policy_statements",
      "graph_policy_arns",
      "attach_tenant_role_assume_policy",
      "alias_name",
      "provisioned_concurrent_executions",
      "create_alarm_topic",
      "alarm_sns_topic_arn",
      "alarm_thresholds",
      "worker_timeout",
      "worker_memory_size",
      "worker_reserved_concurrent_executions",
      "worker_maximum_retry_attempts",
      "worker_maximum_event_age_in_seconds",
      "max_run_legs",
      "webhook_allowed_hosts",
      "stream_timeout",
      "stream_memory_size",
      "stream_reserved_concurrent_executions",
      "stream_cors_allow_origins",
      "jwt_audience",
    ]) {
      const rules = variables[name]!.validation as unknown[];
      expect(rules.length).toBeGreaterThan(0);
      for (const rule of rules) {
        expect(rule).toEqual({
          condition: expect.stringMatching(/^\$\{.+\}$/),
          error_message: expect.stringMatching(`^Invalid ${name}: expected`),
        });
      }
    }
    // Everything new is off by default: a plan of an existing deployment changes nothing but what it must. The
    // exception, in the upgrade notes: every function is released behind an alias (publish, since 0.3.0).
    expect(variables.publish!.default).toBe(true);
    expect(variables.create!.default).toBe(true);
    expect(variables.canary_weight!.default).toBe(0);
    expect(variables.stable_version!.default).toBeNull();
    for (const name of [
      "image_uri_managed_externally",
      "create_alarms",
      "create_alarm_topic",
      "attach_tenant_role_assume_policy",
    ]) {
      expect({ name, default: variables[name]!.default }).toEqual({ name, default: false });
    }
    expect(variables.provisioned_concurrent_executions!.default).toBe(0);
    expect(variables.secrets!.default).toEqual({});
    expect(variables.graph_policy_statements!.default).toEqual({});
    // The environment guard names the refused variables and points to secrets.
    expect(
      (variables.environment!.validation as { error_message: string }[])[0]!.error_message,
    ).toMatch(
      /^Invalid environment: expected .*give its Secrets Manager or SSM SecureString ARN in secrets instead.*, got \$\{jsonencode\(\[for name, value in var\.environment : name if .+\]\)\}\.$/,
    );
    expect(variables.timeout!.default).toBe(29);
    // The worker: Lambda's longest timeout, the API function's memory, Lambda's retries, an hour's wait at most;
    // eight legs; no webhook host.
    expect(variables.worker_timeout!.default).toBe(900);
    expect(variables.worker_memory_size!.default).toBeNull();
    expect(variables.worker_maximum_retry_attempts!.default).toBe(2);
    expect(variables.worker_maximum_event_age_in_seconds!.default).toBe(3600);
    expect(variables.max_run_legs!.default).toBe(8);
    expect(variables.webhook_allowed_hosts!.default).toEqual([]);
    // Streaming is on by default (every LangGraph client streams), for up to Lambda's longest timeout; its CORS
    // origins and memory follow the API function's unless given.
    expect(variables.create_stream_function!.default).toBe(true);
    expect(variables.stream_timeout!.default).toBe(900);
    expect(variables.stream_memory_size!.default).toBeNull();
    expect(variables.stream_reserved_concurrent_executions!.default).toBe(50);
    expect(variables.stream_cors_allow_origins!.default).toBeNull();
    expect(variables.cors_allow_origins!.default).toEqual([]);
    // Who may call the stream function comes from the authorizer's issuer only, never from environment.
    expect(
      (variables.environment!.validation as { error_message: string }[])[1]!.error_message,
    ).toMatch(
      /^Invalid environment: expected none of JWT_ISSUER, JWT_AUDIENCE .*, got \$\{jsonencode\(/,
    );
    // The worker is no toggle: background runs need it.
    expect(
      Object.keys(variables).filter((name) => /worker/.test(name) && name.startsWith("create_")),
    ).toEqual([]);
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
        // Function ARNs and invoke ARNs, log groups, API, stage and authorizer, user pool, key, queue, alarms.
        "lambda_function_invoke_arn",
        "lambda_function_qualified_arn",
        "lambda_function_version",
        "lambda_alias_name",
        "lambda_alias_arn",
        "lambda_alias_invoke_arn",
        "cleaner_function_arn",
        "lambda_log_group_arn",
        "cleaner_log_group_name",
        "cleaner_log_group_arn",
        "access_log_group_arn",
        "api_arn",
        "stage_id",
        "stage_arn",
        "authorizer_id",
        "cognito_user_pool_arn",
        "kms_key_id",
        "dead_letter_queue_url",
        "alarm_sns_topic_arn",
        "cloudwatch_metric_alarm_arns",
        // The background-run worker.
        "worker_function_name",
        "worker_function_arn",
        "worker_role_name",
        "worker_role_arn",
        "worker_log_group_name",
        "worker_log_group_arn",
        "worker_failure_queue_name",
        "worker_failure_queue_url",
        "worker_failure_queue_arn",
        // Streaming.
        "stream_url",
        "stream_function_name",
        "stream_function_arn",
        "stream_role_name",
        "stream_role_arn",
        "stream_log_group_name",
        "stream_log_group_arn",
      ]),
    );
    for (const output of Object.values(synthesize(build()).output!)) {
      expect(output.description).toEqual(expect.any(String));
    }
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
      (name) =>
        name.endsWith(".tf.json") ||
        ["README.md", ".checkov.yaml", ".trivyignore", "kics.config"].includes(name),
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
