import {
  DYNAMODB_CLEANER_ACTIONS,
  DYNAMODB_ITEM_ACTIONS,
  DYNAMODB_STREAM_ACTIONS,
} from "../../../src/table/iam-actions";
import { TABLE_DEFINITION } from "../../../src/table/definition";
import { ENVIRONMENT, IMAGE_HANDLERS } from "../../../src/runtime/environment";
import { ROUTES } from "../../../src/runtime/routes";
import { parseJsonencode } from "./hcl-expression";
import { onlyResource, ref, resourcesOf, Synthesized } from "./synthesized";

/**
 * The security bar of notes/terraform-module.md (the checkov / trivy / KICS rules that apply), asserted on a
 * synthesized stack: the construct used directly and the module stack must both pass it.
 */

interface Statement {
  Sid: string;
  Effect: string;
  Action: string | string[];
  Resource: string | string[];
  Principal?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

const actionsOf = (statement: Statement): string[] =>
  Array.isArray(statement.Action) ? statement.Action : [statement.Action];
const resourcesOfStatement = (statement: Statement): string[] =>
  Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];

export function policyStatements(policy: unknown): Statement[] {
  const document = parseJsonencode(policy as string) as { Statement: Statement[] };
  return document.Statement;
}

function bySid(statements: Statement[]): Record<string, Statement> {
  return Object.fromEntries(statements.map((statement) => [statement.Sid, statement]));
}

