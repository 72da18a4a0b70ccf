import { Construct, Node } from "constructs";
import {
  TerraformElement,
  TerraformOutput,
  TerraformStack,
  TerraformVariable,
  Token,
} from "./cdktf";
import { AwsProvider } from "@cdktf/provider-aws/lib/provider";
import { MemoryTable } from "./construct/memory-table";
import { DEFAULTS } from "./construct/props";
import { LOG_LEVELS } from "../src/shared/defaults";
import {
  Architecture,
  ARCHITECTURES,
  CORS_ORIGIN_PATTERN,
  IMAGE_URI_PATTERN,
  LOG_RETENTION_DAYS,
  MAX_API_TIMEOUT_SECONDS,
  NAME_PATTERN,
  SECRET_NAME_PATTERN,
} from "./construct/rules";

/** Providers the module accepts: the bindings are generated for 5.100.0, and 6.x changed resource schemas. */
export const AWS_PROVIDER_CONSTRAINT = ">= 5.100.0, < 6.0.0";
/** Cross-variable validations need Terraform 1.9. */
export const TERRAFORM_CONSTRAINT = ">= 1.9.0";

interface VariableSpec {
  type: string;
  description: string;
  /** `null` makes the variable optional with no value; absent makes it required. */
  default?: unknown;
  validation?: { condition: string; message: string }[];
}

/** An HCL string literal (the patterns are shared with the construct's TypeScript checks). */
const hcl = (value: string): string => JSON.stringify(value);

/**
 * The CDKTF stack behind the HCL module `modules/memory-table`: terraform-aws-modules style variables mapped to
 * the construct's props, outputs for what it created, and none of what stops a stack from being a module
 * (backend, provider block, exact provider pin).
 */
export class ModuleStack extends TerraformStack {
  readonly memoryTable: MemoryTable;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    // Kept for CDKTF's synth validation only; removed below so consumers can use for_each/count.
    new AwsProvider(this, "aws");
    const v = this.declareVariables();

    this.memoryTable = new MemoryTable(this, MEMORY_TABLE_ID, {
      name: v.name.stringValue,
      imageUri: v.image_uri.stringValue,
      imageCommand: v.image_command.listValue,
      imageEntryPoint: v.image_entry_point.listValue,
      architecture: v.architecture.stringValue as Architecture,
      memorySize: v.memory_size.numberValue,
      timeout: v.timeout.numberValue,
      reservedConcurrentExecutions: v.reserved_concurrent_executions.numberValue,
      environment: Token.asStringMap(v.environment.value),
      tenantClaim: v.tenant_claim.stringValue,
      logLevel: v.log_level.stringValue,
      deadlineMarginMs: v.deadline_margin_ms.numberValue,
      logRetentionInDays: v.log_retention_in_days.numberValue,
      createKmsKey: v.create_kms_key.value,
      kmsKeyArn: v.kms_key_arn.stringValue,
      kmsKeyDeletionWindowInDays: v.kms_key_deletion_window_in_days.numberValue,
      deletionProtection: v.deletion_protection.value,
      // Explicit switches, not `var.x == null`: count must be known at plan, and an issuer or account id taken
      // from another resource is not.
      createCognitoUserPool: v.create_cognito_user_pool.value,
      jwtIssuer: v.jwt_issuer.stringValue,
      jwtAudience: v.jwt_audience.listValue,
      corsAllowOrigins: v.cors_allow_origins.listValue,
      throttlingBurstLimit: v.throttling_burst_limit.numberValue,
      throttlingRateLimit: v.throttling_rate_limit.numberValue,
      createEcrRepository: v.create_ecr_repository.value,
      createTenantRole: v.create_tenant_role.value,
      rolePath: v.role_path.stringValue,
      rolePermissionsBoundary: v.role_permissions_boundary.stringValue,
      cleanerTimeout: v.cleaner_timeout.numberValue,
      cleanerReservedConcurrentExecutions: v.cleaner_reserved_concurrent_executions.numberValue,
      accountId: v.account_id.stringValue,
      lookUpAccountId: v.lookup_account_id.value,
      tags: Token.asStringMap(v.tags.value),
      tableTags: Token.asStringMap(v.table_tags.value),
      functionTags: Token.asStringMap(v.function_tags.value),
      apiTags: Token.asStringMap(v.api_tags.value),
      kmsKeyTags: Token.asStringMap(v.kms_key_tags.value),
      roleTags: Token.asStringMap(v.role_tags.value),
      ecrTags: Token.asStringMap(v.ecr_tags.value),
    });
    this.declareOutputs();

