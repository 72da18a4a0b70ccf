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
import { onlyResource, ref, resourcesOf, synthesize } from "./support/synthesized";

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

  it("runs the API handler and the cleaner from the same image with different commands", () => {
    const synthesized = Testing.synth(build().stack);
    expect(synthesized).toHaveResourceWithProperties(LambdaFunction, {
      function_name: "agents",
      image_uri: IMAGE_URI,
      image_config: { command: [IMAGE_HANDLERS.api] },
      timeout: 29,
      tracing_config: { mode: "Active" },
    });
    expect(synthesized).toHaveResourceWithProperties(LambdaFunction, {
      function_name: "agents-cleaner",
      image_uri: IMAGE_URI,
      image_config: { command: [IMAGE_HANDLERS.cleaner] },
    });
  });

  it("sets exactly the environment the code reads, after the caller's variables", () => {
    const synthesized = synthesize(
      build({ environment: { GRAPH_MODULE: "graphs/booking.js" } }).stack,
    );
    const [tableName] = onlyResource(synthesized, "aws_dynamodb_table");
    const [, fn] = onlyResource(
      synthesized,
      "aws_lambda_function",
      (config) => config.function_name === "agents",
    );
    expect((fn.environment as { variables: unknown }).variables).toEqual({
      GRAPH_MODULE: "graphs/booking.js",
      [ENVIRONMENT.tableName]: ref("aws_dynamodb_table", tableName, "name"),
      [ENVIRONMENT.tenantClaim]: "custom:tenant_id",
      [ENVIRONMENT.logLevel]: "info",
      [ENVIRONMENT.deadlineMarginMs]: "3000",
    });
  });

  it("feeds the cleaner only TTL removals of thread records, failures to the dead-letter queue", () => {
    const synthesized = synthesize(build().stack);
    const [tableName] = onlyResource(synthesized, "aws_dynamodb_table");
    const [queueName] = onlyResource(synthesized, "aws_sqs_queue");
    const [, mapping] = onlyResource(synthesized, "aws_lambda_event_source_mapping");
    expect(mapping.event_source_arn).toBe(ref("aws_dynamodb_table", tableName, "stream_arn"));
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
    const [, authorizer] = onlyResource(synthesized, "aws_apigatewayv2_authorizer");
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
    expect(onlyResource(synthesized, "aws_apigatewayv2_authorizer")[1].jwt_configuration).toEqual({
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
      ["cleaner", "function", "tenant"].map(
        (role) => `agents-${role}-\${data.aws_region.${regionName}.name}`,
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

  it("creates a tenant-scoped role, assumable only by the function role, limited by dynamodb:LeadingKeys", () => {
    const synthesized = synthesize(build({ createTenantRole: true }).stack);
    const [, apiFunction] = onlyResource(
      synthesized,
      "aws_lambda_function",
      (fn) => fn.function_name === "agents",
    );
    const functionRoleArn = String(apiFunction.role);
    const [tenantRoleName, tenantRole] = onlyResource(synthesized, "aws_iam_role", (role) =>
      String(role.name).startsWith("agents-tenant-"),
    );
    expect(tenantRole.count).toBe(1);
    expect(policyStatements(tenantRole.assume_role_policy)).toEqual([
      {
        Sid: "AssumeFromFunction",
        Effect: "Allow",
        Principal: { AWS: functionRoleArn },
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
        Resource: [tableArn, `${tableArn}/index/*`],
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
    const [, assume] = onlyResource(
      synthesized,
      "aws_iam_role_policy",
      (p) => p.name === "assume-tenant-role",
    );
    expect(assume.role).toBe(functionRoleArn.replace(/\.arn\}$/, ".id}"));
    expect(policyStatements(assume.policy)).toEqual([
      {
        Sid: "AssumeTenantRole",
        Effect: "Allow",
        Action: ["sts:AssumeRole", "sts:TagSession"],
        Resource: [`\${one(aws_iam_role.${tenantRoleName}[*].arn)}`],
      },
    ]);
  });

  it("uses a brought KMS key everywhere and creates none", () => {
    const keyArn = "arn:aws:kms:eu-west-1:123456789012:key/11111111-2222-3333-4444-555555555555";
    const synthesized = synthesize(build({ createKmsKey: false, kmsKeyArn: keyArn }).stack);
    expect(onlyResource(synthesized, "aws_kms_key")[1].count).toBe(0);
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
      /^Invalid environment: expected no variable whose name suggests a secret/,
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