/** Every resource kind of the bar, with the exact IAM actions of each statement of each role. */
export function expectSecurityBar(synthesized: Synthesized): void {
  // DynamoDB: PITR, SSE with the customer-managed key, deletion protection, the shared definition.
  const [tableName, table] = onlyResource(synthesized, "aws_dynamodb_table");
  expect(table).toMatchObject({
    billing_mode: "PAY_PER_REQUEST",
    hash_key: TABLE_DEFINITION.partitionKey,
    range_key: TABLE_DEFINITION.sortKey,
    point_in_time_recovery: { enabled: true },
    server_side_encryption: { enabled: true },
    ttl: { attribute_name: TABLE_DEFINITION.ttlAttribute, enabled: true },
    stream_enabled: true,
    stream_view_type: TABLE_DEFINITION.streamViewType,
  });
  expect(table.deletion_protection_enabled).toBeDefined();
  expect(table.deletion_protection_enabled).not.toBe(false);
  const keyArn = (table.server_side_encryption as { kms_key_arn: string }).kms_key_arn;
  expect(keyArn).toMatch(/aws_kms_key\./);
  const tableArn = ref("aws_dynamodb_table", tableName, "arn");
  const streamArn = ref("aws_dynamodb_table", tableName, "stream_arn");

  // KMS: rotation, no `*` principal, CloudWatch Logs limited to this module's log groups, jsonencode.
  const [, key] = onlyResource(synthesized, "aws_kms_key");
  expect(key.enable_key_rotation).toBe(true);
  expect(key.policy).toMatch(/^\$\{jsonencode\(/);
  const keyStatements = bySid(policyStatements(key.policy));
  for (const statement of Object.values(keyStatements)) {
    expect(JSON.stringify(statement.Principal)).not.toMatch(/"\*"/);
  }
  const logsStatement = keyStatements.CloudWatchLogsForThisModule!;
  expect(logsStatement.Principal).toEqual({
    Service: expect.stringMatching(/^logs\..+\.amazonaws\.com$/),
  });
  const logArns = logsStatement.Condition!.ArnEquals![
    "kms:EncryptionContext:aws:logs:arn"
  ] as string[];
  // Log groups: retention and the key.
  const logGroups = resourcesOf(synthesized, "aws_cloudwatch_log_group");
  expect(logGroups).toHaveLength(3);
  // The key serves exactly the groups the module creates: same names, in this partition, region and account.
  const [regionSource] = Object.keys(synthesized.data?.aws_region ?? {});
  const [partitionSource] = Object.keys(synthesized.data?.aws_partition ?? {});
  const region = `\${data.aws_region.${regionSource}.name}`;
  const arnPrefix = `arn:\${data.aws_partition.${partitionSource}.partition}:logs:${region}:`;
  const accountOf = (arn: string) => arn.slice(arnPrefix.length, arn.indexOf(":log-group:"));
  const account = accountOf(logArns[0]!);
  expect(account).toMatch(/^(\d{12}|\$\{.+\})$/);
  expect([...logArns].sort()).toEqual(
    logGroups.map(([, group]) => `${arnPrefix}${account}:log-group:${String(group.name)}`).sort(),
  );
  for (const [, group] of logGroups) {
    expect(group.retention_in_days).toBeDefined();
    expect(group.kms_key_id).toBe(keyArn);
  }
  const logGroupNamed = (pattern: RegExp) =>
    onlyResource(synthesized, "aws_cloudwatch_log_group", (group) =>
      pattern.test(String(group.name)),
    )[0];

  // SQS dead-letter queue: encrypted with the key.
  const [queueName, queue] = onlyResource(synthesized, "aws_sqs_queue");
  expect(queue.kms_master_key_id).toBe(keyArn);
  const queueArn = ref("aws_sqs_queue", queueName, "arn");

  // Lambda: image by digest, X-Ray Active, reserved concurrency, DLQ, key for the environment, no secrets.
  const functions = resourcesOf(synthesized, "aws_lambda_function");
  expect(functions).toHaveLength(2);
  for (const [, fn] of functions) {
    expect(fn).toMatchObject({
      package_type: "Image",
      tracing_config: { mode: "Active" },
      dead_letter_config: { target_arn: queueArn },
      kms_key_arn: keyArn,
    });
    expect(fn.reserved_concurrent_executions).toBeDefined();
    expect(fn.environment).toBeDefined();
    expect(JSON.stringify(fn.environment)).not.toMatch(/secret|password|token/i);
  }
  const commandOf = (fn: Record<string, unknown>) =>
    (fn.image_config as { command: string[] }).command;
  const [apiFunctionName, apiFunction] = onlyResource(
    synthesized,
    "aws_lambda_function",
    (fn) => !JSON.stringify(commandOf(fn)).includes(IMAGE_HANDLERS.cleaner),
  );
  const [cleanerName, cleaner] = onlyResource(synthesized, "aws_lambda_function", (fn) =>
    JSON.stringify(commandOf(fn)).includes(IMAGE_HANDLERS.cleaner),
  );
  expect(commandOf(cleaner)).toEqual([IMAGE_HANDLERS.cleaner]);
  expect(cleaner.image_uri).toBe(apiFunction.image_uri);
  const apiVariables = (apiFunction.environment as { variables: unknown }).variables;
  for (const name of [
    ENVIRONMENT.tableName,
    ENVIRONMENT.tenantClaim,
    ENVIRONMENT.logLevel,
    ENVIRONMENT.deadlineMarginMs,
  ]) {
    expect(JSON.stringify(apiVariables)).toContain(name);
  }
  expect(JSON.stringify(apiVariables)).toContain(`aws_dynamodb_table.${tableName}.name`);

  // IAM: trust Lambda only; exactly the actions of each statement; no wildcards; X-Ray alone; no Scan.
  const referenced = (value: unknown, type: string) =>
    new RegExp(`${type}\\.([^.]+)\\.`).exec(String(value))![1]!;
  const roles = {
    api: {
      role: referenced(apiFunction.role, "aws_iam_role"),
      logGroup: referenced(
        (apiFunction.logging_config as { log_group: string }).log_group,
        "aws_cloudwatch_log_group",
      ),
    },
    cleaner: {
      role: referenced(cleaner.role, "aws_iam_role"),
      logGroup: referenced(
        (cleaner.logging_config as { log_group: string }).log_group,
        "aws_cloudwatch_log_group",
      ),
    },
  };
  for (const [kind, { role, logGroup }] of Object.entries(roles)) {
    const roleConfig = synthesized.resource.aws_iam_role![role]!;
    expect(policyStatements(roleConfig.assume_role_policy)).toEqual([
      {
        Sid: "Assume",
        Effect: "Allow",
        Principal: { Service: "lambda.amazonaws.com" },
        Action: ["sts:AssumeRole"],
      },
    ]);
    const [, policy] = onlyResource(
      synthesized,
      "aws_iam_role_policy",
      (config) => config.role === ref("aws_iam_role", role, "id") && config.name === "memory-table",
    );
    const statements = bySid(policyStatements(policy.policy));
    const expected: Record<string, [string[], string[] | string]> = {
      // The API function queries the indexes too; the cleaner only queries the base table and deletes.
      DynamoDBItems:
        kind === "cleaner"
          ? [[...DYNAMODB_CLEANER_ACTIONS], [tableArn]]
          : [[...DYNAMODB_ITEM_ACTIONS], [tableArn, `${tableArn}/index/*`]],
      KmsThroughServices: [["kms:Decrypt", "kms:GenerateDataKey"], [keyArn]],
      OwnLogGroup: [
        ["logs:CreateLogStream", "logs:PutLogEvents"],
        [`${ref("aws_cloudwatch_log_group", logGroup, "arn")}:*`],
      ],
      XRay: [["xray:PutTelemetryRecords", "xray:PutTraceSegments"], "*"],
      DeadLetterQueue: [["sqs:SendMessage"], [queueArn]],
    };
    if (kind === "cleaner") expected.DynamoDBStream = [[...DYNAMODB_STREAM_ACTIONS], [streamArn]];
    expect(Object.keys(statements).sort()).toEqual(Object.keys(expected).sort());
    for (const [sid, [actions, resources]] of Object.entries(expected)) {
      expect({
        sid,
        actions: statements[sid]!.Action,
        resources: statements[sid]!.Resource,
      }).toEqual({
        sid,
        actions,
        resources,
      });
    }
    expect(statements.KmsThroughServices!.Condition).toEqual({
      StringEquals: {
        "kms:ViaService": ["dynamodb", "sqs", "lambda"].map(
          (service) => `${service}.${region}.amazonaws.com`,
        ),
      },
    });
  }
  expect(roles.api.role).not.toBe(roles.cleaner.role);
  expect(cleanerName).not.toBe(apiFunctionName);

  for (const [, policy] of resourcesOf(synthesized, "aws_iam_role_policy")) {
    for (const statement of policyStatements(policy.policy)) {
      for (const action of actionsOf(statement)) {
        expect(action).not.toMatch(/(^\*$|:\*$)/);
        expect(action).not.toBe("dynamodb:Scan");
        expect(action).not.toBe("logs:CreateLogGroup");
        if (action.startsWith("xray:")) expect(statement.Sid).toBe("XRay");
      }
      if (resourcesOfStatement(statement).includes("*")) expect(statement.Sid).toBe("XRay");
    }
  }

  // Lambda permission: API Gateway, invoke only, from this API only.
  const [apiName] = onlyResource(synthesized, "aws_apigatewayv2_api");
  const [, permission] = onlyResource(synthesized, "aws_lambda_permission");
  expect(permission).toMatchObject({
    action: "lambda:InvokeFunction",
    principal: "apigateway.amazonaws.com",
    function_name: ref("aws_lambda_function", apiFunctionName, "function_name"),
    source_arn: `${ref("aws_apigatewayv2_api", apiName, "execution_arn")}/*/*`,
  });

  // API Gateway: one JWT-authorized route per handler route, access logs, throttling, no wildcard CORS.
  const [authorizerName, authorizer] = onlyResource(synthesized, "aws_apigatewayv2_authorizer");
  expect(authorizer.authorizer_type).toBe("JWT");
  const routes = resourcesOf(synthesized, "aws_apigatewayv2_route").map(([, route]) => route);
  expect(routes.map((route) => route.route_key).sort()).toEqual(
    ROUTES.map((route) => `${route.method} ${route.path}`).sort(),
  );
  for (const route of routes) {
    expect(route).toMatchObject({
      authorization_type: "JWT",
      authorizer_id: ref("aws_apigatewayv2_authorizer", authorizerName, "id"),
    });
  }
  const [, stage] = onlyResource(synthesized, "aws_apigatewayv2_stage");
  expect(stage.access_log_settings).toMatchObject({
    destination_arn: ref("aws_cloudwatch_log_group", logGroupNamed(/apigateway/), "arn"),
  });
  expect(stage.default_route_settings).toMatchObject({
    throttling_burst_limit: expect.anything(),
    throttling_rate_limit: expect.anything(),
  });
  expect(JSON.stringify(synthesized.resource.aws_apigatewayv2_api)).not.toMatch(
    /"allow_origins":\s*\[[^\]]*"\*"/,
  );

  // ECR (when created): immutable tags, scan on push, KMS.
  for (const [, repository] of resourcesOf(synthesized, "aws_ecr_repository")) {
    expect(repository).toMatchObject({
      image_tag_mutability: "IMMUTABLE",
      image_scanning_configuration: { scan_on_push: true },
      encryption_configuration: [{ encryption_type: "KMS", kms_key: keyArn }],
    });
  }
}