    this.addOverride("terraform.backend", undefined);
    this.addOverride("provider", undefined);
    this.addOverride("terraform.required_providers.aws", {
      source: "hashicorp/aws",
      version: AWS_PROVIDER_CONSTRAINT,
    });
    this.addOverride("terraform.required_version", TERRAFORM_CONSTRAINT);
  }

  private declareVariables(): Record<keyof typeof VARIABLES, TerraformVariable> {
    const variables = {} as Record<keyof typeof VARIABLES, TerraformVariable>;
    for (const [name, spec] of Object.entries(VARIABLES) as [
      keyof typeof VARIABLES,
      VariableSpec,
    ][]) {
      // Variables and outputs share the stack's construct namespace (`kms_key_arn` is both): prefix the id.
      const variable = new TerraformVariable(this, `var_${name}`, {
        type: spec.type,
        description: spec.description,
        default: spec.default === null ? undefined : spec.default,
        nullable: spec.default === null ? true : undefined,
        validation: spec.validation?.map((rule) => ({
          condition: `\${${rule.condition}}`,
          errorMessage: rule.message,
        })),
      });
      // A `default: null` crashes CDKTF's synth; the override writes it after the fact.
      if (spec.default === null) variable.addOverride("default", null);
      variable.overrideLogicalId(name);
      variables[name] = variable;
    }
    return variables;
  }

  private declareOutputs(): void {
    const m = this.memoryTable;
    const table = m.table.table;
    const outputs: Record<string, [string, string]> = {
      dynamodb_table_name: [table.name, "Name of the checkpoint table"],
      dynamodb_table_arn: [table.arn, "ARN of the checkpoint table"],
      dynamodb_table_stream_arn: [
        table.streamArn,
        "ARN of the table's stream (read by the cleaner)",
      ],
      lambda_function_name: [m.apiFunction.functionName, "Name of the API function"],
      lambda_function_arn: [m.apiFunction.arn, "ARN of the API function"],
      cleaner_function_name: [
        m.cleanerFunction.functionName,
        "Name of the expired-thread cleaner function",
      ],
      cleaner_function_arn: [m.cleanerFunction.arn, "ARN of the expired-thread cleaner function"],
      lambda_role_name: [m.functionRole.role.name, "Name of the API function's execution role"],
      lambda_role_arn: [m.functionRole.role.arn, "ARN of the API function's execution role"],
      cleaner_role_arn: [m.cleanerRole.role.arn, "ARN of the cleaner's execution role"],
      tenant_role_arn: [
        m.tenantRole.roleArn,
        "ARN of the role for tenant-scoped credentials (null unless create_tenant_role; the bundled handler does not assume it)",
      ],
      kms_key_arn: [m.kmsKeyArn, "ARN of the KMS key every resource is encrypted with"],
      kms_key_alias: [
        m.key.aliasName,
        "Alias of the created KMS key (null when kms_key_arn is brought)",
      ],
      api_id: [m.httpApi.api.id, "ID of the HTTP API"],
      api_endpoint: [m.httpApi.api.apiEndpoint, "Endpoint of the HTTP API"],
      api_execution_arn: [m.httpApi.api.executionArn, "Execution ARN of the HTTP API"],
      stage_invoke_url: [m.httpApi.stage.invokeUrl, "Invoke URL of the $default stage"],
      lambda_log_group_name: [m.logGroups.api.name, "Log group of the API function"],
      cleaner_log_group_name: [m.logGroups.cleaner.name, "Log group of the cleaner function"],
      access_log_group_name: [m.logGroups.access.name, "Log group of the API access logs"],
      cognito_user_pool_id: [
        m.userPool.userPoolId,
        "ID of the Cognito user pool (null with jwt_issuer)",
      ],
      cognito_user_pool_client_id: [
        m.userPool.clientId,
        "ID of the app client (null with jwt_issuer)",
      ],
      jwt_issuer: [
        m.httpApi.authorizer.jwtConfiguration.issuer,
        "Issuer the JWT authorizer trusts",
      ],
      dead_letter_queue_arn: [m.deadLetterQueue.arn, "ARN of the dead-letter queue"],
      ecr_repository_url: [
        m.repository.repositoryUrl,
        "URL of the ECR repository (null unless created)",
      ],
      ecr_repository_arn: [
        m.repository.repositoryArn,
        "ARN of the ECR repository (null unless created)",
      ],
    };
    for (const [name, [value, description]] of Object.entries(outputs)) {
      new TerraformOutput(this, name, { value, description });
    }
  }

  /**
   * Readable, stable addresses (`aws_dynamodb_table.table`, not `memory_table_table_3F2A1B`) for what the
   * construct creates: consumers' state keys on them, so construct ids must never be renamed.
   */
  protected override allocateLogicalId(element: TerraformElement | Node): string {
    const node = element instanceof TerraformElement ? element.node : element;
    const segments = node.path.split("/").slice(1);
    if (segments[0] !== MEMORY_TABLE_ID || segments.length < 2)
      return super.allocateLogicalId(element);
    segments.shift();
    const last = segments.length - 1;
    if (last > 0 && segments[last - 1]!.endsWith(segments[last]!)) segments.pop();
    return segments.join("_");
  }
}

