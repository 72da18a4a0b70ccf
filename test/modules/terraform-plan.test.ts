import { describeWithTerraform, TerraformWorkspace } from "./support/terraform";
import { ROUTES } from "../../src/runtime/http/routes";
import { ENVIRONMENT, IMAGE_HANDLERS } from "../../src/runtime/environment";
import { STREAM_HANDLER } from "../../modules/construct/stream";
import { RECOVERY_SWEEP_KIND } from "../../src/shared/worker-events";
import { MODULE_VERSION } from "../../modules/version";
import { CRONS_ENABLED } from "../../modules/construct/crons";

const CONSUMER = "test/modules/fixtures/consumer";

interface ResourceChange {
  address: string;
  module_address?: string;
  type: string;
  change: {
    actions: string[];
    after: Record<string, unknown>;
    after_unknown: Record<string, unknown>;
  };
}

/** Set in the plan: a known value, or one only known after apply (an ARN of a resource to be created). */
function isSet(change: ResourceChange, attribute: string): boolean {
  const value = change.change.after[attribute];
  return (
    (value !== null && value !== undefined && value !== "") ||
    change.change.after_unknown[attribute] === true
  );
}

/**
 * An HCL consumer calls the committed module twice with for_each and plans offline (fake credentials, skip flags);
 * the security bar is then checked on `terraform show -json` of the saved plan.
 */
