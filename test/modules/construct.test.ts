import { TerraformStack, Testing } from "../../modules/cdktf";
// Types of the matchers Testing.setupJest() registers (toHaveResourceWithProperties, ...).
import type {} from "cdktf/lib/testing/adapters/jest";
import { DynamodbTable } from "@cdktf/provider-aws/lib/dynamodb-table";
import { LambdaFunction } from "@cdktf/provider-aws/lib/lambda-function";
import { AwsProvider } from "@cdktf/provider-aws/lib/provider";
import { TABLE_DEFINITION } from "../../src/table/definition";
import { THREAD_RECORD_SK } from "../../src/table/keys";
import { DYNAMODB_ITEM_ACTIONS } from "../../src/table/iam-actions";
import { ENVIRONMENT, IMAGE_HANDLERS } from "../../src/runtime/environment";
import { InvalidConfigurationError } from "../../src/shared/errors";
import { MemoryTable } from "../../modules/construct/memory-table";
import type { MemoryTableProps } from "../../modules/construct/props";
import { policyStatements, expectSecurityBar } from "./support/security-bar";
import { parseJsonencode } from "./support/hcl-expression";
import { useScratchOutdir } from "./support/outdir";
import {
  onlyResource,
  ref,
  resourcesOf,
  synthesize,
  type Synthesized,
} from "./support/synthesized";
import { RunMetrics } from "../../src/runtime/observability";
import { readRuntimeConfig } from "../../src/runtime/config";
import { RUN_OUTCOME_FIELDS } from "../../modules/construct/alarms";
import { STREAM_HANDLER } from "../../modules/construct/stream";
import { CRONS_ENABLED } from "../../modules/construct/crons";
import { RECOVERY_SWEEP_KIND } from "../../src/shared/worker-events";

/** The message a construct throws, or "" when it builds. */
/** The JWT authorizer (the Lambda authorizer for API keys is the other one). */
function jwtAuthorizer(synthesized: Synthesized) {
  return onlyResource(
    synthesized,
    "aws_apigatewayv2_authorizer",
    (authorizer) => authorizer.authorizer_type === "JWT",
  );
}

function errorOf(create: () => unknown): string {
  try {
    create();
    return "";
  } catch (error) {
    return error instanceof InvalidConfigurationError ? error.message : String(error);
  }
}

Testing.setupJest();
const outdir = useScratchOutdir();

const IMAGE_URI =
  "123456789012.dkr.ecr.eu-west-1.amazonaws.com/memory-table@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

function build(props: Partial<MemoryTableProps> = {}): {
  stack: TerraformStack;
  construct: MemoryTable;
} {
  const stack = new TerraformStack(Testing.app({ outdir: outdir() }), "test");
  new AwsProvider(stack, "aws", { region: "eu-west-1" });
  const construct = new MemoryTable(stack, "agents", {
    name: "agents",
    imageUri: IMAGE_URI,
    accountId: "123456789012",
    ...props,
  });
  return { stack, construct };
}