/** Construct id of the module's MemoryTable: a prefix of no address (see allocateLogicalId). */
const MEMORY_TABLE_ID = "memory_table";

const tagsOf = (what: string): VariableSpec => ({
  type: "map(string)",
  description: `Tags of ${what}, merged over tags`,
  default: {},
});

/** The module's interface: README's inputs table is generated from these. */
const VARIABLES = {
  name: {
    type: "string",
    description:
      "Prefix of every resource name: 3-40 lowercase letters, digits or hyphens, starting with a letter",
    validation: [
      {
        condition: `can(regex(${hcl(NAME_PATTERN)}, var.name))`,
        message:
          "Invalid name: expected 3-40 lowercase letters, digits or hyphens, starting with a letter.",
      },
    ],
  },
  image_uri: {
    type: "string",
    description:
      "Container image of the functions, an ECR image pinned by digest (<repository>@sha256:<digest>)",
    validation: [
      {
        condition: `can(regex(${hcl(IMAGE_URI_PATTERN)}, var.image_uri))`,
        message:
          "Invalid image_uri: expected an ECR image pinned by digest (<account>.dkr.ecr.<region>.amazonaws.com/<repository>@sha256:<64 hex digits>).",
      },
    ],
  },
  image_command: {
    type: "list(string)",
    description: "CMD of the API function (the cleaner always runs cleaner.handler)",
    default: [...DEFAULTS.imageCommand],
    validation: [
      {
        condition: "length(var.image_command) > 0",
        message: "Invalid image_command: expected at least one element.",
      },
    ],
  },
  image_entry_point: {
    type: "list(string)",
    description: "ENTRYPOINT override of both functions (default: the image's)",
    default: null,
  },
  architecture: {
    type: "string",
    description: "Instruction set of the image",
    default: DEFAULTS.architecture,
    validation: [
      {
        condition: `contains(${JSON.stringify(ARCHITECTURES)}, var.architecture)`,
        message: `Invalid architecture: expected one of ${ARCHITECTURES.join(", ")}.`,
      },
    ],
  },
  memory_size: {
    type: "number",
    description: "Memory of the API function in MB",
    default: DEFAULTS.memorySize,
    validation: [
      {
        condition: "var.memory_size >= 128 && var.memory_size <= 10240",
        message: "Invalid memory_size: expected 128 to 10240 MB.",
      },
    ],
  },
  timeout: {
    type: "number",
    description: `Timeout of the API function in seconds, at most ${MAX_API_TIMEOUT_SECONDS} (API Gateway stops waiting at 30 s)`,
    default: DEFAULTS.timeout,
    validation: [
      {
        condition: `var.timeout >= 1 && var.timeout <= ${MAX_API_TIMEOUT_SECONDS} && floor(var.timeout) == var.timeout`,
        message: `Invalid timeout: expected a whole number of seconds from 1 to ${MAX_API_TIMEOUT_SECONDS}.`,
      },
    ],
  },
  reserved_concurrent_executions: {
    type: "number",
    description: "Reserved concurrency of the API function (caps cost and DynamoDB load)",
    default: DEFAULTS.reservedConcurrentExecutions,
    validation: [
      {
        condition: "var.reserved_concurrent_executions >= 1",
        message: "Invalid reserved_concurrent_executions: expected at least 1.",
      },
    ],
  },
  environment: {
    type: "map(string)",
    description:
      "Extra environment variables of the API function, e.g. GRAPH_MODULE (never secrets; the module's own win)",
    default: {},
    validation: [
      {
        condition: `alltrue([for key in keys(var.environment) : !can(regex(${hcl(SECRET_NAME_PATTERN)}, key))])`,
        message:
          "Invalid environment: expected no variable whose name suggests a secret; use Secrets Manager.",
      },
    ],
  },
  tenant_claim: {
    type: "string",
    description: "JWT claim that carries the tenant id",
    default: DEFAULTS.tenantClaim,
  },
  log_level: {
    type: "string",
    description: "Log level of the functions",
    default: DEFAULTS.logLevel,
    validation: [
      {
        condition: `contains(${JSON.stringify(LOG_LEVELS).replace(/,/g, ", ")}, var.log_level)`,
        message: `Invalid log_level: expected one of ${LOG_LEVELS.join(", ")}.`,
      },
    ],
  },
  deadline_margin_ms: {
    type: "number",
    description: "Milliseconds before the function's deadline at which a run is stopped",
    default: DEFAULTS.deadlineMarginMs,
    validation: [
      {
        condition:
          "var.deadline_margin_ms >= 0 && var.deadline_margin_ms < var.timeout * 1000 && floor(var.deadline_margin_ms) == var.deadline_margin_ms",
        message:
          "Invalid deadline_margin_ms: expected a whole number of milliseconds, 0 or more and less than the timeout.",
      },
    ],
  },
  log_retention_in_days: {
    type: "number",
    description: "Retention of every log group, in days (a value CloudWatch Logs accepts)",
    default: DEFAULTS.logRetentionInDays,
    validation: [
      {
        condition: `contains([${LOG_RETENTION_DAYS.join(", ")}], var.log_retention_in_days)`,
        message: `Invalid log_retention_in_days: expected one of ${LOG_RETENTION_DAYS.join(", ")}.`,
      },
    ],
  },
  create_kms_key: {
    type: "bool",
    description: "Create the customer-managed KMS key; false requires kms_key_arn",
    default: true,
  },
  kms_key_arn: {
    type: "string",
    description:
      "Your own KMS key (with create_kms_key = false); its policy must let CloudWatch Logs use it",
    default: null,
    validation: [
      {
        condition: `var.create_kms_key ? var.kms_key_arn == null : can(regex("^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/", var.kms_key_arn))`,
        message:
          "Invalid kms_key_arn: expected a KMS key ARN with create_kms_key = false, and none when the key is created.",
      },
    ],
  },
  kms_key_deletion_window_in_days: {
    type: "number",
    description: "Waiting period before the created key is deleted",
    default: DEFAULTS.kmsKeyDeletionWindowInDays,
    validation: [
      {
        condition:
          "var.kms_key_deletion_window_in_days >= 7 && var.kms_key_deletion_window_in_days <= 30",
        message: "Invalid kms_key_deletion_window_in_days: expected 7 to 30.",
      },
    ],
  },
  deletion_protection: {
    type: "bool",
    description: "Deletion protection of the table and the user pool",
    default: true,
  },
  create_cognito_user_pool: {
    type: "bool",
    description:
      "Create a Cognito user pool and app client as the JWT issuer; false requires jwt_issuer and jwt_audience",
    default: true,
  },
  jwt_issuer: {
    type: "string",
    description:
      "External JWT issuer URL, with create_cognito_user_pool = false (may be unknown until apply)",
    default: null,
    validation: [
      {
        condition: `var.create_cognito_user_pool ? var.jwt_issuer == null : can(regex("^https://", var.jwt_issuer))`,
        message:
          "Invalid jwt_issuer: expected an https:// URL with create_cognito_user_pool = false, and none with the created user pool.",
      },
    ],
  },
  jwt_audience: {
    type: "list(string)",
    description:
      "Audiences the authorizer accepts from the external jwt_issuer (the created user pool's app client otherwise)",
    default: [],
    validation: [
      {
        condition:
          "var.create_cognito_user_pool ? length(var.jwt_audience) == 0 : length(var.jwt_audience) > 0",
        message:
          "Invalid jwt_audience: expected at least one audience with an external jwt_issuer, and none with the created user pool.",
      },
    ],
  },
  cors_allow_origins: {
    type: "list(string)",
    description:
      "Origins allowed by CORS, like https://app.example.com (default none; http only for localhost and 127.0.0.1; never *)",
    default: [],
    validation: [
      {
        condition: `alltrue([for origin in var.cors_allow_origins : can(regex(${hcl(CORS_ORIGIN_PATTERN)}, origin))])`,
        message:
          "Invalid cors_allow_origins: expected https origins like https://app.example.com (http only for localhost or 127.0.0.1), never *.",
      },
    ],
  },
  throttling_burst_limit: {
    type: "number",
    description: "Burst limit of the stage",
    default: DEFAULTS.throttlingBurstLimit,
    validation: [
      {
        condition: "var.throttling_burst_limit >= 1",
        message: "Invalid throttling_burst_limit: expected at least 1.",
      },
    ],
  },
  throttling_rate_limit: {
    type: "number",
    description: "Steady-state requests per second of the stage",
    default: DEFAULTS.throttlingRateLimit,
    validation: [
      {
        condition: "var.throttling_rate_limit > 0",
        message: "Invalid throttling_rate_limit: expected more than 0.",
      },
    ],
  },
  create_ecr_repository: {
    type: "bool",
    description:
      "Create an ECR repository for the image (immutable tags, scan on push, KMS; untagged images expire after 14 days, tagged ones never)",
    default: false,
  },
  create_tenant_role: {
    type: "bool",
    description:
      "Create a role for tenant-scoped credentials (dynamodb:LeadingKeys on <tenant>#*), for callers that assume it per tenant with the session tag tenant_id; only the function role may assume it. The bundled handler does not assume it yet",
    default: false,
  },
  role_path: {
    type: "string",
    description: "Path of the IAM roles",
    default: DEFAULTS.rolePath,
    validation: [
      {
        condition: 'can(regex("^/([A-Za-z0-9+=,.@_-]+/)*$", var.role_path))',
        message: "Invalid role_path: expected a path like / or /agents/.",
      },
    ],
  },
  role_permissions_boundary: {
    type: "string",
    description: "ARN of the permissions boundary of the IAM roles",
    default: null,
    validation: [
      {
        condition:
          'var.role_permissions_boundary == null || can(regex("^arn:aws[a-z-]*:iam::([0-9]{12}|aws):policy/", var.role_permissions_boundary))',
        message: "Invalid role_permissions_boundary: expected an IAM policy ARN.",
      },
    ],
  },
  cleaner_timeout: {
    type: "number",
    description: "Timeout of the expired-thread cleaner in seconds",
    default: DEFAULTS.cleanerTimeout,
    validation: [
      {
        condition: "var.cleaner_timeout >= 1 && var.cleaner_timeout <= 900",
        message: "Invalid cleaner_timeout: expected 1 to 900.",
      },
    ],
  },
  cleaner_reserved_concurrent_executions: {
    type: "number",
    description:
      "Reserved concurrency of the cleaner: the stream runs one batch per shard at a time, so below the table's stream shard count (which grows with the table) batches wait and cleanup lags; expired items stay hidden meanwhile",
    default: DEFAULTS.cleanerReservedConcurrentExecutions,
    validation: [
      {
        condition: "var.cleaner_reserved_concurrent_executions >= 1",
        message: "Invalid cleaner_reserved_concurrent_executions: expected at least 1.",
      },
    ],
  },
  lookup_account_id: {
    type: "bool",
    description:
      "Read the account id with aws_caller_identity; false requires account_id (offline plans, principals without sts:GetCallerIdentity)",
    default: true,
  },
  account_id: {
    type: "string",
    description: "AWS account id, with lookup_account_id = false",
    default: null,
    validation: [
      {
        condition:
          'var.lookup_account_id ? var.account_id == null : can(regex("^[0-9]{12}$", var.account_id))',
        message:
          "Invalid account_id: expected 12 digits with lookup_account_id = false, and none when it is looked up.",
      },
    ],
  },
  tags: { type: "map(string)", description: "Tags of every resource", default: {} },
  table_tags: tagsOf("the table"),
  function_tags: tagsOf("the functions, their log groups and the dead-letter queue"),
  api_tags: tagsOf("the HTTP API, its stage, access log group and user pool"),
  kms_key_tags: tagsOf("the KMS key"),
  role_tags: tagsOf("the IAM roles"),
  ecr_tags: tagsOf("the ECR repository"),
} satisfies Record<string, VariableSpec>;
