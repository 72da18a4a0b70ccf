import { describeWithTerraform, TerraformWorkspace } from "./support/terraform";
import { ROUTES } from "../../src/runtime/routes";
import { ENVIRONMENT, IMAGE_HANDLERS } from "../../src/runtime/environment";

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

    expect(one(key, "aws_kms_key").change.after).toMatchObject({ enable_key_rotation: true });
    const keyPolicy = JSON.parse(String(one(key, "aws_kms_key").change.after.policy)) as {
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
    expect(plannedGroups).toHaveLength(3);
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
      expect(fn.change.after_unknown.dead_letter_config).toEqual([{ target_arn: true }]);
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
    const variables = (api.change.after.environment as { variables: Record<string, string> }[])[0]!
      .variables;
    expect(variables).toMatchObject({
      [ENVIRONMENT.tableName]: `agents-${key}`,
      GRAPH_MODULE: "graphs/booking.js",
    });

    for (const role of inModule(key, "aws_iam_role").filter(
      (r) => !String(r.change.after.name).includes("-tenant-"),
    )) {
      expect(JSON.parse(String(role.change.after.assume_role_policy))).toMatchObject({
        Statement: [{ Principal: { Service: "lambda.amazonaws.com" }, Action: ["sts:AssumeRole"] }],
      });
    }

    const permission = one(key, "aws_lambda_permission");
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
    expect(isSet(one(key, "aws_sqs_queue"), "kms_master_key_id")).toBe(true);

    const trigger = one(key, "aws_lambda_event_source_mapping");
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
    expect(inModule(key, "aws_ecr_repository")).toHaveLength(0);
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

  it("creates the tenant-scoped role only where asked, every role named after the region", () => {
    expect(inModule("support", "aws_iam_role").map((r) => r.change.after.name)).toEqual(
      expect.arrayContaining([
        "agents-support-function-eu-west-1",
        "agents-support-cleaner-eu-west-1",
        "agents-support-tenant-eu-west-1",
      ]),
    );
    expect(
      inModule("billing", "aws_iam_role")
        .map((r) => r.change.after.name)
        .sort(),
    ).toEqual(["agents-billing-cleaner-eu-west-1", "agents-billing-function-eu-west-1"]);
  });
});