describe("MemoryTable construct (synth)", () => {
  it("meets the security bar with its defaults, with exact IAM actions per role", () => {
    const synthesized = synthesize(build().stack);
    expectSecurityBar(synthesized);
    for (const [, group] of resourcesOf(synthesized, "aws_cloudwatch_log_group")) {
      expect(group.retention_in_days).toBe(365);
    }
  });

  it("meets the security bar with every option turned on", () => {
    const { stack } = build({
      createEcrRepository: true,
      createTenantRole: true,
      corsAllowOrigins: ["https://app.example.com"],
    });
    expectSecurityBar(synthesize(stack));
  });

  it("builds the table from the shared table definition (keys, indexes, TTL, stream)", () => {
    const synthesized = Testing.synth(build().stack);
    expect(synthesized).toHaveResourceWithProperties(DynamodbTable, {
      hash_key: TABLE_DEFINITION.partitionKey,
      range_key: TABLE_DEFINITION.sortKey,
      attribute: TABLE_DEFINITION.attributes.map(({ name, type }) => ({ name, type })),
      global_secondary_index: TABLE_DEFINITION.globalSecondaryIndexes.map((index) => ({
        name: index.name,
        hash_key: index.partitionKey,
        range_key: index.sortKey,
        projection_type: index.projection,
      })),
      ttl: { attribute_name: TABLE_DEFINITION.ttlAttribute, enabled: true },
      stream_view_type: TABLE_DEFINITION.streamViewType,
      point_in_time_recovery: { enabled: true },
      deletion_protection_enabled: true,
    });
  });

  it("runs the API handler, the worker, the stream function and the cleaner from the same image with different commands", () => {
    const synthesized = Testing.synth(build().stack);
    expect(synthesized).toHaveResourceWithProperties(LambdaFunction, {
      function_name: "agents",
      image_uri: IMAGE_URI,
      image_config: { command: [IMAGE_HANDLERS.api] },
      timeout: 29,
      memory_size: 1024,
      tracing_config: { mode: "Active" },
    });
    // A leg may take Lambda's longest timeout; the worker has the API function's memory by default.
    expect(synthesized).toHaveResourceWithProperties(LambdaFunction, {
      function_name: "agents-worker",
      image_uri: IMAGE_URI,
      image_config: { command: [IMAGE_HANDLERS.worker] },
      timeout: 900,
      memory_size: 1024,
      reserved_concurrent_executions: 20,
      tracing_config: { mode: "Active" },
    });
    expect(synthesized).toHaveResourceWithProperties(LambdaFunction, {
      function_name: "agents-cleaner",
      image_uri: IMAGE_URI,
      image_config: { command: [IMAGE_HANDLERS.cleaner] },
    });
    // A stream may last as long as a run: Lambda's longest timeout; the API function's memory by default.
    expect(synthesized).toHaveResourceWithProperties(LambdaFunction, {
      count: 1,
      function_name: "agents-stream",
      image_uri: IMAGE_URI,
      image_config: { command: [STREAM_HANDLER] },
      timeout: 900,
      memory_size: 1024,
      reserved_concurrent_executions: 50,
      tracing_config: { mode: "Active" },
    });
  });

  it("sets exactly the environment the code reads, after the caller's variables", () => {
    const synthesized = synthesize(
      build({ environment: { GRAPH_MODULE: "graphs/booking.js" } }).stack,
    );
    const [tableName] = onlyResource(synthesized, "aws_dynamodb_table");
    const variablesOf = (functionName: string) =>
      (
        onlyResource(
          synthesized,
          "aws_lambda_function",
          (config) => config.function_name === functionName,
        )[1].environment as { variables: unknown }
      ).variables;
    const [workerName] = onlyResource(
      synthesized,
      "aws_lambda_function",
      (config) => config.function_name === "agents-worker",
    );
    const runtime = {
      GRAPH_MODULE: "graphs/booking.js",
      [ENVIRONMENT.tableName]: ref("aws_dynamodb_table", tableName, "name"),
      [ENVIRONMENT.logLevel]: "info",
      [ENVIRONMENT.deadlineMarginMs]: "3000",
      [ENVIRONMENT.maxRunLegs]: "8",
      // Empty: no webhook host allowed (the runtime reads an empty variable as unset).
      [ENVIRONMENT.webhookAllowedHosts]: "",
      // Crons on: the worker fires them, the API and stream functions serve their routes.
      [CRONS_ENABLED]: "true",
    };
    expect(variablesOf("agents")).toEqual({
      ...runtime,
      [ENVIRONMENT.tenantClaim]: "custom:tenant_id",
      // The worker's alias (every function is published by default); the API function waits for it.
      [ENVIRONMENT.workerFunctionName]: "agents-worker:live",
    });
    expect(
      onlyResource(synthesized, "aws_lambda_function", (fn) => fn.function_name === "agents")[1]
        .depends_on,
    ).toContain(
      `aws_lambda_alias.${onlyResource(synthesized, "aws_lambda_alias", (alias) => String(alias.function_name).includes(workerName))[0]}`,
    );
    // The worker hands a run's next leg to itself, by name (a reference to itself would be a cycle); it reads
    // no JWT, so no tenant claim.
    expect(variablesOf("agents-worker")).toEqual({
      ...runtime,
      [ENVIRONMENT.workerFunctionName]: "agents-worker:live",
    });
    // The stream function: the API function's, and the issuer and audience it verifies tokens against itself
    // (the authorizer's: the created user pool and its app client).
    const [poolName] = onlyResource(synthesized, "aws_cognito_user_pool");
    const [clientName] = onlyResource(synthesized, "aws_cognito_user_pool_client");
    const [regionName] = Object.keys(synthesized.data!.aws_region!);
    const issuerLocal = (synthesized as unknown as { locals: Record<string, unknown> }).locals;
    const streamVariables = variablesOf("agents-stream") as Record<string, string>;
    expect(streamVariables).toEqual({
      ...runtime,
      [ENVIRONMENT.tenantClaim]: "custom:tenant_id",
      [ENVIRONMENT.workerFunctionName]: "agents-worker:live",
      [ENVIRONMENT.jwtIssuer]: expect.stringMatching(/^\$\{local\.[A-Za-z0-9_]+\}$/),
      // The created app client, the one audience.
      [ENVIRONMENT.jwtAudience]: `\${one(aws_cognito_user_pool_client.${clientName}[*].id)}`,
      [ENVIRONMENT.apiKeyCacheSeconds]: "60",
    });
    const local = /local\.([A-Za-z0-9_]+)/.exec(streamVariables[ENVIRONMENT.jwtIssuer]!)![1]!;
    expect(issuerLocal[local]).toBe(
      `https://cognito-idp.\${data.aws_region.${regionName}.id}.amazonaws.com/\${one(aws_cognito_user_pool.${poolName}[*].id)}`,
    );
    // The same issuer as the authorizer's.
    expect(
      (
        jwtAuthorizer(synthesized)[1].jwt_configuration as {
          issuer: string;
        }
      ).issuer,
    ).toBe(issuerLocal[local]);
  });

  it("passes the run settings to both functions that run graphs: legs, webhook hosts comma-joined", () => {
    const synthesized = synthesize(
      build({ maxRunLegs: 20, webhookAllowedHosts: ["hooks.example.com", "ci.example.com:8443"] })
        .stack,
    );
    for (const functionName of ["agents", "agents-worker"]) {
      const [, fn] = onlyResource(
        synthesized,
        "aws_lambda_function",
        (config) => config.function_name === functionName,
      );
      expect((fn.environment as { variables: Record<string, string> }).variables).toMatchObject({
        [ENVIRONMENT.maxRunLegs]: "20",
        [ENVIRONMENT.webhookAllowedHosts]: "hooks.example.com,ci.example.com:8443",
      });
    }
    // What the runtime reads back from that environment.
    const config = readRuntimeConfig({
      [ENVIRONMENT.maxRunLegs]: "20",
      [ENVIRONMENT.webhookAllowedHosts]: "hooks.example.com,ci.example.com:8443",
    });
    expect(config).toMatchObject({
      maxRunLegs: 20,
      webhookAllowedHosts: ["hooks.example.com", "ci.example.com:8443"],
    });
  });

  it("feeds the cleaner only TTL removals of thread records, failures to the dead-letter queue", () => {
    const synthesized = synthesize(build().stack);
    const [tableName] = onlyResource(synthesized, "aws_dynamodb_table");
    const [queueName] = onlyResource(
      synthesized,
      "aws_sqs_queue",
      (queue) => queue.name === "agents-dlq",
    );
    const [, mapping] = onlyResource(
      synthesized,
      "aws_lambda_event_source_mapping",
      (config) => config.event_source_arn === ref("aws_dynamodb_table", tableName, "stream_arn"),
    );
    // image/cleaner.ts answers with batchItemFailures: only its failed threads' records are retried.
    expect(mapping.function_response_types).toEqual(["ReportBatchItemFailures"]);
    expect(mapping.destination_config).toEqual({
      on_failure: { destination_arn: ref("aws_sqs_queue", queueName, "arn") },
    });
    const filters = (mapping.filter_criteria as { filter: { pattern: string }[] }).filter;
    expect(filters.map((filter) => JSON.parse(filter.pattern) as unknown)).toEqual([
      {
        eventName: ["REMOVE"],
        dynamodb: { Keys: { [TABLE_DEFINITION.sortKey]: { S: [THREAD_RECORD_SK] } } },
      },
    ]);
  });

  it("creates a Cognito user pool whose app client reads but never writes the immutable tenant", () => {
    const synthesized = synthesize(build().stack);
    const [, pool] = onlyResource(synthesized, "aws_cognito_user_pool");
    expect(pool.count).toBe(1);
    expect(pool.user_attribute_update_settings).toEqual({
      attributes_require_verification_before_update: ["email"],
    });
    expect(pool.schema).toEqual([
      expect.objectContaining({ name: "tenant_id", mutable: false, attribute_data_type: "String" }),
    ]);
    const [clientName, client] = onlyResource(synthesized, "aws_cognito_user_pool_client");
    expect(client.read_attributes).toContain("custom:tenant_id");
    expect(client.write_attributes).not.toContain("custom:tenant_id");
    expect(client.write_attributes).not.toEqual([]);
    const [, authorizer] = jwtAuthorizer(synthesized);
    expect(authorizer.jwt_configuration).toEqual({
      issuer: expect.stringMatching(/^https:\/\/cognito-idp\..*aws_cognito_user_pool\./),
      audience: [`\${one(aws_cognito_user_pool_client.${clientName}[*].id)}`],
    });
  });

  it("trusts an external issuer instead of creating a user pool", () => {
    const synthesized = synthesize(
      build({ jwtIssuer: "https://issuer.example.com/", jwtAudience: ["agents-api"] }).stack,
    );
    expect(onlyResource(synthesized, "aws_cognito_user_pool")[1].count).toBe(0);
    expect(onlyResource(synthesized, "aws_cognito_user_pool_client")[1].count).toBe(0);
    expect(jwtAuthorizer(synthesized)[1].jwt_configuration).toEqual({
      issuer: "https://issuer.example.com/",
      audience: ["agents-api"],
    });
  });

  it("accepts http origins for local development only (localhost, 127.0.0.1)", () => {
    const origins = ["https://app.example.com", "http://localhost:3000", "http://127.0.0.1:5173"];
    const listed = synthesize(build({ corsAllowOrigins: origins }).stack);
    expect(onlyResource(listed, "aws_apigatewayv2_api")[1].cors_configuration).toMatchObject({
      allow_origins: origins,
    });
  });

  it("answers CORS only for listed origins", () => {
    const none = synthesize(build().stack);
    expect(onlyResource(none, "aws_apigatewayv2_api")[1].cors_configuration).toBeUndefined();
    const listed = synthesize(build({ corsAllowOrigins: ["https://app.example.com"] }).stack);
    expect(onlyResource(listed, "aws_apigatewayv2_api")[1].cors_configuration).toMatchObject({
      allow_origins: ["https://app.example.com"],
    });
  });

  it("creates the ECR repository only when asked", () => {
    expect(onlyResource(synthesize(build().stack), "aws_ecr_repository")[1].count).toBe(0);
    expect(
      onlyResource(synthesize(build({ createEcrRepository: true }).stack), "aws_ecr_repository")[1]
        .count,
    ).toBe(1);
  });

  it("names every IAM role after the region too: IAM is global, the same name in two regions would collide", () => {
    const synthesized = synthesize(build({ createTenantRole: true }).stack);
    const [regionName] = Object.keys(synthesized.data!.aws_region!);
    const names = resourcesOf(synthesized, "aws_iam_role").map(([, role]) => role.name);
    expect(names.sort()).toEqual(
      ["auth", "cleaner", "function", "stream", "tenant", "worker"].map(
        (role) => `agents-${role}-\${data.aws_region.${regionName}.id}`,
      ),
    );
  });

  it("expires untagged ECR images only, never a tagged image a function may still run", () => {
    const synthesized = synthesize(build({ createEcrRepository: true }).stack);
    const [, lifecycle] = onlyResource(synthesized, "aws_ecr_lifecycle_policy");
    const { rules } = parseJsonencode(String(lifecycle.policy)) as {
      rules: { selection: { tagStatus: string } }[];
    };
    expect(rules).toEqual([
      {
        rulePriority: 1,
        description: "Expire untagged images after 14 days",
        selection: {
          tagStatus: "untagged",
          countType: "sinceImagePushed",
          countUnit: "days",
          countNumber: 14,
        },
        action: { type: "expire" },
      },
    ]);
    for (const rule of rules) expect(rule.selection.tagStatus).toBe("untagged");
  });

  it("creates a tenant-scoped role, assumable only by the roles of the functions that run graphs, limited by dynamodb:LeadingKeys", () => {
    const synthesized = synthesize(
      build({ createTenantRole: true, attachTenantRoleAssumePolicy: true }).stack,
    );
    const roleArnOf = (functionName: string) =>
      String(
        onlyResource(
          synthesized,
          "aws_lambda_function",
          (fn) => fn.function_name === functionName,
        )[1].role,
      );
    const graphRoleArns = [
      roleArnOf("agents"),
      roleArnOf("agents-worker"),
      roleArnOf("agents-stream"),
    ];
    const [tenantRoleName, tenantRole] = onlyResource(synthesized, "aws_iam_role", (role) =>
      String(role.name).startsWith("agents-tenant-"),
    );
    expect(tenantRole.count).toBe(1);
    expect(policyStatements(tenantRole.assume_role_policy)).toEqual([
      {
        Sid: "AssumeFromGraphFunctions",
        Effect: "Allow",
        Principal: { AWS: graphRoleArns },
        Action: ["sts:AssumeRole", "sts:TagSession"],
        Condition: { Null: { "aws:RequestTag/tenant_id": "false" } },
      },
    ]);
    const [, tenantPolicy] = onlyResource(
      synthesized,
      "aws_iam_role_policy",
      (p) => p.name === "memory-table-tenant",
    );
    const [tableName, table] = onlyResource(synthesized, "aws_dynamodb_table");
    const tableArn = ref("aws_dynamodb_table", tableName, "arn");
    const keyArn = (table.server_side_encryption as { kms_key_arn: string }).kms_key_arn;
    expect(policyStatements(tenantPolicy.policy)).toEqual([
      {
        Sid: "TenantItems",
        Effect: "Allow",
        Action: [...DYNAMODB_ITEM_ACTIONS],
        Resource: [
          tableArn,
          ...TABLE_DEFINITION.globalSecondaryIndexes.map(
            (index) => `${tableArn}/index/${index.name}`,
          ),
        ],
        Condition: {
          "ForAllValues:StringLike": {
            "dynamodb:LeadingKeys": [
              "${aws:PrincipalTag/tenant_id}",
              "${aws:PrincipalTag/tenant_id}#*",
            ],
          },
          Null: { "dynamodb:LeadingKeys": "false" },
        },
      },
      {
        Sid: "KmsThroughDynamoDB",
        Effect: "Allow",
        Action: ["kms:Decrypt", "kms:GenerateDataKey"],
        Resource: [keyArn],
        Condition: {
          StringEquals: {
            "kms:ViaService": [expect.stringMatching(/^dynamodb\..+\.amazonaws\.com$/)],
          },
        },
      },
    ]);
    // One assume policy per function that runs graphs, on its own role.
    const assumes = resourcesOf(synthesized, "aws_iam_role_policy").filter(
      ([, p]) => p.name === "assume-tenant-role",
    );
    expect(assumes.map(([, assume]) => assume.role).sort()).toEqual(
      graphRoleArns.map((arn) => arn.replace(/\.arn(\)?)\}$/, ".id$1}")).sort(),
    );
    for (const [, assume] of assumes) {
      expect(assume.count).toBe(1);
      expect(policyStatements(assume.policy)).toEqual([
        {
          Sid: "AssumeTenantRole",
          Effect: "Allow",
          Action: ["sts:AssumeRole", "sts:TagSession"],
          Resource: [`\${one(aws_iam_role.${tenantRoleName}[*].arn)}`],
        },
      ]);
    }
  });

  it("uses a brought KMS key everywhere and creates none", () => {
    const keyArn = "arn:aws:kms:eu-west-1:123456789012:key/11111111-2222-3333-4444-555555555555";
    const synthesized = synthesize(build({ createKmsKey: false, kmsKeyArn: keyArn }).stack);
    for (const [, key] of resourcesOf(synthesized, "aws_kms_key")) expect(key.count).toBe(0);
    expect(onlyResource(synthesized, "aws_dynamodb_table")[1].server_side_encryption).toEqual({
      enabled: true,
      kms_key_arn: keyArn,
    });
    for (const [, group] of resourcesOf(synthesized, "aws_cloudwatch_log_group"))
      expect(group.kms_key_id).toBe(keyArn);
  });

  it("reads the account id from STS only when none is given", () => {
    const given = synthesize(build().stack).data!.aws_caller_identity!;
    expect(Object.values(given)[0]!.count).toBe(0);
    const looked = synthesize(build({ accountId: undefined }).stack).data!.aws_caller_identity!;
    expect(Object.values(looked)[0]!.count).toBe(1);
  });

  it.each([
    [{ name: "Agents_Prod" }, /^Invalid name: expected 3-40 lowercase/],
    [
      { imageUri: "123456789012.dkr.ecr.eu-west-1.amazonaws.com/memory-table:latest" },
      /^Invalid image_uri: expected an ECR image pinned by digest/,
    ],
    [{ timeout: 30 }, /^Invalid timeout: expected an integer from 1 to 29 seconds, got 30$/],
    [{ logRetentionInDays: 10 }, /^Invalid log_retention_in_days: expected one of 1, 3, 5/],
    [
      { environment: { DB_PASSWORD: "x" } },
      /^Invalid environment: expected no variable named like a secret .* give its Secrets Manager or SSM SecureString ARN in secrets instead.*, got \["DB_PASSWORD"\]$/,
    ],
    [
      { environment: { GITHUB_TOKEN: "x", MAX_TOKENS: "4096", openaiApiKey: "y" } },
      /got \["GITHUB_TOKEN","openaiApiKey"\]$/,
    ],
    [
      { environment: { DATABASE_URL: "postgres://app:hunter2@db.internal:5432/app" } },
      /^Invalid environment: expected .*, got \["DATABASE_URL"\]$/,
    ],
    [
      { secrets: { TABLE_NAME: "arn:aws:ssm:eu-west-1:123456789012:parameter/x" } },
      /^Invalid secrets: expected names that are neither Lambda's .* nor the module's own/,
    ],
    [
      // The stream function's issuer is the module's to set, from secrets neither.
      { secrets: { JWT_ISSUER: "arn:aws:ssm:eu-west-1:123456789012:parameter/x" } },
      /^Invalid secrets: expected names that are neither Lambda's .* nor the module's own \(.*JWT_ISSUER, JWT_AUDIENCE, API_KEY_CACHE_SECONDS, CRONS_ENABLED\)/,
    ],
    [
      { secrets: { AWS_SESSION_TOKEN: "arn:aws:ssm:eu-west-1:123456789012:parameter/x" } },
      /^Invalid secrets: expected names that are neither Lambda's/,
    ],
    [
      { secrets: { OPENAI_API_KEY: "sk-plaintext" } },
      /^Invalid secrets: expected ARNs of Secrets Manager secrets .* got "sk-plaintext"$/,
    ],
    [
      {
        environment: { PARTNER_KEY: "x" },
        secrets: { PARTNER_KEY: "arn:aws:ssm:eu-west-1:123456789012:parameter/x" },
      },
      /^Invalid secrets: expected names not also given in environment, got "PARTNER_KEY"$/,
    ],
    [
      { secretsKmsKeyArns: ["arn:aws:kms:eu-west-1:123456789012:key/1"], secrets: {} },
      /^Invalid secrets_kms_key_arns: expected none without secrets/,
    ],
    [
      {
        graphPolicyStatements: {
          "invoke-model": { actions: ["bedrock:InvokeModel"], resources: ["*"] },
        },
      },
      /^Invalid graph_policy_statements: expected statement ids of letters and digits/,
    ],
    [
      { graphPolicyStatements: { Admin: { actions: ["*"], resources: ["*"] } } },
      /^Invalid graph_policy_statements: expected actions like bedrock:InvokeModel in Admin, never \*, got "\*"$/,
    ],
    [
      { graphPolicyStatements: { Nothing: { actions: ["s3:GetObject"], resources: [] } } },
      /^Invalid graph_policy_statements: expected at least one resource in Nothing/,
    ],
    [
      { graphPolicyArns: { admin: "AdministratorAccess" } },
      /^Invalid graph_policy_arns: expected an IAM policy ARN for admin/,
    ],
    [
      { publish: false, provisionedConcurrentExecutions: 2 },
      /^Invalid provisioned_concurrent_executions: expected 0 without publish/,
    ],
    [{ canaryWeight: 10 }, /^Invalid canary_weight: expected 0 without stable_version/],
    [
      { stableVersion: "7", canaryWeight: 101 },
      /^Invalid canary_weight: expected a whole number from 0 to 100 percent/,
    ],
    [
      { stableVersion: "$LATEST" },
      /^Invalid stable_version: expected a published version number like "7"/,
    ],
    [
      { publish: false, stableVersion: "7" },
      /^Invalid stable_version: expected none without publish/,
    ],
    [
      { publish: true, provisionedConcurrentExecutions: 60 },
      /^Invalid provisioned_concurrent_executions: expected at most reserved_concurrent_executions \(50\), got 60$/,
    ],
    [{ publish: true, aliasName: "1" }, /^Invalid alias_name: expected a letter/],
    [{ createAlarmTopic: true }, /^Invalid create_alarms: expected true with an alarm topic/],
    [
      {
        createAlarms: true,
        createAlarmTopic: true,
        alarmSnsTopicArn: "arn:aws:sns:eu-west-1:123456789012:on-call",
      },
      /^Invalid alarm_sns_topic_arn: expected none with create_alarm_topic/,
    ],
    [
      { createAlarms: true, alarmSnsTopicArn: "arn:aws:sns:eu-west-1:123456789012:on-call.fifo" },
      /^Invalid alarm_sns_topic_arn: expected a standard SNS topic ARN/,
    ],
    [
      { createAlarms: true, createAlarmTopic: true, alarmThresholds: { runsFailed: -1 } },
      /^Invalid alarm_thresholds: expected runsFailed to be a number, 0 or more, got -1$/,
    ],
    [{ corsAllowOrigins: ["*"] }, /^Invalid cors_allow_origins: expected https origins like/],
    [
      { corsAllowOrigins: ["http://app.example.com"] },
      /^Invalid cors_allow_origins: expected https origins like/,
    ],
    [
      { kmsKeyArn: "arn:aws:kms:eu-west-1:123456789012:key/11111111-2222-3333-4444-555555555555" },
      /^Invalid kms_key_arn: expected none when the module creates the key/,
    ],
    [{ jwtAudience: ["agents-api"] }, /^Invalid jwt_audience: expected none without an external/],
    [
      {
        createCognitoUserPool: true,
        jwtIssuer: "https://issuer.example.com/",
        jwtAudience: ["agents-api"],
      },
      /^Invalid jwt_issuer: expected none with the created user pool/,
    ],
    [{ createKmsKey: false }, /^Invalid kms_key_arn: expected a key ARN/],
    [
      { jwtIssuer: "https://issuer.example.com/" },
      /^Invalid jwt_audience: expected at least one audience/,
    ],
    [
      { workerTimeout: 901 },
      /^Invalid worker_timeout: expected a whole number from 60 to 900 seconds, got 901$/,
    ],
    [{ workerTimeout: 30 }, /^Invalid worker_timeout: expected a whole number from 60 to 900/],
    [{ workerTimeout: 90.5 }, /^Invalid worker_timeout: expected a whole number/],
    [
      { workerMemorySize: 64 },
      /^Invalid worker_memory_size: expected a whole number from 128 to 10240 MB, got 64$/,
    ],
    [
      { workerReservedConcurrentExecutions: 0 },
      /^Invalid worker_reserved_concurrent_executions: expected a whole number, 1 or more, got 0$/,
    ],
    [
      { workerMaximumRetryAttempts: 3 },
      /^Invalid worker_maximum_retry_attempts: expected a whole number from 0 to 2, got 3$/,
    ],
    [
      { workerMaximumEventAgeInSeconds: 30 },
      /^Invalid worker_maximum_event_age_in_seconds: expected a whole number from 60 to 21600 seconds, got 30$/,
    ],
    [{ maxRunLegs: 0 }, /^Invalid max_run_legs: expected a whole number from 1 to 999, got 0$/],
    [{ maxRunLegs: 1000 }, /^Invalid max_run_legs: expected a whole number from 1 to 999/],
    [
      { webhookAllowedHosts: ["hooks.example.com", "Hooks.Example.com"] },
      /^Invalid webhook_allowed_hosts: expected lowercase host names, or host:port, .*, got "Hooks\.Example\.com"$/,
    ],
    [
      { streamTimeout: 901 },
      /^Invalid stream_timeout: expected a whole number from 30 to 900 seconds, got 901$/,
    ],
    [{ streamTimeout: 29 }, /^Invalid stream_timeout: expected a whole number from 30 to 900/],
    [{ streamTimeout: 60.5 }, /^Invalid stream_timeout: expected a whole number/],
    [
      { streamMemorySize: 64 },
      /^Invalid stream_memory_size: expected a whole number from 128 to 10240 MB, got 64$/,
    ],
    [
      { streamReservedConcurrentExecutions: 0 },
      /^Invalid stream_reserved_concurrent_executions: expected a whole number, 1 or more, got 0$/,
    ],
    [
      { streamCorsAllowOrigins: ["*"] },
      /^Invalid stream_cors_allow_origins: expected https origins like .*, got "\*"$/,
    ],
    [
      { streamCorsAllowOrigins: ["https://app.example.com/"] },
      /^Invalid stream_cors_allow_origins: expected https origins like/,
    ],
    [
      { jwtIssuer: "https://issuer.example.com/", jwtAudience: ["web,mobile"] },
      /^Invalid jwt_audience: expected audiences without commas, got "web,mobile"$/,
    ],
    [
      { environment: { JWT_ISSUER: "https://attacker.example.com/" } },
      /^Invalid environment: expected none of JWT_ISSUER, JWT_AUDIENCE \(the module sets them from the authorizer's issuer and audiences.*, got \["JWT_ISSUER"\]$/,
    ],
    [
      { environment: { JWT_AUDIENCE: "any" } },
      /^Invalid environment: expected none of JWT_ISSUER, JWT_AUDIENCE .*, got \["JWT_AUDIENCE"\]$/,
    ],
    [
      { webhookAllowedHosts: ["https://hooks.example.com"] },
      /^Invalid webhook_allowed_hosts: expected .* \(no scheme: webhooks are posted over https\), got "https:\/\/hooks\.example\.com"$/,
    ],
    [
      {
        secrets: {
          OPENAI_API_KEY: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:agents/openai",
        },
      },
      /^Invalid secrets: expected complete Secrets Manager ARNs, ending in the - and six characters .*, got "arn:aws:secretsmanager:eu-west-1:123456789012:secret:agents\/openai"$/,
    ],
    [
      { graphPolicyStatements: { ReadAll: { actions: ["s3:*"], resources: ["*"] } } },
      /^Invalid graph_policy_statements: expected no Allow statement with a wildcard action \(like s3:\*\) on resource \*: name the actions, or the resources \(ReadAll\), got \["s3:\*"\]$/,
    ],
    [
      { createAlarms: true },
      /^Invalid create_alarms: expected an alarm topic with it \(create_alarm_topic = true, or alarm_sns_topic_arn\): alarms without actions notify nobody, got none$/,
    ],
    [
      { vpcSubnetIds: ["subnet-0123456789abcdef0"] },
      /^Invalid vpc_subnet_ids: expected subnets and security groups together \(both or neither\), got 1 subnets and 0 security groups$/,
    ],
    [
      { vpcSubnetIds: ["subnet-12"], vpcSecurityGroupIds: ["sg-0123456789abcdef0"] },
      /^Invalid vpc_subnet_ids: expected ids like subnet-<8 or 17 hex digits>, got "subnet-12"$/,
    ],
    [
      { vpcSubnetIds: ["subnet-0123456789abcdef0"], vpcSecurityGroupIds: ["default"] },
      /^Invalid vpc_security_group_ids: expected ids like sg-<8 or 17 hex digits>, got "default"$/,
    ],
  ] as [Partial<MemoryTableProps>, RegExp][])(
    "rejects %j before creating anything",
    (props, message) => {
      const stack = new TerraformStack(Testing.app({ outdir: outdir() }), "test");
      const create = () =>
        new MemoryTable(stack, "agents", { name: "agents", imageUri: IMAGE_URI, ...props });
      expect(create).toThrow(InvalidConfigurationError);
      expect(create).toThrow(message);
    },
  );
});