describeWithTerraform("HCL consumer plan (terraform integration)", () => {
  let workspace: TerraformWorkspace;
  let changes: ResourceChange[];
  const inModule = (key: string, type: string) =>
    changes.filter(
      (change) => change.module_address === `module.agents["${key}"]` && change.type === type,
    );
  const one = (
    key: string,
    type: string,
    predicate: (change: ResourceChange) => boolean = () => true,
  ) => {
    const found = inModule(key, type).filter(predicate);
    expect(found.map((change) => change.address)).toHaveLength(1);
    return found[0]!;
  };

  beforeAll(async () => {
    workspace = new TerraformWorkspace(["modules/memory-table", CONSUMER]);
    await workspace.expectSuccess(CONSUMER, ["init", "-backend=false", "-no-color"]);
    await workspace.expectSuccess(CONSUMER, ["plan", "-no-color", "-out=plan.tfplan"]);
    const shown = await workspace.expectSuccess(CONSUMER, ["show", "-json", "plan.tfplan"]);
    changes = (JSON.parse(shown) as { resource_changes: ResourceChange[] }).resource_changes;
  }, 170_000);

  afterAll(() => workspace?.dispose());

  it("plans both module instances, creating only", () => {
    for (const key of ["support", "billing"]) {
      expect(inModule(key, "aws_dynamodb_table")).toHaveLength(1);
    }
    for (const change of changes) expect(change.change.actions).toEqual(["create"]);
  });

  it("plans nothing for an instance with create = false, and outputs only its version", async () => {
    expect(changes.filter((change) => change.address.startsWith("module.disabled."))).toEqual([]);
    const outputs = JSON.parse(
      await workspace.expectSuccess(CONSUMER, ["show", "-json", "plan.tfplan"]),
    ) as { planned_values: { outputs: Record<string, { value?: unknown }> } };
    expect(outputs.planned_values.outputs.disabled!.value).toEqual({
      api_endpoint: null,
      module_version: MODULE_VERSION,
    });
  });

  it("releases every function behind an alias, with the API's canary, and lets a pipeline own the image (support)", () => {
    const aliases = inModule("support", "aws_lambda_alias");
    expect(aliases.map((alias) => alias.change.after.name)).toEqual(
      Array.from({ length: 4 }, () => "live"),
    );
    const api = aliases.find((alias) => alias.address.endsWith("function_alias[0]"))!;
    expect(api.change.after.function_version).toBe("3");
    expect(api.change.after_unknown.routing_config).toEqual([{ additional_version_weights: true }]);
    // Every function is the variant that ignores image_uri; each publishes.
    const functions = inModule("support", "aws_lambda_function");
    expect(functions).toHaveLength(4);
    for (const fn of functions) {
      expect(fn.address).toMatch(/_external_image\[0\]$/);
      expect(fn.change.after.publish).toBe(true);
    }
    // The URL, the schedule and both mappings invoke an alias.
    expect(one("support", "aws_lambda_function_url").change.after.qualifier).toBe("live");
    const scheduled = one(
      "support",
      "aws_lambda_permission",
      (change) => change.change.after.principal === "events.amazonaws.com",
    );
    expect(scheduled.change.after.qualifier).toBe("live");
    for (const mapping of inModule("support", "aws_lambda_event_source_mapping")) {
      expect(mapping.change.after_unknown.function_name).toBe(true);
    }
    // billing publishes nothing: $LATEST everywhere, its functions managed by Terraform.
    for (const fn of inModule("billing", "aws_lambda_function")) {
      expect(fn.address).not.toContain("_external_image");
      expect(fn.change.after.publish).toBe(false);
    }
  });

  it("plans no Lambda permission that lets principal * invoke without the function-URL condition", () => {
    const permissions = changes.filter((change) => change.type === "aws_lambda_permission");
    expect(permissions.length).toBeGreaterThan(0);
    const unconditioned = permissions
      .filter((change) => change.change.after.principal === "*")
      .filter(
        (change) =>
          change.change.after.action !== "lambda:InvokeFunctionUrl" ||
          change.change.after.function_url_auth_type !== "NONE",
      )
      .map((change) => change.address);
    expect(unconditioned).toEqual([]);
    // The same for the statements declared through Cloud Control.
    const viaCloudControl = changes
      .filter(
        (change) =>
          change.type === "aws_cloudcontrolapi_resource" &&
          change.change.after.type_name === "AWS::Lambda::Permission",
      )
      .map(
        (change) =>
          JSON.parse(String(change.change.after.desired_state)) as Record<string, unknown>,
      );
    expect(viaCloudControl.length).toBeGreaterThan(0);
    for (const state of viaCloudControl) {
      expect(state).toMatchObject({ Principal: "*", InvokedViaFunctionUrl: true });
    }
  });

  it.each(["support", "billing"])("keeps the security bar on planned values (%s)", (key) => {
    const table = one(key, "aws_dynamodb_table");
    expect(table.change.after).toMatchObject({
      name: `agents-${key}`,
      point_in_time_recovery: [{ enabled: true }],
      server_side_encryption: [{ enabled: true }],
      deletion_protection_enabled: true,
      stream_view_type: "KEYS_ONLY",
    });
    expect(table.change.after_unknown.server_side_encryption).toEqual([{ kms_key_arn: true }]);

    const moduleKey = one(key, "aws_kms_key", (change) => change.address.includes(".key["));
    for (const someKey of inModule(key, "aws_kms_key")) {
      expect(someKey.change.after).toMatchObject({ enable_key_rotation: true });
    }
    const keyPolicy = JSON.parse(String(moduleKey.change.after.policy)) as {
      Statement: {
        Sid: string;
        Principal: unknown;
        Condition?: { ArnEquals?: Record<string, string[]> };
      }[];
    };
    for (const statement of keyPolicy.Statement)
      expect(JSON.stringify(statement.Principal)).not.toContain('"*"');
    // CloudWatch Logs may use the key for exactly the log groups this instance plans, nothing else.
    const logsStatement = keyPolicy.Statement.find(
      (statement) => statement.Sid === "CloudWatchLogsForThisModule",
    )!;
    const plannedGroups = inModule(key, "aws_cloudwatch_log_group").map((group) =>
      String(group.change.after.name),
    );
    // The stream function's group only where it is created (support).
    expect(plannedGroups).toHaveLength(key === "support" ? 5 : 4);
    expect(
      [...logsStatement.Condition!.ArnEquals!["kms:EncryptionContext:aws:logs:arn"]!].sort(),
    ).toEqual(
      plannedGroups.map((name) => `arn:aws:logs:eu-west-1:123456789012:log-group:${name}`).sort(),
    );

    for (const fn of inModule(key, "aws_lambda_function")) {
      expect(fn.change.after).toMatchObject({
        package_type: "Image",
        tracing_config: [{ mode: "Active" }],
      });
      expect(fn.change.after.reserved_concurrent_executions).toBeGreaterThan(0);
      // Invoked synchronously (API Gateway, the stream mapping), or with an on-failure destination (the worker):
      // no dead-letter queue.
      expect(fn.change.after.dead_letter_config).toEqual([]);
      expect(fn.change.after.logging_config).toEqual([
        expect.objectContaining({
          log_format: "JSON",
          application_log_level: "INFO",
          system_log_level: "INFO",
        }),
      ]);
      expect(isSet(fn, "kms_key_arn")).toBe(true);
    }
    const api = one(
      key,
      "aws_lambda_function",
      (fn) => fn.change.after.function_name === `agents-${key}`,
    );
    expect(api.change.after.timeout).toBeLessThanOrEqual(29);
    expect(api.change.after.image_config).toEqual([
      { command: [IMAGE_HANDLERS.api], entry_point: null, working_directory: null },
    ]);
    const worker = one(
      key,
      "aws_lambda_function",
      (fn) => fn.change.after.function_name === `agents-${key}-worker`,
    );
    expect(worker.change.after).toMatchObject({
      image_uri: api.change.after.image_uri,
      image_config: [
        { command: [IMAGE_HANDLERS.worker], entry_point: null, working_directory: null },
      ],
      timeout: key === "support" ? 600 : 900,
      memory_size: api.change.after.memory_size,
      reserved_concurrent_executions: key === "support" ? 10 : 20,
    });
    if (key === "billing") {
      const variablesOf = (fn: ResourceChange) =>
        (fn.change.after.environment as { variables: Record<string, string> }[])[0]!.variables;
      const runtime = {
        [ENVIRONMENT.tableName]: `agents-${key}`,
        [ENVIRONMENT.logLevel]: "info",
        [ENVIRONMENT.deadlineMarginMs]: "3000",
        [ENVIRONMENT.maxRunLegs]: "8",
        [ENVIRONMENT.webhookAllowedHosts]: "",
        // billing turns crons off.
        [CRONS_ENABLED]: "false",
        GRAPH_MODULE: "graphs/booking.js",
        MAX_TOKENS: "4096",
      };
      expect(variablesOf(api)).toEqual({
        ...runtime,
        [ENVIRONMENT.tenantClaim]: "custom:tenant_id",
        [ENVIRONMENT.workerFunctionName]: `agents-${key}-worker`,
      });
      expect(variablesOf(worker)).toEqual({
        ...runtime,
        [ENVIRONMENT.workerFunctionName]: `agents-${key}-worker`,
      });
    } else {
      // A secret's ARN is known only after apply, and so is the variable that carries the ARNs.
      expect(api.change.after_unknown.environment).toEqual([{ variables: true }]);
      expect(worker.change.after_unknown.environment).toEqual([{ variables: true }]);
    }

    // The worker: Lambda retries a failed leg, then sends its job to the worker's own queue, which feeds it.
    const invokeConfig = one(key, "aws_lambda_function_event_invoke_config");
    expect(invokeConfig.change.after).toMatchObject({
      function_name: `agents-${key}-worker`,
      maximum_retry_attempts: 2,
      maximum_event_age_in_seconds: 3600,
    });
    expect(invokeConfig.change.after_unknown.destination_config).toEqual([
      expect.objectContaining({ on_failure: [{ destination: true }] }),
    ]);
    const failureQueue = one(
      key,
      "aws_sqs_queue",
      (queue) => queue.change.after.name === `agents-${key}-worker-failures`,
    );
    expect(failureQueue.change.after).toMatchObject({
      message_retention_seconds: 1209600,
      visibility_timeout_seconds: 6 * (key === "support" ? 600 : 900),
      tags: { team: key },
    });
    const failureTrigger = one(
      key,
      "aws_lambda_event_source_mapping",
      // The queue's mapping filters nothing; the stream's keeps only removals of thread records.
      (mapping) => (mapping.change.after.filter_criteria as unknown[]).length === 0,
    );
    expect(failureTrigger.change.after).toMatchObject({
      batch_size: 5,
      function_response_types: ["ReportBatchItemFailures"],
      scaling_config: [{ maximum_concurrency: 2 }],
      tags: { team: key },
    });
    expect(failureTrigger.change.after_unknown).toMatchObject({
      event_source_arn: true,
      function_name: true,
    });

    for (const role of inModule(key, "aws_iam_role").filter(
      (r) => !String(r.change.after.name).includes("-tenant-"),
    )) {
      expect(JSON.parse(String(role.change.after.assume_role_policy))).toMatchObject({
        Statement: [{ Principal: { Service: "lambda.amazonaws.com" }, Action: ["sts:AssumeRole"] }],
      });
    }

    const permission = one(
      key,
      "aws_lambda_permission",
      (change) => change.change.after.principal === "apigateway.amazonaws.com",
    );
    expect(permission.change.after).toMatchObject({
      action: "lambda:InvokeFunction",
      principal: "apigateway.amazonaws.com",
    });
    expect(permission.change.after_unknown.source_arn).toBe(true);

    const routes = inModule(key, "aws_apigatewayv2_route");
    expect(routes.map((route) => route.change.after.route_key).sort()).toEqual(
      ROUTES.map((route) => `${route.method} ${route.path}`).sort(),
    );
    for (const route of routes) {
      expect(route.change.after.authorization_type).toBe("JWT");
      expect(route.change.after_unknown.authorizer_id).toBe(true);
    }
    const stage = one(key, "aws_apigatewayv2_stage");
    expect(stage.change.after.default_route_settings).toEqual([
      expect.objectContaining({ throttling_burst_limit: 100, throttling_rate_limit: 50 }),
    ]);
    expect(stage.change.after_unknown.access_log_settings).toEqual([{ destination_arn: true }]);

    for (const group of inModule(key, "aws_cloudwatch_log_group")) {
      expect(group.change.after.retention_in_days).toBe(365);
      expect(isSet(group, "kms_key_id")).toBe(true);
    }
    const queues = inModule(key, "aws_sqs_queue");
    expect(queues).toHaveLength(2);
    for (const queue of queues) expect(isSet(queue, "kms_master_key_id")).toBe(true);

    const trigger = one(
      key,
      "aws_lambda_event_source_mapping",
      (mapping) => mapping !== failureTrigger,
    );
    expect(trigger.change.after.tags).toEqual({ team: key });
    expect(
      JSON.parse(
        String(
          (trigger.change.after.filter_criteria as { filter: { pattern: string }[] }[])[0]!
            .filter[0]!.pattern,
        ),
      ),
    ).toEqual({
      eventName: ["REMOVE"],
      dynamodb: { Keys: { sk: { S: ["m"] } } },
    });
  });

  it("schedules the recovery sweep where a schedule is given: the worker invoked with the sweep event, by that rule only", () => {
    const rule = one("support", "aws_cloudwatch_event_rule");
    expect(rule.change.after).toMatchObject({
      name: "agents-support-recovery-sweep",
      schedule_expression: "rate(2 minutes)",
      tags: { team: "support" },
    });
    const target = one("support", "aws_cloudwatch_event_target");
    expect(JSON.parse(String(target.change.after.input))).toEqual({ kind: RECOVERY_SWEEP_KIND });
    expect(target.change.after).toMatchObject({
      rule: "agents-support-recovery-sweep",
      target_id: "worker",
    });
    expect(target.change.after_unknown.arn).toBe(true);
    const permission = one(
      "support",
      "aws_lambda_permission",
      (change) => change.change.after.principal === "events.amazonaws.com",
    );
    expect(permission.change.after).toMatchObject({
      action: "lambda:InvokeFunction",
      function_name: "agents-support-worker",
      statement_id: "AllowRecoverySweepSchedule",
      // The worker's alias: support publishes.
      qualifier: "live",
    });
    // The rule's ARN, known after apply.
    expect(permission.change.after_unknown.source_arn).toBe(true);
    // recovery_sweep_schedule = null: none of it.
    for (const type of ["aws_cloudwatch_event_rule", "aws_cloudwatch_event_target"]) {
      expect({ type, planned: inModule("billing", type).length }).toEqual({ type, planned: 0 });
    }
    expect(
      inModule("billing", "aws_lambda_permission").map((change) => change.change.after.principal),
    ).toEqual(["apigateway.amazonaws.com"]);
  });

  it("gives the support API its custom domain, with a certificate of the same apply, and billing none", () => {
    const domain = one("support", "aws_apigatewayv2_domain_name");
    expect(domain.change.after).toMatchObject({
      domain_name: "support-agents.example.com",
      domain_name_configuration: [{ endpoint_type: "REGIONAL", security_policy: "TLS_1_2" }],
      tags: { team: "support" },
    });
    // The certificate is requested in the same apply: known only then, and the module still plans.
    expect(
      (domain.change.after_unknown.domain_name_configuration as { certificate_arn?: boolean }[])[0]
        ?.certificate_arn,
    ).toBe(true);
    const mapping = one("support", "aws_apigatewayv2_api_mapping");
    expect(mapping.change.after.api_mapping_key ?? null).toBeNull();
    expect(mapping.change.after_unknown).toMatchObject({ api_id: true, domain_name: true });
    for (const type of ["aws_apigatewayv2_domain_name", "aws_apigatewayv2_api_mapping"]) {
      expect({ type, planned: inModule("billing", type).length }).toEqual({ type, planned: 0 });
    }
  });

  it("puts the support stream URL behind CloudFront with a us-east-1 certificate of the same apply, and billing none", () => {
    const distribution = one("support", "aws_cloudfront_distribution");
    expect(distribution.change.after).toMatchObject({
      enabled: true,
      aliases: ["support-stream.example.com"],
      http_version: "http2and3",
      is_ipv6_enabled: true,
      web_acl_id:
        "arn:aws:wafv2:us-east-1:123456789012:global/webacl/platform-edge/a1b2c3d4-5678-90ab-cdef-0123456789ab",
      default_cache_behavior: [
        expect.objectContaining({
          viewer_protocol_policy: "https-only",
          compress: false,
          cache_policy_id: "4135ea2d-6df8-44a3-9df3-4b5a84be39ad",
          origin_request_policy_id: "b689b0a8-53d0-40ab-baf2-68738e2966ac",
          allowed_methods: ["DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"],
        }),
      ],
      origin: [
        expect.objectContaining({
          custom_origin_config: [
            expect.objectContaining({
              origin_protocol_policy: "https-only",
              origin_ssl_protocols: ["TLSv1.2"],
              origin_read_timeout: 60,
              origin_keepalive_timeout: 60,
            }),
          ],
        }),
      ],
      viewer_certificate: [
        expect.objectContaining({
          ssl_support_method: "sni-only",
          minimum_protocol_version: "TLSv1.2_2021",
        }),
      ],
      tags: { team: "support" },
    });
    // The URL and the certificate are created in the same apply: both unknown, and the module still plans (the
    // certificate's region is checked by the precondition once known).
    const unknown = distribution.change.after_unknown as {
      origin: { domain_name?: boolean }[];
      viewer_certificate: { acm_certificate_arn?: boolean }[];
    };
    expect(unknown.origin[0]?.domain_name).toBe(true);
    expect(unknown.viewer_certificate[0]?.acm_certificate_arn).toBe(true);
    // The certificate through the consumer's us-east-1 configuration; the module's resources stay in eu-west-1.
    const certificate = changes.find(
      (change) => change.address === "aws_acm_certificate.support_stream",
    )!;
    expect(certificate.change.after.domain_name).toBe("support-stream.example.com");
    expect(inModule("billing", "aws_cloudfront_distribution")).toHaveLength(0);
  });

  it("turns the support API's default endpoint off (it has a custom domain), and keeps billing's", () => {
    expect(one("support", "aws_apigatewayv2_api").change.after.disable_execute_api_endpoint).toBe(
      true,
    );
    expect(one("billing", "aws_apigatewayv2_api").change.after.disable_execute_api_endpoint).toBe(
      false,
    );
  });

  it("creates a user pool for the default instance and trusts the external issuer of the other", () => {
    expect(inModule("support", "aws_cognito_user_pool")).toHaveLength(1);
    expect(inModule("billing", "aws_cognito_user_pool")).toHaveLength(0);
    // The consumer's own pool, outside the module.
    expect(
      changes.filter((change) => change.address === "aws_cognito_user_pool.billing"),
    ).toHaveLength(1);
  });

  it("plans with an issuer unknown until apply (create_cognito_user_pool decides, not the issuer's value)", () => {
    const authorizer = one("billing", "aws_apigatewayv2_authorizer").change;
    expect(authorizer.after.jwt_configuration).toEqual([{ audience: ["billing-api"] }]);
    expect(authorizer.after_unknown.jwt_configuration).toEqual([
      { audience: [false], issuer: true },
    ]);
  });

  it("answers CORS only where origins are listed, never with *", () => {
    expect(one("support", "aws_apigatewayv2_api").change.after.cors_configuration).toEqual([
      expect.objectContaining({ allow_origins: ["https://support.example.com"] }),
    ]);
    expect(one("billing", "aws_apigatewayv2_api").change.after.cors_configuration).toEqual([]);
  });

  it("plans every toggle on: graph permissions and secrets, alias with provisioned concurrency, alarms with their topic, ECR", () => {
    const key = "support";
    // A graph extra of one role: the API function's, or the worker's (the same extras).
    const policy = (name: string, role = "function_role") =>
      one(
        key,
        "aws_iam_role_policy",
        (change) => change.change.after.name === name && change.address.includes(`.${role}_graph`),
      );
    // The graph's statements are known at plan; its secrets' ARNs (one is created in the same apply) are not.
    expect(JSON.parse(String(policy("graph-statements").change.after.policy))).toEqual({
      Version: "2012-10-17",
      Statement: [
        {
          Sid: "DenyOtherRegions",
          Effect: "Deny",
          Action: ["bedrock:InvokeModel"],
          Resource: ["*"],
          Condition: { StringNotEquals: { "aws:RequestedRegion": ["eu-west-1"] } },
        },
        {
          Sid: "InvokeModel",
          Effect: "Allow",
          Action: ["bedrock:InvokeModel"],
          Resource: [
            "arn:aws:bedrock:eu-west-1::foundation-model/anthropic.claude-3-5-sonnet-20240620-v1:0",
          ],
        },
      ],
    });
    expect(policy("graph-statements", "worker_role").change.after.policy).toBe(
      policy("graph-statements").change.after.policy,
    );
    expect(policy("graph-statements", "stream_role").change.after.policy).toBe(
      policy("graph-statements").change.after.policy,
    );
    for (const role of ["function_role", "worker_role", "stream_role"]) {
      expect(policy("graph-secrets", role).change.after_unknown.policy).toBe(true);
      const attachment = one(key, "aws_iam_role_policy_attachment", (change) =>
        change.address.includes(`.${role}_graph_policies`),
      );
      expect(attachment.address).toMatch(/\["search"\]$/);
      expect(attachment.change.after_unknown.policy_arn).toBe(true);
    }
    // Both functions that run graphs may assume the tenant role.
    const assumes = inModule(key, "aws_iam_role_policy").filter(
      (change) => change.change.after.name === "assume-tenant-role",
    );
    expect(assumes.map((change) => change.address.replace(/^.*\./, "")).sort()).toEqual([
      "tenant_role_assume[0]",
      "tenant_role_assume_stream_function[0]",
      "tenant_role_assume_worker_function[0]",
    ]);
    for (const assume of assumes) expect(assume.change.after_unknown.policy).toBe(true);

    expect(
      one(
        key,
        "aws_lambda_function",
        (fn) =>
          fn.change.after.publish === true && fn.change.after.function_name === `agents-${key}`,
      ),
    ).toBeDefined();
    expect(
      one(key, "aws_lambda_alias", (alias) => alias.address.endsWith(".function_alias[0]")).change
        .after.name,
    ).toBe("live");
    expect(one(key, "aws_lambda_provisioned_concurrency_config").change.after).toMatchObject({
      provisioned_concurrent_executions: 2,
      qualifier: "live",
    });
    expect(
      one(
        key,
        "aws_lambda_permission",
        (change) => change.change.after.principal === "apigateway.amazonaws.com",
      ).change.after.qualifier,
    ).toBe("live");

    const alarms = inModule(key, "aws_cloudwatch_metric_alarm");
    // 16, and the stream function's errors, throttles, failed and timed-out runs.
    // With provisioned concurrency: its spillover alarm too.
    expect(alarms).toHaveLength(29);
    expect(
      one(key, "aws_cloudwatch_metric_alarm", (alarm) =>
        alarm.address.includes("alarms_function_provisioned_spillover"),
      ).change.after.dimensions,
    ).toEqual({ FunctionName: "agents-support", Resource: "agents-support:live" });
    for (const alarm of alarms) {
      expect(String(alarm.change.after.alarm_name)).toMatch(/^agents-support-/);
      expect(alarm.change.after.tags).toEqual({ team: key });
      expect(alarm.change.after_unknown.alarm_actions).toBe(true);
    }
    expect(inModule(key, "aws_cloudwatch_log_metric_filter")).toHaveLength(6);
    expect(one(key, "aws_sns_topic").change.after.name).toBe("agents-support-alarms");
    expect(inModule(key, "aws_kms_key")).toHaveLength(2);
    expect(inModule(key, "aws_ecr_repository")).toHaveLength(1);
  });

  it("attaches every function to the VPC where subnets are given, with scoped network-interface permissions", () => {
    const functions = inModule("support", "aws_lambda_function");
    expect(functions).toHaveLength(4);
    for (const fn of functions) {
      expect(fn.change.after.vpc_config).toEqual([
        expect.objectContaining({
          subnet_ids: ["subnet-0123456789abcdef0", "subnet-0fedcba9876543210"],
          security_group_ids: ["sg-0123456789abcdef0"],
        }),
      ]);
    }
    const vpcPolicies = inModule("support", "aws_iam_role_policy").filter(
      (policy) => policy.change.after.name === "memory-table-vpc",
    );
    expect(vpcPolicies).toHaveLength(4);
    for (const policy of vpcPolicies) {
      const statements = (
        JSON.parse(String(policy.change.after.policy)) as {
          Statement: { Sid: string; Action: string[]; Resource: string | string[] }[];
        }
      ).Statement;
      expect(statements).toEqual([
        expect.objectContaining({
          Sid: "VpcCreateNetworkInterface",
          Action: ["ec2:CreateNetworkInterface"],
          Resource: [
            "arn:aws:ec2:eu-west-1:123456789012:network-interface/*",
            "arn:aws:ec2:eu-west-1:*:subnet/subnet-0123456789abcdef0",
            "arn:aws:ec2:eu-west-1:*:subnet/subnet-0fedcba9876543210",
            "arn:aws:ec2:eu-west-1:*:security-group/sg-0123456789abcdef0",
          ],
        }),
        expect.objectContaining({
          Sid: "VpcManageNetworkInterfaces",
          Resource: ["arn:aws:ec2:eu-west-1:123456789012:network-interface/*"],
        }),
        expect.objectContaining({
          Sid: "VpcDescribe",
          Action: ["ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets"],
          Resource: "*",
        }),
      ]);
    }
    for (const fn of inModule("billing", "aws_lambda_function")) {
      expect(fn.change.after.vpc_config).toEqual([]);
    }
  });

  it("plans every toggle off: none of the optional resources", () => {
    for (const type of [
      "aws_iam_role_policy_attachment",
      "aws_lambda_alias",
      "aws_lambda_provisioned_concurrency_config",
      "aws_cloudwatch_metric_alarm",
      "aws_cloudwatch_log_metric_filter",
      "aws_sns_topic",
      "aws_sns_topic_policy",
      "aws_ecr_repository",
      "aws_lambda_function_url",
    ]) {
      expect({ type, planned: inModule("billing", type).length }).toEqual({ type, planned: 0 });
    }
    // No stream function, and so no public permission, role or log group of its own.
    expect(
      inModule("billing", "aws_lambda_function")
        .map((fn) => fn.change.after.function_name)
        .sort(),
    ).toEqual(["agents-billing", "agents-billing-cleaner", "agents-billing-worker"]);
    expect(inModule("billing", "aws_lambda_permission")).toHaveLength(1);
    expect(
      inModule("billing", "aws_iam_role_policy")
        .map((policy) => policy.change.after.name)
        .sort(),
    ).toEqual(["memory-table", "memory-table", "memory-table"]);
    expect(inModule("billing", "aws_kms_key")).toHaveLength(1);
    expect(one("billing", "aws_lambda_permission").change.after.qualifier).toBeNull();
  });

  it("creates the tenant-scoped role only where asked, every role named after the region", () => {
    expect(inModule("support", "aws_iam_role").map((r) => r.change.after.name)).toEqual(
      expect.arrayContaining([
        "agents-support-function-eu-west-1",
        "agents-support-cleaner-eu-west-1",
        "agents-support-worker-eu-west-1",
        "agents-support-stream-eu-west-1",
        "agents-support-tenant-eu-west-1",
      ]),
    );
    expect(
      inModule("billing", "aws_iam_role")
        .map((r) => r.change.after.name)
        .sort(),
    ).toEqual([
      "agents-billing-cleaner-eu-west-1",
      "agents-billing-function-eu-west-1",
      "agents-billing-worker-eu-west-1",
    ]);
  });

  it("plans the stream function behind a function URL in RESPONSE_STREAM mode where it is on", () => {
    const key = "support";
    const api = one(
      key,
      "aws_lambda_function",
      (fn) => fn.change.after.function_name === `agents-${key}`,
    );
    const stream = one(
      key,
      "aws_lambda_function",
      (fn) => fn.change.after.function_name === `agents-${key}-stream`,
    );
    expect(stream.change.after).toMatchObject({
      image_uri: api.change.after.image_uri,
      image_config: [{ command: [STREAM_HANDLER], entry_point: null, working_directory: null }],
      timeout: 600,
      memory_size: api.change.after.memory_size,
      reserved_concurrent_executions: 50,
      tracing_config: [{ mode: "Active" }],
      dead_letter_config: [],
      tags: { team: key },
    });
    // The user pool's issuer and its app client: both unknown until apply, like the secrets' ARNs.
    expect(stream.change.after_unknown.environment).toEqual([{ variables: true }]);
    const url = one(key, "aws_lambda_function_url");
    expect(url.change.after).toMatchObject({
      authorization_type: "NONE",
      invoke_mode: "RESPONSE_STREAM",
      // The stream function's alias: support publishes.
      qualifier: "live",
      cors: [
        expect.objectContaining({
          allow_origins: ["http://localhost:5173", "https://support.example.com"],
          allow_credentials: false,
          allow_headers: [
            "authorization",
            "content-type",
            "last-event-id",
            "mcp-protocol-version",
            "x-api-key",
          ],
        }),
      ],
    });
    expect(url.change.after.function_name).toBe(`agents-${key}-stream`);
    expect(url.change.after_unknown).toMatchObject({ function_url: true });
    const publicPermissions = inModule(key, "aws_lambda_permission")
      .filter((change) => change.change.after.principal === "*")
      .map((change) => change.change.after.action)
      .sort();
    expect(publicPermissions).toEqual(["lambda:InvokeFunctionUrl"]);
    // Lambda's second statement: to *, only through a function URL (no direct Invoke from any account).
    const invokeViaUrl = one(key, "aws_cloudcontrolapi_resource");
    expect(invokeViaUrl.change.after.type_name).toBe("AWS::Lambda::Permission");
    expect(JSON.parse(String(invokeViaUrl.change.after.desired_state))).toEqual({
      // On the URL's qualifier: the alias.
      FunctionName: `agents-${key}-stream:live`,
      Action: "lambda:InvokeFunction",
      Principal: "*",
      InvokedViaFunctionUrl: true,
    });
    expect(
      one(
        key,
        "aws_lambda_permission",
        (change) => change.change.after.action === "lambda:InvokeFunctionUrl",
      ).change.after.function_url_auth_type,
    ).toBe("NONE");
  });
});