describe("MemoryTable construct: what a graph needs, alarms, published versions (synth)", () => {
  const SECRETS = {
    OPENAI_API_KEY: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:agents/openai-AbCdEf",
    DB_PASSWORD: "arn:aws:ssm:eu-west-1:123456789012:parameter/agents/db-password",
  };
  const SECRETS_KEY = "arn:aws:kms:eu-west-1:123456789012:key/22222222-3333-4444-5555-666666666666";
  const roleIdOf = (synthesized: Synthesized, fnName: string) => {
    const [, fn] = onlyResource(
      synthesized,
      "aws_lambda_function",
      (f) => f.function_name === fnName,
    );
    return String(fn.role).replace(/\.arn(\)?)\}$/, ".id$1}");
  };
  /** The functions that run graphs. */
  const GRAPH_FUNCTIONS = ["agents", "agents-worker", "agents-stream"];
  /** The policy of that name on the role of that function. */
  const policyNamed = (synthesized: Synthesized, name: string, fnName = "agents") =>
    onlyResource(
      synthesized,
      "aws_iam_role_policy",
      (policy) => policy.name === name && policy.role === roleIdOf(synthesized, fnName),
    )[1];
  const actionsIn = (policy: unknown) =>
    [...String(policy).matchAll(/"Action" = \[([^\]]*)\]/g)].flatMap((match) =>
      match[1]!.split(",").map((action) => action.trim().replace(/"/g, "")),
    );

  it("gives the functions that run graphs their secrets as ARNs, and read access to exactly those", () => {
    const synthesized = synthesize(
      build({ secrets: SECRETS, secretsKmsKeyArns: [SECRETS_KEY] }).stack,
    );
    for (const fnName of GRAPH_FUNCTIONS) {
      const [, fn] = onlyResource(
        synthesized,
        "aws_lambda_function",
        (f) => f.function_name === fnName,
      );
      const variables = (fn.environment as { variables: Record<string, string> }).variables;
      // Only the ARNs: the image resolves them at cold start.
      expect(variables[ENVIRONMENT.environmentArns]).toMatch(
        /^\$\{jsonencode\(local\.[a-z_0-9A-Z]+\)\}$/,
      );
      const local = /local\.([A-Za-z0-9_]+)/.exec(variables[ENVIRONMENT.environmentArns]!)![1]!;
      expect((synthesized as unknown as { locals: Record<string, unknown> }).locals[local]).toEqual(
        SECRETS,
      );
      const secretsPolicy = policyNamed(synthesized, "graph-secrets", fnName);
      expect(secretsPolicy.count).toBe(1);
      expect([...new Set(actionsIn(secretsPolicy.policy))].sort()).toEqual([
        "kms:Decrypt",
        "secretsmanager:GetSecretValue",
        "ssm:GetParameter",
      ]);
      // KMS only through each service, for its own secrets' encryption context.
      expect(String(secretsPolicy.policy)).toContain('"kms:EncryptionContext:SecretARN"');
      expect(String(secretsPolicy.policy)).toContain('"kms:EncryptionContext:PARAMETER_ARN"');
      expect(String(secretsPolicy.policy)).toContain(
        '"kms:ViaService" = join(".", ["secretsmanager"',
      );
      expect(String(secretsPolicy.policy)).toContain('"kms:ViaService" = join(".", ["ssm"');
    }
    // The cleaner runs no graph: no secrets, no extra permission.
    const [, cleaner] = onlyResource(synthesized, "aws_lambda_function", (f) =>
      String(f.function_name).endsWith("-cleaner"),
    );
    expect(JSON.stringify(cleaner.environment)).not.toContain(ENVIRONMENT.environmentArns);
  });

  it("adds the graph's own statements and managed policies beside the module's, on the graph functions' roles", () => {
    const synthesized = synthesize(
      build({
        graphPolicyStatements: {
          InvokeModel: {
            actions: ["bedrock:InvokeModel"],
            resources: ["arn:aws:bedrock:eu-west-1::foundation-model/anthropic.claude-v2"],
          },
        },
        graphPolicyArns: { search: "arn:aws:iam::123456789012:policy/search" },
      }).stack,
    );
    const attachments = resourcesOf(synthesized, "aws_iam_role_policy_attachment");
    for (const fnName of GRAPH_FUNCTIONS) {
      expect(policyNamed(synthesized, "graph-statements", fnName).count).toBe(1);
      const roleName = roleIdOf(synthesized, fnName).replace(/\.id(\)?)\}$/, ".name$1}");
      const [, attachment] = attachments.find(([, a]) => a.role === roleName)!;
      expect(attachment.policy_arn).toBe("${each.value}");
    }
    expect(attachments).toHaveLength(GRAPH_FUNCTIONS.length);
    // The module's own policy is untouched.
    for (const [, policy] of resourcesOf(synthesized, "aws_iam_role_policy")) {
      if (policy.name === "memory-table") {
        expect(actionsIn(policy.policy)).not.toContain("bedrock:InvokeModel");
      }
    }
    expectSecurityBar(synthesized);
  });

  it("creates none of the graph extras by default", () => {
    const synthesized = synthesize(build().stack);
    for (const fnName of GRAPH_FUNCTIONS) {
      expect(policyNamed(synthesized, "graph-statements", fnName).count).toBe(0);
      expect(policyNamed(synthesized, "graph-secrets", fnName).count).toBe(0);
      const [, fn] = onlyResource(
        synthesized,
        "aws_lambda_function",
        (f) => f.function_name === fnName,
      );
      expect(JSON.stringify(fn.environment)).not.toContain(ENVIRONMENT.environmentArns);
    }
  });

  it.each([
    ["info", "INFO"],
    ["warn", "INFO"],
    ["error", "INFO"],
    ["debug", "DEBUG"],
    ["trace", "TRACE"],
  ])(
    "logs JSON, Lambda filtering at most down to INFO (LOG_LEVEL %s -> %s): pino's numeric levels read as INFO",
    (logLevel, applicationLevel) => {
      const synthesized = synthesize(build({ logLevel }).stack);
      for (const [, fn] of resourcesOf(synthesized, "aws_lambda_function")) {
        expect(fn.logging_config).toMatchObject({
          log_format: "JSON",
          application_log_level: applicationLevel,
          system_log_level: "INFO",
        });
      }
    },
  );

  it("invokes $LATEST with publish = false, and the alias of the published version by default", () => {
    const plain = synthesize(build({ publish: false }).stack);
    for (const [, alias] of resourcesOf(plain, "aws_lambda_alias")) expect(alias.count).toBe(0);
    expect(onlyResource(plain, "aws_lambda_provisioned_concurrency_config")[1].count).toBe(0);
    const [apiName, api] = onlyResource(
      plain,
      "aws_lambda_function",
      (f) => f.function_name === "agents",
    );
    expect(api.publish).toBe(false);
    expect(onlyResource(plain, "aws_apigatewayv2_integration")[1].integration_uri).toBe(
      ref("aws_lambda_function", apiName, "invoke_arn"),
    );
    const apiPermission = (synthesized: Synthesized) =>
      onlyResource(
        synthesized,
        "aws_lambda_permission",
        (permission) =>
          permission.principal === "apigateway.amazonaws.com" &&
          permission.statement_id === "AllowThisHttpApi",
      )[1];
    expect(apiPermission(plain).qualifier).toBeUndefined();

    const published = synthesize(build({ provisionedConcurrentExecutions: 5 }).stack);
    const [aliasName, alias] = onlyResource(published, "aws_lambda_alias", (config) =>
      String(config.function_name).includes(apiName),
    );
    expect(alias).toMatchObject({ count: 1, name: "live" });
    expect(alias.function_version).toMatch(/aws_lambda_function\..+\.version/);
    expect(onlyResource(published, "aws_lambda_provisioned_concurrency_config")[1]).toMatchObject({
      count: 1,
      provisioned_concurrent_executions: 5,
      qualifier: `\${one(aws_lambda_alias.${aliasName}[*].name)}`,
    });
    expect(onlyResource(published, "aws_apigatewayv2_integration")[1].integration_uri).toBe(
      `\${one(aws_lambda_alias.${aliasName}[*].invoke_arn)}`,
    );
    expect(apiPermission(published).qualifier).toBe(
      `\${one(aws_lambda_alias.${aliasName}[*].name)}`,
    );
    expectSecurityBar(published);
  });

  it("creates no alarm by default, and with create_alarms each alarm notifying the created topic", () => {
    const quiet = synthesize(build().stack);
    for (const type of [
      "aws_cloudwatch_metric_alarm",
      "aws_cloudwatch_log_metric_filter",
      "aws_sns_topic",
      "aws_sns_topic_policy",
    ]) {
      for (const [, resource] of resourcesOf(quiet, type)) expect(resource.count).toBe(0);
    }
    const alarmed = synthesize(build({ createAlarms: true, createAlarmTopic: true }).stack);
    const alarms = resourcesOf(alarmed, "aws_cloudwatch_metric_alarm");
    const [topicName, topic] = onlyResource(alarmed, "aws_sns_topic");
    expect(topic.count).toBe(1);
    // Alarm names refer to the functions' names: resolve them.
    const functionNames = Object.fromEntries(
      resourcesOf(alarmed, "aws_lambda_function").map(([id, fn]) => [id, String(fn.function_name)]),
    );
    const alarmNames = alarms.map(([, alarm]) =>
      String(alarm.alarm_name).replace(
        /\$\{(?:one\()?aws_lambda_function\.([^.[]+)(?:\[\*\])?\.function_name\)?\}/,
        (_, id: string) => functionNames[id]!,
      ),
    );
    expect([...alarmNames].sort()).toEqual(
      [
        "agents-api-5xx-rate",
        "agents-errors",
        "agents-throttles",
        "agents-runs-failed",
        "agents-runs-timed-out",
        "agents-worker-errors",
        "agents-worker-throttles",
        "agents-worker-runs-failed",
        "agents-worker-runs-timed-out",
        "agents-worker-failed-jobs",
        "agents-stream-errors",
        "agents-stream-throttles",
        "agents-stream-runs-failed",
        "agents-stream-runs-timed-out",
        "agents-worker-failure-queue-age",
        "agents-cleaner-errors",
        "agents-cleaner-throttles",
        "agents-cleaner-iterator-age",
        "agents-dead-letter-queue",
        "agents-dynamodb-throttles",
        // Near a limit: the API's p99 latency, each function's reserved concurrency, the timeout of the
        // functions that should never run long, and the stream URL's 5xx rate.
        "agents-api-latency",
        "agents-concurrency",
        "agents-worker-concurrency",
        "agents-stream-concurrency",
        "agents-cleaner-concurrency",
        "agents-duration",
        "agents-cleaner-duration",
        "agents-stream-url-5xx-rate",
      ].sort(),
    );
    const byName = (name: string) => alarms[alarmNames.indexOf(name)]![1];
    // Defaults: 90 % of the API function's 29 s, 80 % of its 50 reserved; p99 over 10 s.
    expect(byName("agents-duration")).toMatchObject({
      metric_name: "Duration",
      statistic: "Maximum",
      threshold: 26_100,
    });
    expect(byName("agents-concurrency")).toMatchObject({
      metric_name: "ConcurrentExecutions",
      statistic: "Maximum",
      threshold: 40,
    });
    // Provisioned concurrency off (a literal): no spillover alarm at all.
    expect(alarmNames).not.toContain("agents-provisioned-spillover");
    expect(byName("agents-api-latency")).toMatchObject({
      namespace: "AWS/ApiGateway",
      metric_name: "Latency",
      extended_statistic: "p99",
      threshold: 10_000,
    });
    for (const [, alarm] of alarms) {
      expect(alarm).toMatchObject({
        count: 1,
        treat_missing_data: "notBreaching",
        alarm_actions: `\${compact([one(aws_sns_topic.${topicName}[*].arn)])}`,
        ok_actions: `\${compact([one(aws_sns_topic.${topicName}[*].arn)])}`,
      });
    }
    expect(
      onlyResource(
        alarmed,
        "aws_cloudwatch_metric_alarm",
        (a) => a.alarm_name === "agents-cleaner-iterator-age",
      )[1].threshold,
    ).toBe(3_600_000);
    // The topic's key lets CloudWatch publish; its policy only this module's alarms, in this account.
    const topicPolicy = policyStatements(onlyResource(alarmed, "aws_sns_topic_policy")[1].policy);
    expect(topicPolicy).toEqual([
      expect.objectContaining({
        Principal: { Service: "cloudwatch.amazonaws.com" },
        Action: "sns:Publish",
        Condition: {
          ArnLike: {
            "aws:SourceArn": expect.stringMatching(/:cloudwatch:.*:123456789012:alarm:agents-\*$/),
          },
          StringEquals: { "aws:SourceAccount": "123456789012" },
        },
      }),
    ]);
    expectSecurityBar(alarmed);
  });

  it("notifies a brought topic, with overridden thresholds", () => {
    const topicArn = "arn:aws:sns:eu-west-1:123456789012:on-call";
    const synthesized = synthesize(
      build({ createAlarms: true, alarmSnsTopicArn: topicArn, alarmThresholds: { runsFailed: 3 } })
        .stack,
    );
    expect(onlyResource(synthesized, "aws_sns_topic")[1].count).toBe(0);
    const failed = resourcesOf(synthesized, "aws_cloudwatch_metric_alarm").filter(([, alarm]) =>
      String(alarm.alarm_name).endsWith("-runs-failed"),
    );
    // Per function that runs graphs.
    expect(failed).toHaveLength(3);
    for (const [, alarm] of failed) {
      expect(alarm).toMatchObject({ threshold: 3, alarm_actions: [topicArn] });
    }
  });

  it("counts failed and timed-out runs from the runtime's own metric line, per function", () => {
    const synthesized = synthesize(build({ createAlarms: true, createAlarmTopic: true }).stack);
    const lines: Record<string, Record<string, unknown>> = {};
    const metrics = (outcome: "failed" | "deadline") =>
      new RunMetrics((line) => (lines[outcome] = JSON.parse(line) as Record<string, unknown>));
    metrics("failed").record("booking", "failed", 12);
    metrics("deadline").record("booking", "deadline", 12);
    const filters = resourcesOf(synthesized, "aws_cloudwatch_log_metric_filter").map(([, f]) => f);
    expect(filters).toHaveLength(6);
    for (const [outcome, field] of [
      ["failed", RUN_OUTCOME_FIELDS.runsFailed],
      ["deadline", RUN_OUTCOME_FIELDS.runsTimedOut],
    ] as const) {
      const counting = filters.filter((f) => String(f.pattern).includes(field));
      // One per function that runs graphs, on its own log group.
      expect(counting.map((f) => String(f.log_group_name)).sort()).toEqual([
        expect.stringMatching(/aws_cloudwatch_log_group\..*api_log_group.*\.name/),
        expect.stringMatching(/aws_cloudwatch_log_group\..*worker_log_group.*\.name/),
        expect.stringMatching(/aws_cloudwatch_log_group\..*stream_log_group.*\.name/),
      ]);
      for (const filter of counting) {
        // The pattern selects the line's field, at the value the runtime writes for that outcome.
        expect(filter.pattern).toBe(`{ $.${field} = 1 }`);
        expect(lines[outcome]![field]).toBe(1);
        expect(filter.metric_transformation).toMatchObject({ name: field, value: "1" });
      }
    }
  });
});

describe("MemoryTable construct: the background-run worker (synth)", () => {
  const functionNamed = (synthesized: Synthesized, functionName: string) =>
    onlyResource(synthesized, "aws_lambda_function", (fn) => fn.function_name === functionName);
  const roleIdOf = (synthesized: Synthesized, functionName: string) =>
    String(functionNamed(synthesized, functionName)[1].role).replace(/\.arn(\)?)\}$/, ".id$1}");
  const modulePolicyOf = (synthesized: Synthesized, functionName: string) =>
    policyStatements(
      onlyResource(
        synthesized,
        "aws_iam_role_policy",
        (policy) =>
          policy.name === "memory-table" && policy.role === roleIdOf(synthesized, functionName),
      )[1].policy,
    );
  /** The ARN of the worker's alias, as the roles name it (known at plan: built from the names). */
  const workerArnIn = (synthesized: Synthesized) => {
    const [partition] = Object.keys(synthesized.data!.aws_partition!);
    const [region] = Object.keys(synthesized.data!.aws_region!);
    return `arn:\${data.aws_partition.${partition}.partition}:lambda:\${data.aws_region.${region}.id}:123456789012:function:agents-worker:live`;
  };

  it("is invoked asynchronously: Lambda retries, then sends the job to the worker's own encrypted queue, which feeds it back", () => {
    const synthesized = synthesize(build().stack);
    const [workerName] = functionNamed(synthesized, "agents-worker");
    const [queueName, queue] = onlyResource(
      synthesized,
      "aws_sqs_queue",
      (q) => q.name === "agents-worker-failures",
    );
    const queueArn = ref("aws_sqs_queue", queueName, "arn");
    expect(queue).toMatchObject({
      kms_master_key_id: expect.stringMatching(/aws_kms_key\./),
      message_retention_seconds: 1209600,
      // Six worker timeouts: a record is not received again while a batch is still being handled.
      visibility_timeout_seconds: 5400,
      tags: {},
    });
    expect(queue.redrive_policy).toBeUndefined();
    const [, invokeConfig] = onlyResource(synthesized, "aws_lambda_function_event_invoke_config");
    const [workerAlias] = onlyResource(synthesized, "aws_lambda_alias", (alias) =>
      String(alias.function_name).includes(workerName),
    );
    expect(invokeConfig).toEqual({
      function_name: ref("aws_lambda_function", workerName, "function_name"),
      // Per qualifier: the alias every caller invokes.
      qualifier: `\${one(aws_lambda_alias.${workerAlias}[*].name)}`,
      maximum_retry_attempts: 2,
      maximum_event_age_in_seconds: 3600,
      destination_config: { on_failure: { destination: queueArn } },
    });
    const [, trigger] = onlyResource(
      synthesized,
      "aws_lambda_event_source_mapping",
      (mapping) => mapping.event_source_arn === queueArn,
    );
    expect(trigger).toEqual({
      event_source_arn: queueArn,
      function_name: `\${one(aws_lambda_alias.${workerAlias}[*].arn)}`,
      batch_size: 5,
      // src/runtime/worker.ts answers with batchItemFailures: only the records it could not record come back.
      function_response_types: ["ReportBatchItemFailures"],
      scaling_config: { maximum_concurrency: 2 },
      tags: {},
    });
    // A destination record, not a dead-letter message: the worker reads the job from `requestPayload`.
    expect(functionNamed(synthesized, "agents-worker")[1].dead_letter_config).toBeUndefined();
  });

  it("lets the API and stream functions invoke only the worker, and the worker only itself and its own queue (least privilege)", () => {
    const synthesized = synthesize(build({ createTenantRole: true }).stack);
    const workerArn = workerArnIn(synthesized);
    const [queueName] = onlyResource(
      synthesized,
      "aws_sqs_queue",
      (q) => q.name === "agents-worker-failures",
    );
    const queueArn = ref("aws_sqs_queue", queueName, "arn");
    const invoke = {
      Sid: "InvokeWorker",
      Effect: "Allow",
      Action: ["lambda:InvokeFunction"],
      Resource: [workerArn],
    };
    const api = modulePolicyOf(synthesized, "agents");
    expect(api.filter((statement) => JSON.stringify(statement.Action).includes("lambda:"))).toEqual(
      [invoke],
    );
    expect(JSON.stringify(api)).not.toContain("sqs:");
    const worker = modulePolicyOf(synthesized, "agents-worker");
    expect(
      worker.filter((statement) => JSON.stringify(statement.Action).includes("lambda:")),
    ).toEqual([invoke]);
    expect(worker.filter((statement) => JSON.stringify(statement.Action).includes("sqs:"))).toEqual(
      [
        {
          Sid: "FailureDestination",
          Effect: "Allow",
          Action: ["sqs:SendMessage"],
          Resource: [queueArn],
        },
        {
          Sid: "EventSourceQueue",
          Effect: "Allow",
          Action: ["sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"],
          Resource: [queueArn],
        },
      ],
    );
    // Its graphs use the table like the API function's: the same item actions, on the table and its indexes.
    expect(worker.find((statement) => statement.Sid === "DynamoDBItems")).toEqual(
      api.find((statement) => statement.Sid === "DynamoDBItems"),
    );
    // The stream function hands background runs to the worker too, and sends to no queue.
    const stream = modulePolicyOf(synthesized, "agents-stream");
    expect(
      stream.filter((statement) => JSON.stringify(statement.Action).includes("lambda:")),
    ).toEqual([invoke]);
    expect(JSON.stringify(stream)).not.toContain("sqs:");
    // Nothing else anywhere may invoke a function: the cleaner and the tenant role get no lambda: action.
    for (const [, policy] of resourcesOf(synthesized, "aws_iam_role_policy")) {
      if (policy.role === roleIdOf(synthesized, "agents")) continue;
      if (policy.role === roleIdOf(synthesized, "agents-worker")) continue;
      if (policy.role === roleIdOf(synthesized, "agents-stream")) continue;
      expect(String(policy.policy)).not.toContain("lambda:");
    }
    // The worker's ARN names exactly the function that is created, on its alias.
    expect(
      workerArn.endsWith(
        `:function:${String(functionNamed(synthesized, "agents-worker")[1].function_name)}:live`,
      ),
    ).toBe(true);
  });

  it("schedules the recovery sweep: a rule every minute invoking the worker with the sweep event, permitted to that rule only", () => {
    const synthesized = synthesize(build().stack);
    const [workerName] = functionNamed(synthesized, "agents-worker");
    const [ruleName, rule] = onlyResource(synthesized, "aws_cloudwatch_event_rule");
    expect(rule).toMatchObject({
      count: 1,
      name: "agents-recovery-sweep",
      schedule_expression: "rate(1 minute)",
      tags: {},
    });
    const [, target] = onlyResource(synthesized, "aws_cloudwatch_event_target");
    const [workerAlias] = onlyResource(synthesized, "aws_lambda_alias", (alias) =>
      String(alias.function_name).includes(workerName),
    );
    expect(target).toMatchObject({
      count: 1,
      rule: `\${one(aws_cloudwatch_event_rule.${ruleName}[*].name)}`,
      arn: `\${one(aws_lambda_alias.${workerAlias}[*].arn)}`,
    });
    // Exactly the event worker.handler tells from a run job, with the kind the worker reads.
    expect(JSON.parse(String(target.input))).toEqual({ kind: RECOVERY_SWEEP_KIND });
    expect(Object.keys(JSON.parse(String(target.input)) as object)).toEqual(["kind"]);
    const [, permission] = onlyResource(
      synthesized,
      "aws_lambda_permission",
      (config) => config.principal === "events.amazonaws.com",
    );
    expect(permission).toEqual({
      count: 1,
      statement_id: "AllowRecoverySweepSchedule",
      action: "lambda:InvokeFunction",
      function_name: ref("aws_lambda_function", workerName, "function_name"),
      qualifier: `\${one(aws_lambda_alias.${workerAlias}[*].name)}`,
      principal: "events.amazonaws.com",
      source_arn: `\${one(aws_cloudwatch_event_rule.${ruleName}[*].arn)}`,
    });
  });

  it("takes the sweep's schedule from its props, and creates none of it with a null or empty schedule", () => {
    for (const schedule of ["rate(5 minutes)", "rate(1 hour)", "cron(0/2 * * * ? *)"]) {
      const synthesized = synthesize(build({ recoverySweepSchedule: schedule }).stack);
      expect(onlyResource(synthesized, "aws_cloudwatch_event_rule")[1].schedule_expression).toBe(
        schedule,
      );
    }
    for (const schedule of [null, ""]) {
      const synthesized = synthesize(
        build({ recoverySweepSchedule: schedule, createCrons: false }).stack,
      );
      const sweep = [
        ...resourcesOf(synthesized, "aws_cloudwatch_event_rule"),
        ...resourcesOf(synthesized, "aws_cloudwatch_event_target"),
        ...resourcesOf(synthesized, "aws_lambda_permission").filter(
          ([, config]) => config.principal === "events.amazonaws.com",
        ),
      ];
      // Declared with count 0: nothing of the sweep is created.
      expect(sweep).toHaveLength(3);
      for (const [id, config] of sweep) {
        expect({ schedule, id, count: config.count }).toEqual({ schedule, id, count: 0 });
      }
    }
  });

  it("fires crons by default, and with createCrons false tells the functions that run graphs so (CRONS_ENABLED)", () => {
    const graphFunctions = (synthesized: ReturnType<typeof synthesize>) =>
      resourcesOf(synthesized, "aws_lambda_function").filter(([, config]) =>
        ([IMAGE_HANDLERS.api, IMAGE_HANDLERS.worker, STREAM_HANDLER] as string[]).includes(
          (config.image_config as { command: string[] }).command[0]!,
        ),
      );
    for (const [createCrons, value] of [
      [undefined, "true"],
      [true, "true"],
      [false, "false"],
    ] as const) {
      const functions = graphFunctions(synthesize(build({ createCrons }).stack));
      expect(functions).toHaveLength(3);
      for (const [id, config] of functions) {
        const variables = (config.environment as { variables: Record<string, string> }).variables;
        expect({ createCrons, id, value: variables[CRONS_ENABLED] }).toEqual({
          createCrons,
          id,
          value,
        });
      }
    }
    // The cleaner and the authorizer serve no cron route and fire none.
    const others = resourcesOf(
      synthesize(build({ enableApiKeys: true }).stack),
      "aws_lambda_function",
    ).filter(([, config]) =>
      ([IMAGE_HANDLERS.cleaner, IMAGE_HANDLERS.authorizer] as string[]).includes(
        (config.image_config as { command: string[] }).command[0]!,
      ),
    );
    expect(others).toHaveLength(2);
    for (const [, config] of others) {
      expect((config.environment as { variables: object }).variables).not.toHaveProperty(
        CRONS_ENABLED,
      );
    }
  });

  it("refuses crons without the sweep that fires them, and allows no sweep without crons", () => {
    for (const schedule of [null, ""]) {
      expect(errorOf(() => build({ recoverySweepSchedule: schedule }))).toBe(
        `Invalid recovery_sweep_schedule: expected a schedule with create_crons = true (the recovery sweep fires the due crons: without it no cron would ever fire), or create_crons = false, got ${JSON.stringify(schedule)}`,
      );
      expect(errorOf(() => build({ recoverySweepSchedule: schedule, createCrons: false }))).toBe(
        "",
      );
    }
  });

  it("gives the API a regional TLS 1.2 custom domain mapped to its stage only when both domain and certificate are given", () => {
    const certificate =
      "arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d";
    expect(resourcesOf(synthesize(build().stack), "aws_apigatewayv2_domain_name")).toEqual([]);
    const synthesized = synthesize(
      build({ apiDomainName: "agents.example.com", apiCertificateArn: certificate }).stack,
    );
    const [domainName, domain] = onlyResource(synthesized, "aws_apigatewayv2_domain_name");
    expect(domain).toMatchObject({
      domain_name: "agents.example.com",
      domain_name_configuration: {
        certificate_arn: certificate,
        endpoint_type: "REGIONAL",
        security_policy: "TLS_1_2",
      },
    });
    const [, mapping] = onlyResource(synthesized, "aws_apigatewayv2_api_mapping");
    expect(mapping.domain_name).toBe(`\${one(aws_apigatewayv2_domain_name.${domainName}[*].id)}`);
    expect(String(mapping.stage)).toMatch(/aws_apigatewayv2_stage\./);
    expect(mapping.api_mapping_key).toBeUndefined();
    for (const [props, error] of [
      [
        { apiDomainName: "agents.example.com" },
        /^Invalid api_certificate_arn: expected api_domain_name and api_certificate_arn together .*got only api_domain_name$/,
      ],
      [
        { apiCertificateArn: certificate },
        /^Invalid api_certificate_arn: expected api_domain_name and api_certificate_arn together .*got only api_certificate_arn$/,
      ],
      [
        { apiDomainName: "https://agents.example.com", apiCertificateArn: certificate },
        /^Invalid api_domain_name: expected a lowercase domain name/,
      ],
      [
        {
          apiDomainName: "agents.example.com",
          apiCertificateArn: "arn:aws:iam::123456789012:server-certificate/x",
        },
        /^Invalid api_certificate_arn: expected an ACM certificate ARN/,
      ],
    ] as const) {
      expect(errorOf(() => build(props))).toMatch(error);
    }
  });

  it("refuses a schedule EventBridge would refuse, naming the input", () => {
    for (const schedule of [
      "every minute",
      "rate(1 minutes)",
      "rate(5 minute)",
      "rate(0 minutes)",
      "rate(1 week)",
      "cron(* * * * *)",
      "at(2026-01-01T00:00:00)",
    ]) {
      expect({
        schedule,
        error: errorOf(() => build({ recoverySweepSchedule: schedule })),
      }).toEqual({
        schedule,
        error: expect.stringMatching(
          /^Invalid recovery_sweep_schedule: expected an EventBridge schedule/,
        ),
      });
    }
  });

  it("lets the worker Query the table and every index of the table definition by name, which a sweep reads", () => {
    const synthesized = synthesize(build().stack);
    const items = modulePolicyOf(synthesized, "agents-worker").find(
      (statement) => statement.Sid === "DynamoDBItems",
    )!;
    expect(items.Action).toContain("dynamodb:Query");
    const [tableName] = onlyResource(synthesized, "aws_dynamodb_table");
    const tableArn = ref("aws_dynamodb_table", tableName, "arn");
    expect(items.Resource).toEqual([
      tableArn,
      ...TABLE_DEFINITION.globalSecondaryIndexes.map((index) => `${tableArn}/index/${index.name}`),
    ]);
  });

  it("sizes the worker from its props: timeout, memory, concurrency, retries, event age", () => {
    const synthesized = synthesize(
      build({
        memorySize: 2048,
        workerTimeout: 300,
        workerReservedConcurrentExecutions: 5,
        workerMaximumRetryAttempts: 0,
        workerMaximumEventAgeInSeconds: 600,
      }).stack,
    );
    // Its memory follows the API function's unless given.
    expect(functionNamed(synthesized, "agents-worker")[1]).toMatchObject({
      timeout: 300,
      memory_size: 2048,
      reserved_concurrent_executions: 5,
    });
    expect(onlyResource(synthesized, "aws_lambda_function_event_invoke_config")[1]).toMatchObject({
      maximum_retry_attempts: 0,
      maximum_event_age_in_seconds: 600,
    });
    expect(
      onlyResource(synthesized, "aws_sqs_queue", (q) => q.name === "agents-worker-failures")[1]
        .visibility_timeout_seconds,
    ).toBe(1800);
    const own = synthesize(build({ workerMemorySize: 3008 }).stack);
    expect(functionNamed(own, "agents-worker")[1].memory_size).toBe(3008);
    expect(functionNamed(own, "agents")[1].memory_size).toBe(1024);
  });

  it("accepts exactly the lowercase webhook hosts the runtime accepts", () => {
    const samples = [
      "hooks.example.com",
      "a",
      "127.0.0.1:8443",
      "ci.example.com:443",
      "x-y.example",
      "https://hooks.example.com",
      "-hooks.example.com",
      "hooks.example.com-",
      "hooks.example.com:",
      "hooks.example.com:123456",
      "hooks example.com",
      "hooks.example.com/path",
    ];
    for (const host of samples) {
      const byRuntime = (() => {
        try {
          readRuntimeConfig({ [ENVIRONMENT.webhookAllowedHosts]: host });
          return true;
        } catch {
          return false;
        }
      })();
      const byModule = (() => {
        try {
          build({ webhookAllowedHosts: [host] });
          return true;
        } catch {
          return false;
        }
      })();
      expect({ host, byModule }).toEqual({ host, byModule: byRuntime });
    }
  });

  it("alarms on the jobs Lambda gave up on and on a failure the worker could not record, with overridable thresholds", () => {
    const synthesized = synthesize(
      build({
        createAlarms: true,
        createAlarmTopic: true,
        alarmThresholds: { workerFailedJobs: 2, workerFailureQueueAgeSeconds: 900 },
      }).stack,
    );
    const [queueName] = onlyResource(
      synthesized,
      "aws_sqs_queue",
      (q) => q.name === "agents-worker-failures",
    );
    const alarmNamed = (name: string) =>
      onlyResource(synthesized, "aws_cloudwatch_metric_alarm", (a) => a.alarm_name === name)[1];
    // The worker takes messages off its queue within seconds: what arrives counts, not the queue's depth.
    expect(alarmNamed("agents-worker-failed-jobs")).toMatchObject({
      namespace: "AWS/SQS",
      metric_name: "NumberOfMessagesSent",
      statistic: "Sum",
      threshold: 2,
      dimensions: { QueueName: ref("aws_sqs_queue", queueName, "name") },
    });
    expect(alarmNamed("agents-worker-failure-queue-age")).toMatchObject({
      namespace: "AWS/SQS",
      metric_name: "ApproximateAgeOfOldestMessage",
      statistic: "Maximum",
      threshold: 900,
      dimensions: { QueueName: ref("aws_sqs_queue", queueName, "name") },
    });
    // The worker's own errors and throttles, as every function's.
    const [workerName] = functionNamed(synthesized, "agents-worker");
    for (const suffix of ["errors", "throttles"]) {
      const [, alarm] = onlyResource(
        synthesized,
        "aws_cloudwatch_metric_alarm",
        (a) => a.alarm_name === `\${aws_lambda_function.${workerName}.function_name}-${suffix}`,
      );
      expect(alarm).toMatchObject({
        namespace: "AWS/Lambda",
        dimensions: { FunctionName: ref("aws_lambda_function", workerName, "function_name") },
      });
    }
  });
});

describe("MemoryTable construct: the stream function (synth)", () => {
  const streamFunction = (synthesized: Synthesized) =>
    onlyResource(synthesized, "aws_lambda_function", (fn) => fn.function_name === "agents-stream");
  const variablesOf = (fn: Record<string, unknown>) =>
    (fn.environment as { variables: Record<string, string> }).variables;
  const corsOf = (synthesized: Synthesized) =>
    onlyResource(synthesized, "aws_lambda_function_url")[1].cors as
      Record<string, unknown> | undefined;

  it("serves the whole API from a function URL in RESPONSE_STREAM mode, auth type NONE, public to call through the URL", () => {
    const synthesized = synthesize(build().stack);
    const [fnName] = streamFunction(synthesized);
    const functionName = `\${one(aws_lambda_function.${fnName}[*].function_name)}`;
    const [urlName, url] = onlyResource(synthesized, "aws_lambda_function_url");
    // The URL serves the stream function's alias (published by default).
    const [aliasName] = onlyResource(synthesized, "aws_lambda_alias", (alias) =>
      String(alias.function_name).includes(fnName),
    );
    const qualifier = `\${one(aws_lambda_alias.${aliasName}[*].name)}`;
    expect(url).toEqual({
      count: 1,
      function_name: functionName,
      qualifier,
      authorization_type: "NONE",
      invoke_mode: "RESPONSE_STREAM",
    });
    const permissions = resourcesOf(synthesized, "aws_lambda_permission")
      .map(([, permission]) => permission)
      .filter((permission) => permission.function_name === functionName)
      .sort((a, b) => String(b.action).localeCompare(String(a.action)));
    expect(permissions).toEqual([
      {
        count: 1,
        statement_id: "AllowPublicFunctionUrl",
        action: "lambda:InvokeFunctionUrl",
        function_name: functionName,
        qualifier,
        principal: "*",
        function_url_auth_type: "NONE",
        depends_on: [`aws_lambda_function_url.${urlName}`],
      },
    ]);
    // Lambda's second statement, conditioned on the function URL: declared through Cloud Control, as provider
    // 5.x's aws_lambda_permission cannot set lambda:InvokedViaFunctionUrl.
    const invokeViaUrl = resourcesOf(synthesized, "aws_cloudcontrolapi_resource").map(
      ([, resource]) => resource,
    );
    expect(invokeViaUrl).toEqual([
      expect.objectContaining({
        count: 1,
        type_name: "AWS::Lambda::Permission",
        desired_state: `\${jsonencode({"FunctionName" = format("%s:%s", ${functionName.slice(2, -1)}, ${qualifier.slice(2, -1)}), "Action" = "lambda:InvokeFunction", "Principal" = "*", "InvokedViaFunctionUrl" = true})}`,
        depends_on: [expect.stringMatching(/^aws_lambda_permission\..*url_permission/)],
      }),
    ]);
    // Invoked synchronously by its URL: no dead-letter queue, no asynchronous invoke configuration.
    expect(streamFunction(synthesized)[1].dead_letter_config).toBeUndefined();
    expect(
      resourcesOf(synthesized, "aws_lambda_function_event_invoke_config").map(
        ([, config]) => config.function_name,
      ),
    ).not.toContain(functionName);
  });

  it("verifies tokens against the external issuer and its audiences, as the authorizer does", () => {
    const synthesized = synthesize(
      build({ jwtIssuer: "https://issuer.example.com/", jwtAudience: ["web", "mobile"] }).stack,
    );
    const variables = variablesOf(streamFunction(synthesized)[1]);
    expect(variables).toMatchObject({
      [ENVIRONMENT.jwtIssuer]: "https://issuer.example.com/",
      [ENVIRONMENT.jwtAudience]: "web,mobile",
    });
    // What the runtime reads back from that environment.
    expect(
      readRuntimeConfig({
        [ENVIRONMENT.jwtIssuer]: variables[ENVIRONMENT.jwtIssuer],
        [ENVIRONMENT.jwtAudience]: variables[ENVIRONMENT.jwtAudience],
      }).jwt,
    ).toEqual({
      issuer: "https://issuer.example.com/",
      audiences: ["web", "mobile"],
    });
    expect(jwtAuthorizer(synthesized)[1].jwt_configuration).toEqual({
      issuer: "https://issuer.example.com/",
      audience: ["web", "mobile"],
    });
  });

  it("has the API function's least privilege, on its own role and log group", () => {
    const synthesized = synthesize(build().stack);
    const roleIdOf = (fn: Record<string, unknown>) =>
      String(fn.role).replace(/\.arn(\)?)\}$/, ".id$1}");
    const policyOf = (fn: Record<string, unknown>) =>
      Object.fromEntries(
        policyStatements(
          onlyResource(
            synthesized,
            "aws_iam_role_policy",
            (policy) => policy.name === "memory-table" && policy.role === roleIdOf(fn),
          )[1].policy,
        ).map((statement) => [statement.Sid, statement]),
      );
    const [, stream] = streamFunction(synthesized);
    const [, api] = onlyResource(
      synthesized,
      "aws_lambda_function",
      (fn) => fn.function_name === "agents",
    );
    const [logGroupName, logGroup] = onlyResource(
      synthesized,
      "aws_cloudwatch_log_group",
      (group) => group.name === "/aws/lambda/agents-stream",
    );
    expect(logGroup).toMatchObject({ count: 1, retention_in_days: 365 });
    const own = policyOf(stream);
    const apis = policyOf(api);
    expect(Object.keys(own).sort()).toEqual(Object.keys(apis).sort());
    for (const sid of ["DynamoDBItems", "KmsThroughServices", "XRay", "InvokeWorker"]) {
      expect({ sid, statement: own[sid] }).toEqual({ sid, statement: apis[sid] });
    }
    expect(own.OwnLogGroup!.Resource).toEqual([
      `\${one(aws_cloudwatch_log_group.${logGroupName}[*].arn)}:*`,
    ]);
    expect((stream.logging_config as { log_group: string }).log_group).toBe(
      `\${one(aws_cloudwatch_log_group.${logGroupName}[*].name)}`,
    );
    expect(roleIdOf(stream)).not.toBe(roleIdOf(api));
  });

  it("answers CORS for the API's origins by default, its own when given, and none with an empty list", () => {
    expect(corsOf(synthesize(build().stack))).toBeUndefined();
    const inherited = corsOf(
      synthesize(build({ corsAllowOrigins: ["https://app.example.com"] }).stack),
    );
    expect(inherited).toEqual({
      allow_origins: ["https://app.example.com"],
      allow_methods: ["DELETE", "GET", "PATCH", "POST", "PUT"],
      // Last-Event-ID: a client that reconnects resumes the stream after the last event it saw; X-Api-Key: the
      // JWT as browser UIs send it (the function verifies it as the bearer token).
      allow_headers: [
        "authorization",
        "content-type",
        "last-event-id",
        "mcp-protocol-version",
        "x-api-key",
      ],
      expose_headers: ["content-location"],
      allow_credentials: false,
      max_age: 3600,
    });
    const own = corsOf(
      synthesize(
        build({
          corsAllowOrigins: ["https://app.example.com"],
          streamCorsAllowOrigins: ["https://chat.example.com", "http://localhost:5173"],
        }).stack,
      ),
    );
    expect(own).toMatchObject({
      allow_origins: ["https://chat.example.com", "http://localhost:5173"],
    });
    expect(
      corsOf(
        synthesize(
          build({ corsAllowOrigins: ["https://app.example.com"], streamCorsAllowOrigins: [] })
            .stack,
        ),
      ),
    ).toBeUndefined();
  });

  it("sizes it from its props: timeout, memory, concurrency", () => {
    const synthesized = synthesize(
      build({
        memorySize: 2048,
        streamTimeout: 300,
        streamReservedConcurrentExecutions: 5,
      }).stack,
    );
    expect(streamFunction(synthesized)[1]).toMatchObject({
      timeout: 300,
      memory_size: 2048,
      reserved_concurrent_executions: 5,
    });
    const own = synthesize(build({ streamMemorySize: 3008 }).stack);
    expect(streamFunction(own)[1].memory_size).toBe(3008);
  });

  it("creates none of it when turned off: no function, URL, role, log group, graph extras or alarms of its own", () => {
    const synthesized = synthesize(
      build({
        createStreamFunction: false,
        createAlarms: true,
        createAlarmTopic: true,
        createTenantRole: true,
        attachTenantRoleAssumePolicy: true,
        secrets: {
          OPENAI_API_KEY:
            "arn:aws:secretsmanager:eu-west-1:123456789012:secret:agents/openai-AbCdEf",
        },
        graphPolicyStatements: {
          InvokeModel: { actions: ["bedrock:InvokeModel"], resources: ["*"] },
        },
        graphPolicyArns: { search: "arn:aws:iam::123456789012:policy/search" },
      }).stack,
    );
    const [fnName, fn] = streamFunction(synthesized);
    const streamResources = Object.entries(synthesized.resource).flatMap(([type, resources]) =>
      Object.entries(resources)
        .filter(([name]) => /stream_(function|url|invoke|role|log_group)/.test(name))
        .map(([name, config]) => ({ address: `${type}.${name}`, config })),
    );
    expect(streamResources.map(({ address }) => address.split(".")[0]).sort()).toEqual(
      [
        "aws_cloudwatch_log_group",
        "aws_cloudwatch_log_metric_filter",
        "aws_cloudwatch_log_metric_filter",
        "aws_cloudwatch_metric_alarm",
        "aws_cloudwatch_metric_alarm",
        "aws_cloudwatch_metric_alarm",
        "aws_cloudwatch_metric_alarm",
        // Its concurrency near the reserved limit, its URL's 5xx rate.
        "aws_cloudwatch_metric_alarm",
        "aws_cloudwatch_metric_alarm",
        "aws_iam_role",
        "aws_iam_role_policy",
        "aws_iam_role_policy",
        "aws_iam_role_policy",
        "aws_iam_role_policy",
        "aws_iam_role_policy_attachment",
        "aws_lambda_function",
        "aws_lambda_function_url",
        "aws_lambda_permission",
        "aws_cloudcontrolapi_resource",
      ].sort(),
    );
    for (const { address, config } of streamResources) {
      if (address.startsWith("aws_iam_role_policy_attachment.")) {
        expect({ address, for_each: config.for_each }).toEqual({ address, for_each: {} });
      } else {
        expect({ address, count: config.count }).toEqual({ address, count: 0 });
      }
    }
    expect(fn.count).toBe(0);
    // The tenant role trusts the roles that exist only.
    const [, tenantRole] = onlyResource(synthesized, "aws_iam_role", (role) =>
      String(role.name).startsWith("agents-tenant-"),
    );
    expect(String(tenantRole.assume_role_policy)).toContain('"AWS" = compact([');
    // The other functions keep theirs.
    expect(
      resourcesOf(synthesized, "aws_cloudwatch_metric_alarm").filter(
        ([, alarm]) => alarm.count === 1,
      ),
    ).toHaveLength(22);
    expect(fnName).toMatch(/stream_function/);
    expectSecurityBar(synthesize(build({ createStreamFunction: false }).stack));
  });
});

describe("MemoryTable construct: functions in a VPC (synth)", () => {
  it("attaches every function and gives every role the scoped network-interface actions, only when asked", () => {
    const subnets = ["subnet-0123456789abcdef0", "subnet-89abcdef"];
    const groups = ["sg-0123456789abcdef0"];
    const synthesized = synthesize(
      build({ vpcSubnetIds: subnets, vpcSecurityGroupIds: groups }).stack,
    );
    const functions = resourcesOf(synthesized, "aws_lambda_function");
    expect(functions).toHaveLength(5);
    for (const [, fn] of functions) {
      expect(fn.vpc_config).toEqual({ subnet_ids: subnets, security_group_ids: groups });
      expect(fn.depends_on).toEqual(
        expect.arrayContaining([expect.stringMatching(/^aws_iam_role_policy\..*_vpc_/)]),
      );
    }
    const vpcPolicies = resourcesOf(synthesized, "aws_iam_role_policy").filter(
      ([, policy]) => policy.name === "memory-table-vpc",
    );
    expect(vpcPolicies).toHaveLength(5);
    expect(new Set(vpcPolicies.map(([, policy]) => policy.role)).size).toBe(5);
    expect(String(vpcPolicies[0]![1].policy)).toContain(":*:subnet/subnet-89abcdef");

    const without = synthesize(build().stack);
    for (const [, fn] of resourcesOf(without, "aws_lambda_function")) {
      expect(fn.vpc_config).toBeUndefined();
      expect(fn.dynamic).toBeUndefined();
    }
    expect(
      resourcesOf(without, "aws_iam_role_policy").filter(
        ([, policy]) => policy.name === "memory-table-vpc",
      ),
    ).toEqual([]);
  });
});

describe("MemoryTable construct: API keys (synth)", () => {
  it("is off by default: every route behind the JWT authorizer, no authorizer function", () => {
    const synthesized = synthesize(build().stack);
    expect(
      onlyResource(synthesized, "aws_lambda_function", (fn) =>
        JSON.stringify(fn.image_config).includes(IMAGE_HANDLERS.authorizer),
      )[1].count,
    ).toBe(0);
    for (const [, route] of resourcesOf(synthesized, "aws_apigatewayv2_route")) {
      expect(route.authorization_type).toBe("JWT");
    }
  });

  it("with enableApiKeys puts every route behind the Lambda authorizer, its role reading API key items only", () => {
    const synthesized = synthesize(
      build({
        enableApiKeys: true,
        apiKeyCacheSeconds: 30,
        corsAllowOrigins: ["https://app.example.com"],
      }).stack,
    );
    // The security bar checks the authorizer, its role (GetItem on #api-key#* only) and every route.
    expectSecurityBar(synthesized);
    const [, fn] = onlyResource(synthesized, "aws_lambda_function", (config) =>
      JSON.stringify(config.image_config).includes(IMAGE_HANDLERS.authorizer),
    );
    expect(fn).toMatchObject({ count: 1, memory_size: 256, timeout: 10 });
    expect((fn.environment as { variables: Record<string, string> }).variables).toMatchObject({
      [ENVIRONMENT.apiKeyCacheSeconds]: "30",
    });
    for (const [, route] of resourcesOf(synthesized, "aws_apigatewayv2_route")) {
      expect(route.authorization_type).toBe("CUSTOM");
    }
    // Browsers may send the key cross-origin, to the API and to the stream URL.
    expect(onlyResource(synthesized, "aws_apigatewayv2_api")[1].cors_configuration).toMatchObject({
      allow_headers: expect.arrayContaining(["authorization", "x-api-key"]),
    });
    expect(onlyResource(synthesized, "aws_lambda_function_url")[1].cors).toMatchObject({
      allow_headers: expect.arrayContaining(["authorization", "x-api-key"]),
    });
  });

  it("rejects an API key cache period the runtime would refuse", () => {
    const stack = new TerraformStack(Testing.app({ outdir: outdir() }), "test");
    expect(
      () =>
        new MemoryTable(stack, "agents", {
          name: "agents",
          imageUri: IMAGE_URI,
          apiKeyCacheSeconds: 7200,
        }),
    ).toThrow(/^Invalid api_key_cache_seconds/);
  });
});
