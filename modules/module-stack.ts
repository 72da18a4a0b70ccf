import { Construct, Node } from "constructs";
import {
  Fn,
  Op,
  propertyAccess,
  TerraformElement,
  TerraformOutput,
  TerraformStack,
  TerraformVariable,
  Token,
} from "./cdktf";
import { AwsProvider } from "@cdktf/provider-aws/lib/provider";
import {
  ALARM_THRESHOLDS,
  PROVISIONED_SPILLOVER_ALARM,
  type AlarmThresholds,
} from "./construct/alarms";
import { attributeOf } from "./construct/expressions";
import { MemoryTable } from "./construct/memory-table";
import { STREAM_URL_INVOKE_STATEMENT_ID } from "./construct/stream";
import { MODULE_VERSION } from "./version";
import { applyModuleToggles } from "./module-toggles";
import { CRON_SWEEP_RULE } from "./construct/crons";
import { CERTIFICATE_ARN_PATTERN, DOMAIN_NAME_PATTERN } from "./construct/domain";
import { DEFAULTS } from "./construct/props";
import { LOG_LEVELS } from "../src/shared/defaults";
import {
  ACTION_PATTERN,
  ALIAS_NAME_PATTERN,
  Architecture,
  CANARY_WEIGHT_PERCENT,
  VERSION_NUMBER_PATTERN,
  ASYNC_EVENT_AGE_SECONDS,
  ASYNC_RETRY_ATTEMPTS,
  ARCHITECTURES,
  AUTH_ENVIRONMENT_NAMES,
  AUTH_ENVIRONMENT_RULE,
  CORS_ORIGIN_PATTERN,
  ENVIRONMENT_NAME_PATTERN,
  ENVIRONMENT_SECRET_RULE,
  GraphPolicyStatement,
  IMAGE_URI_PATTERN,
  KMS_KEY_ARN_PATTERN,
  LOG_RETENTION_DAYS,
  MAX_API_TIMEOUT_SECONDS,
  MAX_RUN_LEGS,
  API_KEY_CACHE_SECONDS,
  MEMORY_SIZE_MB,
  MODULE_ENVIRONMENT_NAMES,
  NAME_PATTERN,
  PARAMETER_ARN_PATTERN,
  POLICY_ARN_PATTERN,
  RESERVED_NAME_ENDING_PATTERN,
  RESERVED_NAME_ENDING_RULE,
  RESERVED_NAME_PATTERN,
  SCHEDULE_EXPRESSION_PATTERN,
  SCHEDULE_EXPRESSION_RULE,
  SECRET_ARN_PATTERN,
  SECRET_ARN_SHAPE,
  SECRET_ARN_SUFFIX_RULE,
  SECRET_NAME_PATTERNS,
  SECRET_VALUE_PATTERN,
  SECURITY_GROUP_ID_PATTERN,
  SNS_TOPIC_ARN_PATTERN,
  STATEMENT_ID_PATTERN,
  STREAM_TIMEOUT_SECONDS,
  SUBNET_ID_PATTERN,
  TABLE_ARN_PATTERN,
  TABLE_NAME_PATTERN,
  TABLE_STREAM_ARN_PATTERN,
  WEBHOOK_HOST_PATTERN,
  WILDCARD_ON_WILDCARD_RULE,
  WORKER_TIMEOUT_SECONDS,
} from "./construct/rules";

/**
 * Providers the module accepts: exactly the major version its tests plan (5.100.0, the bindings' version and the
 * local mirror's). 6.x is not admitted until a test plans it: 6.28.0 changes the stream URL's permissions (its
 * aws_lambda_function_url adds the conditioned lambda:InvokeFunction statement itself), see the module README.
 */
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

/** `var` is a whole number within `range`. */
const wholeNumberIn = (variable: string, range: { min: number; max?: number }): string =>
  [
    `${variable} >= ${range.min}`,
    ...(range.max === undefined ? [] : [`${variable} <= ${range.max}`]),
    `floor(${variable}) == ${variable}`,
  ].join(" && ");

/** The entries of var.webhook_allowed_hosts the runtime would refuse. */
const REFUSED_WEBHOOK_HOSTS = `[for host in var.webhook_allowed_hosts : host if !can(regex(${hcl(WEBHOOK_HOST_PATTERN)}, host))]`;

/** The names of var.environment the secret guard refuses (by name, or by a credential value). */
const SECRET_ENVIRONMENT = `[for name, value in var.environment : name if can(regex(${hcl(SECRET_NAME_PATTERNS.snake)}, name)) || can(regex(${hcl(SECRET_NAME_PATTERNS.camel)}, name)) || can(regex(${hcl(SECRET_VALUE_PATTERN)}, value))]`;

/** The names of var.environment that only the module sets (JWT_ISSUER, JWT_AUDIENCE). */
const AUTH_ENVIRONMENT = `[for name in keys(var.environment) : name if contains(${JSON.stringify(AUTH_ENVIRONMENT_NAMES)}, name)]`;

/**
 * The CDKTF stack behind the HCL module `modules/memory-table`: terraform-aws-modules style variables mapped to
 * the construct's props, outputs for what it created, and none of what stops a stack from being a module
 * (backend, provider block, exact provider pin).
 */
export class ModuleStack extends TerraformStack {
  readonly memoryTable: MemoryTable;
  private readonly variables: Record<keyof typeof VARIABLES, TerraformVariable>;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    // Kept for CDKTF's synth validation only; removed below so consumers can use for_each/count.
    new AwsProvider(this, "aws");
    const v = (this.variables = this.declareVariables());

    this.memoryTable = new MemoryTable(this, MEMORY_TABLE_ID, {
      name: v.name.stringValue,
      imageUri: v.image_uri.stringValue,
      imageCommand: v.image_command.listValue,
      imageEntryPoint: v.image_entry_point.listValue,
      architecture: v.architecture.stringValue as Architecture,
      memorySize: v.memory_size.numberValue,
      timeout: v.timeout.numberValue,
      reservedConcurrentExecutions: v.reserved_concurrent_executions.numberValue,
      workerTimeout: v.worker_timeout.numberValue,
      // null: the API function's memory.
      workerMemorySize: Token.asNumber(
        Fn.coalesce([v.worker_memory_size.value, v.memory_size.value]),
      ),
      workerReservedConcurrentExecutions: v.worker_reserved_concurrent_executions.numberValue,
      workerMaximumRetryAttempts: v.worker_maximum_retry_attempts.numberValue,
      workerMaximumEventAgeInSeconds: v.worker_maximum_event_age_in_seconds.numberValue,
      maxRunLegs: v.max_run_legs.numberValue,
      recoverySweepSchedule: v.recovery_sweep_schedule.stringValue,
      createCrons: v.create_crons.value,
      createStreamFunction: v.create_stream_function.value,
      enableApiKeys: v.enable_api_keys.value,
      apiKeyCacheSeconds: v.api_key_cache_seconds.numberValue,
      createStreamUrlInvokePermission: v.create_stream_url_invoke_permission.value,
      streamTimeout: v.stream_timeout.numberValue,
      // null: the API function's memory, and its CORS origins.
      streamMemorySize: Token.asNumber(
        Fn.coalesce([v.stream_memory_size.value, v.memory_size.value]),
      ),
      streamReservedConcurrentExecutions: v.stream_reserved_concurrent_executions.numberValue,
      streamCorsAllowOrigins: Token.asList(
        Fn.coalesce([v.stream_cors_allow_origins.value, v.cors_allow_origins.value]),
      ),
      webhookAllowedHosts: v.webhook_allowed_hosts.listValue,
      environment: Token.asStringMap(v.environment.value),
      secrets: Token.asStringMap(v.secrets.value),
      secretsKmsKeyArns: v.secrets_kms_key_arns.listValue,
      graphPolicyStatements: v.graph_policy_statements.value as Record<
        string,
        GraphPolicyStatement
      >,
      graphPolicyArns: Token.asStringMap(v.graph_policy_arns.value),
      attachTenantRoleAssumePolicy: v.attach_tenant_role_assume_policy.value,
      publish: v.publish.value,
      aliasName: v.alias_name.stringValue,
      stableVersion: v.stable_version.stringValue,
      canaryWeight: v.canary_weight.numberValue,
      provisionedConcurrentExecutions: v.provisioned_concurrent_executions.numberValue,
      createAlarms: v.create_alarms.value,
      createAlarmTopic: v.create_alarm_topic.value,
      alarmSnsTopicArn: v.alarm_sns_topic_arn.stringValue,
      alarmThresholds: Object.fromEntries(
        Object.entries(ALARM_THRESHOLDS).map(([key, spec]) => [
          key,
          Token.asNumber(propertyAccess(v.alarm_thresholds.value, [spec.variable])),
        ]),
      ) as AlarmThresholds,
      tenantClaim: v.tenant_claim.stringValue,
      logLevel: v.log_level.stringValue,
      deadlineMarginMs: v.deadline_margin_ms.numberValue,
      logRetentionInDays: v.log_retention_in_days.numberValue,
      createKmsKey: v.create_kms_key.value,
      kmsKeyArn: v.kms_key_arn.stringValue,
      kmsKeyDeletionWindowInDays: v.kms_key_deletion_window_in_days.numberValue,
      deletionProtection: v.deletion_protection.value,
      createTable: v.create_table.value,
      tableName: v.table_name.stringValue,
      tableArn: v.table_arn.stringValue,
      tableStreamArn: v.table_stream_arn.stringValue,
      tableKmsKeyArn: v.table_kms_key_arn.stringValue,
      // Explicit switches, not `var.x == null`: count must be known at plan, and an issuer or account id taken
      // from another resource is not.
      createCognitoUserPool: v.create_cognito_user_pool.value,
      jwtIssuer: v.jwt_issuer.stringValue,
      jwtAudience: v.jwt_audience.listValue,
      corsAllowOrigins: v.cors_allow_origins.listValue,
      throttlingBurstLimit: v.throttling_burst_limit.numberValue,
      throttlingRateLimit: v.throttling_rate_limit.numberValue,
      apiDomainName: v.api_domain_name.stringValue,
      apiCertificateArn: v.api_certificate_arn.stringValue,
      createEcrRepository: v.create_ecr_repository.value,
      createTenantRole: v.create_tenant_role.value,
      vpcSubnetIds: v.vpc_subnet_ids.listValue,
      vpcSecurityGroupIds: v.vpc_security_group_ids.listValue,
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
      alarmTags: Token.asStringMap(v.alarm_tags.value),
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
    const table = m.table;
    const api = m.httpApi;
    const version = m.apiVersion;
    // Always there in the module: its variables are references, decided at plan.
    const domain = m.apiDomain!;
    // The stream function's alarms only with it: without, their ARNs would be nulls in the map.
    // And the provisioned-concurrency alarm only with provisioned concurrency.
    const v = this.variables;
    const group = (id: string) =>
      id.startsWith("stream_function_")
        ? "stream"
        : id === PROVISIONED_SPILLOVER_ALARM
          ? "provisioned"
          : "always";
    const alarmArns = (kind: string) =>
      Object.fromEntries(
        Object.entries(m.alarms.alarms)
          .filter(([id]) => group(id) === kind)
          .map(([id, alarm]) => [id, attributeOf(alarm, "arn")]),
      );
    const alarms = Fn.merge([
      alarmArns("always"),
      Fn.conditional(v.create_stream_function.value, alarmArns("stream"), {}),
      Fn.conditional(
        Op.and(v.publish.value, Op.gte(v.provisioned_concurrent_executions.value, 1)),
        alarmArns("provisioned"),
        {},
      ),
    ]);
    const outputs: Record<string, [unknown, string]> = {
      module_version: [
        MODULE_VERSION,
        "Release of this module (semantic version; the git tag is v<version>, see CHANGELOG.md)",
      ],
      dynamodb_table_name: [table.name, "Name of the checkpoint table"],
      dynamodb_table_arn: [table.arn, "ARN of the checkpoint table"],
      dynamodb_table_stream_arn: [
        table.streamArn,
        "ARN of the table's stream (read by the cleaner)",
      ],
      lambda_function_name: [m.apiFunction.functionName, "Name of the API function"],
      lambda_function_arn: [m.apiFunction.arn, "ARN of the API function"],
      lambda_function_invoke_arn: [
        m.apiFunction.invokeArn,
        "Invoke ARN of the API function's $LATEST (the API invokes lambda_alias_invoke_arn with publish)",
      ],
      lambda_function_qualified_arn: [
        m.apiFunction.qualifiedArn,
        "ARN of the API function with its version",
      ],
      lambda_function_version: [
        m.apiFunction.version,
        "Latest published version of the API function ($LATEST without publish)",
      ],
      lambda_alias_name: [version.aliasName, "Alias the API invokes (null without publish)"],
      lambda_alias_arn: [version.aliasArn, "ARN of the alias (null without publish)"],
      lambda_alias_invoke_arn: [
        attributeOf(version.alias, "invoke_arn"),
        "Invoke ARN of the alias (null without publish)",
      ],
      lambda_alias_function_version: [
        attributeOf(version.alias, "function_version"),
        "Version the API function's alias points to (stable_version during a canary; null without publish)",
      ],
      worker_alias_arn: [
        m.worker.version.aliasArn,
        "ARN of the worker's alias, which its callers invoke (null without publish)",
      ],
      stream_alias_arn: [
        m.stream.version.aliasArn,
        "ARN of the stream function's alias, which its URL serves (null without publish or create_stream_function)",
      ],
      cleaner_alias_arn: [
        m.cleanerVersion.aliasArn,
        "ARN of the cleaner's alias, which the stream mapping invokes (null without publish)",
      ],
      authorizer_alias_arn: [
        m.requestAuthorizer.version.aliasArn,
        "ARN of the API-key authorizer's alias, which the HTTP API's Lambda authorizer invokes (null without publish or enable_api_keys)",
      ],
      cleaner_function_name: [
        m.cleanerFunction.functionName,
        "Name of the expired-thread cleaner function",
      ],
      cleaner_function_arn: [m.cleanerFunction.arn, "ARN of the expired-thread cleaner function"],
      cleaner_event_source_mapping_uuid: [
        m.cleanerTrigger.uuid,
        "UUID of the stream's event source mapping that feeds the cleaner",
      ],
      worker_function_name: [
        m.worker.function.functionName,
        "Name of the background-run worker function (the API function's WORKER_FUNCTION_NAME)",
      ],
      worker_function_arn: [m.worker.function.arn, "ARN of the background-run worker function"],
      worker_role_name: [m.worker.role.role.name, "Name of the worker's execution role"],
      worker_role_arn: [m.worker.role.role.arn, "ARN of the worker's execution role"],
      worker_log_group_name: [m.logGroups.worker.name, "Log group of the worker function"],
      worker_log_group_arn: [m.logGroups.worker.arn, "ARN of the worker's log group"],
      worker_failure_queue_name: [
        m.worker.failureQueue.name,
        "Name of the worker's failure queue: the jobs Lambda gave up on, which the worker records as failed runs",
      ],
      worker_failure_queue_arn: [m.worker.failureQueue.arn, "ARN of the worker's failure queue"],
      worker_failure_queue_url: [m.worker.failureQueue.url, "URL of the worker's failure queue"],
      recovery_sweep_rule_name: [
        attributeOf(m.recoverySweep.rule, "name"),
        "Name of the EventBridge rule that invokes the worker's recovery sweep (null without recovery_sweep_schedule)",
      ],
      recovery_sweep_rule_arn: [
        m.recoverySweep.ruleArn,
        "ARN of the EventBridge rule that invokes the worker's recovery sweep (null without recovery_sweep_schedule)",
      ],
      stream_url: [
        m.stream.functionUrl,
        "URL of the stream function's function URL (https://<id>.lambda-url.<region>.on.aws/): the whole API with streamed Server-Sent Events and runs up to stream_timeout, for the LangGraph SDK's apiUrl (null without create_stream_function)",
      ],
      stream_url_invoke_permission_command: [
        Fn.conditional(
          Op.and(
            this.variables.create_stream_function.value,
            Op.not(this.variables.create_stream_url_invoke_permission.value),
          ),
          `aws lambda add-permission --function-name ${m.stream.version.qualifiedName} --statement-id ${STREAM_URL_INVOKE_STATEMENT_ID} --action lambda:InvokeFunction --principal '*' --invoked-via-function-url`,
          null,
        ),
        "With create_stream_url_invoke_permission = false: the AWS CLI command (v2.31.x or later) that adds the stream URL's second statement once, after apply (null otherwise). Terraform never removes it: the module's permissions manage their own statement ids only",
      ],
      stream_function_name: [
        m.stream.functionName,
        "Name of the stream function (null without create_stream_function)",
      ],
      stream_function_arn: [
        m.stream.functionArn,
        "ARN of the stream function (null without create_stream_function)",
      ],
      stream_role_name: [
        m.stream.role.roleName,
        "Name of the stream function's execution role (null without create_stream_function)",
      ],
      stream_role_arn: [
        m.stream.role.roleArn,
        "ARN of the stream function's execution role (null without create_stream_function)",
      ],
      stream_log_group_name: [
        attributeOf(m.logGroups.stream, "name"),
        "Log group of the stream function (null without create_stream_function)",
      ],
      stream_log_group_arn: [
        attributeOf(m.logGroups.stream, "arn"),
        "ARN of the stream function's log group (null without create_stream_function)",
      ],
      lambda_role_name: [m.functionRole.role.name, "Name of the API function's execution role"],
      lambda_role_arn: [m.functionRole.role.arn, "ARN of the API function's execution role"],
      cleaner_role_name: [m.cleanerRole.role.name, "Name of the cleaner's execution role"],
      cleaner_role_arn: [m.cleanerRole.role.arn, "ARN of the cleaner's execution role"],
      tenant_role_arn: [
        m.tenantRole.roleArn,
        "ARN of the role for tenant-scoped credentials (null unless create_tenant_role; the bundled handler does not assume it)",
      ],
      kms_key_arn: [m.kmsKeyArn, "ARN of the KMS key every resource is encrypted with"],
      kms_key_id: [
        Fn.element(Fn.split("/", m.kmsKeyArn), 1),
        "ID of the KMS key every resource is encrypted with",
      ],
      kms_key_alias: [
        m.key.aliasName,
        "Alias of the created KMS key (null when kms_key_arn is brought)",
      ],
      api_id: [api.api.id, "ID of the HTTP API"],
      api_arn: [api.api.arn, "ARN of the HTTP API"],
      api_endpoint: [api.api.apiEndpoint, "Endpoint of the HTTP API"],
      api_execution_arn: [api.api.executionArn, "Execution ARN of the HTTP API"],
      api_domain_url: [
        domain.url,
        "https://<api_domain_name>, the API's custom domain (null without api_domain_name)",
      ],
      api_domain_name_target_domain_name: [
        domain.targetDomainName,
        "Target of the API's custom domain, what your DNS record points at: an alias (A/AAAA) or CNAME record (null without api_domain_name)",
      ],
      api_domain_name_hosted_zone_id: [
        domain.hostedZoneId,
        "Route 53 hosted zone of that target, for an alias record (null without api_domain_name)",
      ],
      stage_id: [api.stage.id, "ID of the $default stage"],
      stage_arn: [api.stage.arn, "ARN of the $default stage"],
      stage_invoke_url: [api.stage.invokeUrl, "Invoke URL of the $default stage"],
      authorizer_id: [api.authorizer.id, "ID of the JWT authorizer"],
      lambda_log_group_name: [m.logGroups.api.name, "Log group of the API function"],
      lambda_log_group_arn: [m.logGroups.api.arn, "ARN of the API function's log group"],
      cleaner_log_group_name: [m.logGroups.cleaner.name, "Log group of the cleaner function"],
      cleaner_log_group_arn: [m.logGroups.cleaner.arn, "ARN of the cleaner's log group"],
      access_log_group_name: [m.logGroups.access.name, "Log group of the API access logs"],
      access_log_group_arn: [m.logGroups.access.arn, "ARN of the API access log group"],
      cognito_user_pool_id: [
        m.userPool.userPoolId,
        "ID of the Cognito user pool (null with jwt_issuer)",
      ],
      cognito_user_pool_arn: [
        m.userPool.userPoolArn,
        "ARN of the Cognito user pool (null with jwt_issuer)",
      ],
      cognito_user_pool_client_id: [
        m.userPool.clientId,
        "ID of the app client (null with jwt_issuer)",
      ],
      jwt_issuer: [api.authorizer.jwtConfiguration.issuer, "Issuer the JWT authorizer trusts"],
      dead_letter_queue_arn: [
        m.deadLetterQueue.arn,
        "ARN of the SQS queue the cleaner's stream mapping sends the batches it gives up on to",
      ],
      dead_letter_queue_name: [m.deadLetterQueue.name, "Name of that queue"],
      dead_letter_queue_url: [m.deadLetterQueue.url, "URL of that queue"],
      alarm_sns_topic_arn: [
        m.alarms.topicArn,
        "SNS topic the alarms notify (created or brought; null without one)",
      ],
      cloudwatch_metric_alarm_arns: [
        Fn.conditional(this.variables.create_alarms.value, alarms, {}),
        "ARNs of the CloudWatch alarms by alarm ({} unless create_alarms)",
      ],
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

  /** The configuration with the switches only the HCL module has: `create`, `image_uri_managed_externally`. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- CDKTF's own signature
  override toTerraform(): any {
    return applyModuleToggles(this.toTerraformWithoutToggles());
  }

  /** What the construct renders through the variables, before `create` and the image variants are applied. */
  toTerraformWithoutToggles(): Record<string, unknown> {
    return super.toTerraform() as Record<string, unknown>;
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
  create: {
    type: "bool",
    description:
      "Create the module's resources; false plans nothing (every output null but module_version), for a module instance that is switched off without removing its block",
    default: true,
  },
  name: {
    type: "string",
    description:
      "Prefix of every resource name: 3-40 lowercase letters, digits or hyphens, starting with a letter, not ending in -authorizer, -cleaner, -dynamodb, -stream or -worker (names of another instance's resources)",
    validation: [
      {
        condition: `can(regex(${hcl(NAME_PATTERN)}, var.name))`,
        message:
          "Invalid name: expected 3-40 lowercase letters, digits or hyphens, starting with a letter.",
      },
      {
        condition: `!can(regex(${hcl(RESERVED_NAME_ENDING_PATTERN)}, var.name))`,
        message: `Invalid name: expected ${RESERVED_NAME_ENDING_RULE}.`,
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
    description:
      "CMD of the API function (the worker always runs worker.handler, the stream function stream.handler, the cleaner cleaner.handler)",
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
    description: "ENTRYPOINT override of every function (default: the image's)",
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
    description: "Memory of the API function in MB (and of the worker, unless worker_memory_size)",
    default: DEFAULTS.memorySize,
    validation: [
      {
        condition: `var.memory_size >= ${MEMORY_SIZE_MB.min} && var.memory_size <= ${MEMORY_SIZE_MB.max}`,
        message: `Invalid memory_size: expected ${MEMORY_SIZE_MB.min} to ${MEMORY_SIZE_MB.max} MB.`,
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
  worker_timeout: {
    type: "number",
    description: `Timeout of the background-run worker in seconds: one leg of a run, which hands over to a next invocation when it needs more (${WORKER_TIMEOUT_SECONDS.min} to ${WORKER_TIMEOUT_SECONDS.max}; a leg keeps its last 10 s to record how it ended)`,
    default: DEFAULTS.workerTimeout,
    validation: [
      {
        condition: wholeNumberIn("var.worker_timeout", WORKER_TIMEOUT_SECONDS),
        message: `Invalid worker_timeout: expected a whole number from ${WORKER_TIMEOUT_SECONDS.min} to ${WORKER_TIMEOUT_SECONDS.max} seconds.`,
      },
    ],
  },
  worker_memory_size: {
    type: "number",
    description: "Memory of the worker in MB (null: memory_size)",
    default: null,
    validation: [
      {
        condition: `var.worker_memory_size == null ? true : ${wholeNumberIn("var.worker_memory_size", MEMORY_SIZE_MB)}`,
        message: `Invalid worker_memory_size: expected a whole number from ${MEMORY_SIZE_MB.min} to ${MEMORY_SIZE_MB.max} MB.`,
      },
    ],
  },
  worker_reserved_concurrent_executions: {
    type: "number",
    description:
      "Reserved concurrency of the worker: background runs running at once (each holds one invocation for a leg); more wait, queued by Lambda up to worker_maximum_event_age_in_seconds",
    default: DEFAULTS.workerReservedConcurrentExecutions,
    validation: [
      {
        condition: wholeNumberIn("var.worker_reserved_concurrent_executions", { min: 1 }),
        message:
          "Invalid worker_reserved_concurrent_executions: expected a whole number, 1 or more.",
      },
    ],
  },
  worker_maximum_retry_attempts: {
    type: "number",
    description:
      "Retries of a failed worker invocation (a crash or timeout of a leg) before Lambda sends its job to the worker's failure queue, which records the run as failed",
    default: DEFAULTS.workerMaximumRetryAttempts,
    validation: [
      {
        condition: wholeNumberIn("var.worker_maximum_retry_attempts", ASYNC_RETRY_ATTEMPTS),
        message: `Invalid worker_maximum_retry_attempts: expected a whole number from ${ASYNC_RETRY_ATTEMPTS.min} to ${ASYNC_RETRY_ATTEMPTS.max}.`,
      },
    ],
  },
  worker_maximum_event_age_in_seconds: {
    type: "number",
    description:
      "Seconds a worker invocation may wait (throttled by worker_reserved_concurrent_executions, or between retries) before Lambda sends its job to the failure queue",
    default: DEFAULTS.workerMaximumEventAgeInSeconds,
    validation: [
      {
        condition: wholeNumberIn(
          "var.worker_maximum_event_age_in_seconds",
          ASYNC_EVENT_AGE_SECONDS,
        ),
        message: `Invalid worker_maximum_event_age_in_seconds: expected a whole number from ${ASYNC_EVENT_AGE_SECONDS.min} to ${ASYNC_EVENT_AGE_SECONDS.max} seconds.`,
      },
    ],
  },
  max_run_legs: {
    type: "number",
    description:
      "Most legs of one background run (each at most worker_timeout): a run that needs more stops in status timeout (MAX_RUN_LEGS of the functions that run graphs)",
    default: DEFAULTS.maxRunLegs,
    validation: [
      {
        condition: wholeNumberIn("var.max_run_legs", MAX_RUN_LEGS),
        message: `Invalid max_run_legs: expected a whole number from ${MAX_RUN_LEGS.min} to ${MAX_RUN_LEGS.max}.`,
      },
    ],
  },
  recovery_sweep_schedule: {
    type: "string",
    description:
      'How often the worker sweeps the table for runs whose process died and takes them over, even when no client reads their thread: an EventBridge rate(...) or cron(...) expression (each sweep is one worker invocation, about 10 Queries and one GetItem per thread with a run in progress). null or "": no schedule (a stalled run is then taken over only when a client reads its thread)',
    default: DEFAULTS.recoverySweepSchedule,
    validation: [
      {
        condition: `var.recovery_sweep_schedule == null || var.recovery_sweep_schedule == "" || can(regex(${hcl(SCHEDULE_EXPRESSION_PATTERN)}, var.recovery_sweep_schedule))`,
        message: `Invalid recovery_sweep_schedule: expected ${SCHEDULE_EXPRESSION_RULE}.`,
      },
      {
        condition: `!var.create_crons || (var.recovery_sweep_schedule != null && var.recovery_sweep_schedule != "")`,
        message: `Invalid recovery_sweep_schedule: expected ${CRON_SWEEP_RULE}.`,
      },
    ],
  },
  create_crons: {
    type: "bool",
    description:
      "Fire crons (the SDK's client.crons): they need no AWS resource of their own (they live in the table, and the worker fires the due ones on each recovery sweep, so at recovery_sweep_schedule's precision, every minute by default; one sweep invocation serves both). false sets CRONS_ENABLED=false on the functions that run graphs, so no cron fires, and lets recovery_sweep_schedule be null",
    default: DEFAULTS.createCrons,
  },
  enable_api_keys: {
    type: "bool",
    description:
      "Accept API keys (X-Api-Key, created with `npm run api-key -- create`) at API Gateway next to JWTs: every route goes behind a Lambda REQUEST authorizer (the image's authorizer.handler, role limited to GetItem of API key items) that checks either credential, instead of the JWT authorizer. API Gateway cannot cache it (either header may carry the credential, and a REQUEST authorizer's identity sources must all be present): one authorizer invocation per API request, one GetItem per key per authorizer container per api_key_cache_seconds. A refused credential is answered 403. The stream function checks API keys itself whatever this says",
    default: DEFAULTS.enableApiKeys,
  },
  api_key_cache_seconds: {
    type: "number",
    description:
      "Seconds a container of the authorizer or the stream function reuses an API key's verdict before reading its record again: how long a revocation may take to reach a warm container (API_KEY_CACHE_SECONDS)",
    default: DEFAULTS.apiKeyCacheSeconds,
    validation: [
      {
        condition: wholeNumberIn("var.api_key_cache_seconds", API_KEY_CACHE_SECONDS),
        message: `Invalid api_key_cache_seconds: expected a whole number from ${API_KEY_CACHE_SECONDS.min} to ${API_KEY_CACHE_SECONDS.max}.`,
      },
    ],
  },
  create_stream_function: {
    type: "bool",
    description:
      "Create the stream function: the whole API (the streaming routes with Server-Sent Events, and the buffered ones) from a Lambda function URL in RESPONSE_STREAM mode, output as stream_url, for the LangGraph SDK's apiUrl. API Gateway's HTTP APIs buffer responses and stop at 30 s, so streaming clients (useStream, runs.stream) need it. The URL's auth type is NONE: the function verifies the bearer JWT itself, against the authorizer's issuer and audiences. The image must contain stream.handler",
    default: DEFAULTS.createStreamFunction,
  },
  create_stream_url_invoke_permission: {
    type: "bool",
    description:
      "With create_stream_function: declare the URL's second resource-policy statement, lambda:InvokeFunction for principal * only when invoked through a function URL (condition lambda:InvokedViaFunctionUrl), which Lambda requires of URLs created since October 2025. Provider 5.x's aws_lambda_permission cannot set that condition, so the module declares it with aws_cloudcontrolapi_resource (AWS::Lambda::Permission; the deploying principal needs cloudformation:CreateResource, GetResource, GetResourceRequestStatus and DeleteResource). false: add the statement yourself (stream_url_invoke_permission_command), or the URL answers 403",
    default: DEFAULTS.createStreamUrlInvokePermission,
  },
  stream_timeout: {
    type: "number",
    description: `Timeout of the stream function in seconds: the longest a request, and so a streamed run, may take (${STREAM_TIMEOUT_SECONDS.min} to ${STREAM_TIMEOUT_SECONDS.max})`,
    default: DEFAULTS.streamTimeout,
    validation: [
      {
        condition: wholeNumberIn("var.stream_timeout", STREAM_TIMEOUT_SECONDS),
        message: `Invalid stream_timeout: expected a whole number from ${STREAM_TIMEOUT_SECONDS.min} to ${STREAM_TIMEOUT_SECONDS.max} seconds.`,
      },
    ],
  },
  stream_memory_size: {
    type: "number",
    description: "Memory of the stream function in MB (null: memory_size)",
    default: null,
    validation: [
      {
        condition: `var.stream_memory_size == null ? true : ${wholeNumberIn("var.stream_memory_size", MEMORY_SIZE_MB)}`,
        message: `Invalid stream_memory_size: expected a whole number from ${MEMORY_SIZE_MB.min} to ${MEMORY_SIZE_MB.max} MB.`,
      },
    ],
  },
  stream_reserved_concurrent_executions: {
    type: "number",
    description:
      "Reserved concurrency of the stream function: requests it serves at once, each open stream holding one for as long as it lasts (caps cost and DynamoDB load; a function URL has no throttling of its own)",
    default: DEFAULTS.streamReservedConcurrentExecutions,
    validation: [
      {
        condition: wholeNumberIn("var.stream_reserved_concurrent_executions", { min: 1 }),
        message:
          "Invalid stream_reserved_concurrent_executions: expected a whole number, 1 or more.",
      },
    ],
  },
  stream_cors_allow_origins: {
    type: "list(string)",
    description:
      "Origins allowed by the stream URL's CORS, like https://app.example.com (null: cors_allow_origins, so none by default; [] for none; http only for localhost and 127.0.0.1; never *)",
    default: null,
    validation: [
      {
        condition: `var.stream_cors_allow_origins == null ? true : alltrue([for origin in var.stream_cors_allow_origins : can(regex(${hcl(CORS_ORIGIN_PATTERN)}, origin))])`,
        message:
          "Invalid stream_cors_allow_origins: expected https origins like https://app.example.com (http only for localhost or 127.0.0.1), never *.",
      },
    ],
  },
  webhook_allowed_hosts: {
    type: "list(string)",
    description:
      "Hosts run webhooks may be posted to (over https), each a lowercase host or host:port like hooks.example.com; a webhook to any other host is refused (default none: no webhooks)",
    default: [],
    validation: [
      {
        condition: `length(${REFUSED_WEBHOOK_HOSTS}) == 0`,
        message: `Invalid webhook_allowed_hosts: expected lowercase host names, or host:port, like hooks.example.com (no scheme: webhooks are posted over https), got \${jsonencode(${REFUSED_WEBHOOK_HOSTS})}.`,
      },
    ],
  },
  environment: {
    type: "map(string)",
    description:
      "Extra environment variables of the functions that run graphs (the API function, the worker, the stream function), e.g. GRAPH_MODULE (never secrets: see secrets; never JWT_ISSUER or JWT_AUDIENCE, which the module sets from the authorizer's issuer; the module's own win)",
    default: {},
    validation: [
      {
        condition: `length(${SECRET_ENVIRONMENT}) == 0`,
        message: `Invalid environment: expected ${ENVIRONMENT_SECRET_RULE}, got \${jsonencode(${SECRET_ENVIRONMENT})}.`,
      },
      {
        condition: `length(${AUTH_ENVIRONMENT}) == 0`,
        message: `Invalid environment: expected ${AUTH_ENVIRONMENT_RULE}, got \${jsonencode(${AUTH_ENVIRONMENT})}.`,
      },
    ],
  },
  secrets: {
    type: "map(string)",
    description:
      "Environment variables of the functions that run graphs, read at cold start before the graph module loads: NAME => ARN of a Secrets Manager secret or an SSM SecureString parameter. The functions may read exactly these; only the ARNs reach the function's configuration and Terraform state",
    default: {},
    validation: [
      {
        condition: `alltrue([for name in keys(var.secrets) : can(regex(${hcl(ENVIRONMENT_NAME_PATTERN)}, name))])`,
        message:
          "Invalid secrets: expected variable names of letters, digits and _, starting with a letter.",
      },
      {
        condition: `alltrue([for name in keys(var.secrets) : !can(regex(${hcl(RESERVED_NAME_PATTERN)}, name)) && !contains(${JSON.stringify(MODULE_ENVIRONMENT_NAMES)}, name)])`,
        message: `Invalid secrets: expected names that are neither Lambda's (AWS_*, LAMBDA_*, _*) nor the module's own (${MODULE_ENVIRONMENT_NAMES.join(", ")}).`,
      },
      {
        condition: "length(setintersection(keys(var.secrets), keys(var.environment))) == 0",
        message: "Invalid secrets: expected names not also given in environment.",
      },
      {
        condition: `alltrue([for arn in values(var.secrets) : can(regex(${hcl(SECRET_ARN_SHAPE)}, arn)) || can(regex(${hcl(PARAMETER_ARN_PATTERN)}, arn))])`,
        message:
          "Invalid secrets: expected ARNs of Secrets Manager secrets (arn:aws:secretsmanager:<region>:<account>:secret:<name>-<suffix>) or SSM parameters (arn:aws:ssm:<region>:<account>:parameter/<name>).",
      },
      {
        condition: `alltrue([for arn in values(var.secrets) : !can(regex(${hcl(SECRET_ARN_SHAPE)}, arn)) || can(regex(${hcl(SECRET_ARN_PATTERN)}, arn))])`,
        message: `Invalid secrets: expected ${SECRET_ARN_SUFFIX_RULE}.`,
      },
    ],
  },
  secrets_kms_key_arns: {
    type: "list(string)",
    description:
      "Customer-managed KMS keys the secrets are encrypted with: the functions may decrypt with them through Secrets Manager or SSM, for those secrets only (none for AWS managed keys)",
    default: [],
    validation: [
      {
        condition: `alltrue([for arn in var.secrets_kms_key_arns : can(regex(${hcl(KMS_KEY_ARN_PATTERN)}, arn))])`,
        message: "Invalid secrets_kms_key_arns: expected KMS key ARNs.",
      },
      {
        condition: "length(var.secrets_kms_key_arns) == 0 || length(var.secrets) > 0",
        message: "Invalid secrets_kms_key_arns: expected none without secrets.",
      },
    ],
  },
  graph_policy_statements: {
    type: 'map(object({ effect = optional(string, "Allow"), actions = list(string), resources = list(string), condition = optional(map(map(list(string))), {}) }))',
    description:
      "Additional IAM statements of the functions that run graphs (their tools' permissions), by statement id, in a policy of their own beside the module's: { InvokeModel = { actions = [\"bedrock:InvokeModel\"], resources = [<model ARN>] } }; condition is IAM's operator => key => values",
    default: {},
    validation: [
      {
        condition: `alltrue([for sid in keys(var.graph_policy_statements) : can(regex(${hcl(STATEMENT_ID_PATTERN)}, sid))])`,
        message:
          "Invalid graph_policy_statements: expected statement ids of letters and digits (IAM Sid).",
      },
      {
        condition:
          'alltrue([for statement in values(var.graph_policy_statements) : contains(["Allow", "Deny"], statement.effect)])',
        message: "Invalid graph_policy_statements: expected effect Allow or Deny.",
      },
      {
        condition: `alltrue([for statement in values(var.graph_policy_statements) : length(statement.actions) > 0 && alltrue([for action in statement.actions : can(regex(${hcl(ACTION_PATTERN)}, action))])])`,
        message:
          "Invalid graph_policy_statements: expected at least one action per statement, like bedrock:InvokeModel (never *).",
      },
      {
        condition:
          "alltrue([for statement in values(var.graph_policy_statements) : length(statement.resources) > 0])",
        message: "Invalid graph_policy_statements: expected at least one resource per statement.",
      },
      {
        condition:
          'alltrue([for statement in values(var.graph_policy_statements) : statement.effect == "Deny" || !contains(statement.resources, "*") || alltrue([for action in statement.actions : !strcontains(action, "*")])])',
        message: `Invalid graph_policy_statements: expected ${WILDCARD_ON_WILDCARD_RULE}.`,
      },
    ],
  },
  graph_policy_arns: {
    type: "map(string)",
    description:
      "Managed IAM policies attached to the roles of the functions that run graphs, by a name of yours (known at plan, unlike an ARN created in the same apply)",
    default: {},
    validation: [
      {
        condition: `alltrue([for arn in values(var.graph_policy_arns) : can(regex(${hcl(POLICY_ARN_PATTERN)}, arn))])`,
        message: "Invalid graph_policy_arns: expected IAM policy ARNs.",
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
  create_table: {
    type: "bool",
    description:
      "Create the checkpoint table; false uses an existing one (table_name, table_arn, table_stream_arn, and table_kms_key_arn if it has a key of its own), which must have the module's definition: the keys, indexes, TTL attribute and a KEYS_ONLY stream of the README's table. The roles are scoped to it as to a created one",
    default: true,
  },
  table_name: {
    type: "string",
    description: "Name of the existing table (with create_table = false)",
    default: null,
    validation: [
      {
        condition: `var.create_table ? var.table_name == null : can(regex(${hcl(TABLE_NAME_PATTERN)}, var.table_name))`,
        message:
          "Invalid table_name: expected a DynamoDB table name (3-255 letters, digits, _ . -) with create_table = false, and none when the table is created.",
      },
    ],
  },
  table_arn: {
    type: "string",
    description: "ARN of the existing table (with create_table = false)",
    default: null,
    validation: [
      {
        condition: `var.create_table ? var.table_arn == null : can(regex(${hcl(TABLE_ARN_PATTERN)}, var.table_arn)) && try(endswith(var.table_arn, "/\${var.table_name}"), false)`,
        message:
          "Invalid table_arn: expected the ARN of the table table_name (arn:aws:dynamodb:<region>:<account>:table/<table_name>) with create_table = false, and none when the table is created.",
      },
    ],
  },
  table_stream_arn: {
    type: "string",
    description:
      "ARN of the existing table's stream, KEYS_ONLY (with create_table = false): the cleaner reads it",
    default: null,
    validation: [
      {
        condition: `var.create_table ? var.table_stream_arn == null : can(regex(${hcl(TABLE_STREAM_ARN_PATTERN)}, var.table_stream_arn)) && try(startswith(var.table_stream_arn, "\${var.table_arn}/stream/"), false)`,
        message:
          "Invalid table_stream_arn: expected the stream ARN of table_arn (<table_arn>/stream/<label>) with create_table = false, and none when the table is created.",
      },
    ],
  },
  table_kms_key_arn: {
    type: "string",
    description:
      "Customer-managed KMS key of the existing table (with create_table = false; null: an AWS owned or AWS managed key): every role may use it through DynamoDB only",
    default: null,
    validation: [
      {
        condition: `var.table_kms_key_arn == null || (!var.create_table && can(regex(${hcl(KMS_KEY_ARN_PATTERN)}, var.table_kms_key_arn)))`,
        message:
          "Invalid table_kms_key_arn: expected a KMS key ARN, with create_table = false only.",
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
      {
        // The stream function reads them comma-separated (JWT_AUDIENCE).
        condition: 'alltrue([for audience in var.jwt_audience : !strcontains(audience, ",")])',
        message: "Invalid jwt_audience: expected audiences without commas.",
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
  api_domain_name: {
    type: "string",
    description:
      "Custom domain of the HTTP API, like api.example.com (with api_certificate_arn): a regional API Gateway domain name with TLS 1.2, mapped to the $default stage. Point your DNS at api_domain_name_target_domain_name (an alias record in api_domain_name_hosted_zone_id). Must be known at plan (null: no domain)",
    default: null,
    validation: [
      {
        condition: `var.api_domain_name == null || can(regex(${hcl(DOMAIN_NAME_PATTERN)}, var.api_domain_name))`,
        message: "Invalid api_domain_name: expected a lowercase domain name like api.example.com.",
      },
    ],
  },
  api_certificate_arn: {
    type: "string",
    description:
      "ACM certificate of api_domain_name, in the API's region (a regional domain serves a certificate of its own region); it may be created in the same apply",
    default: null,
    validation: [
      {
        condition: `var.api_certificate_arn == null || can(regex(${hcl(CERTIFICATE_ARN_PATTERN)}, var.api_certificate_arn))`,
        message:
          "Invalid api_certificate_arn: expected an ACM certificate ARN (arn:aws:acm:<region>:<account>:certificate/<id>).",
      },
      {
        condition: "(var.api_domain_name == null) == (var.api_certificate_arn == null)",
        message:
          "Invalid api_certificate_arn: expected api_domain_name and api_certificate_arn together (both or neither).",
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
      "Create a role for tenant-scoped credentials (dynamodb:LeadingKeys on <tenant>#*), for callers that assume it per tenant with the session tag tenant_id; only the roles of the functions that run graphs (the API function, the worker and the stream function) may assume it. The bundled handler does not assume it yet",
    default: false,
  },
  attach_tenant_role_assume_policy: {
    type: "bool",
    description:
      "Let the functions that run graphs assume the tenant role (sts:AssumeRole and sts:TagSession on it). Only for an image whose code assumes it per tenant: the bundled handler does not. Requires create_tenant_role",
    default: false,
    validation: [
      {
        condition: "!var.attach_tenant_role_assume_policy || var.create_tenant_role",
        message:
          "Invalid attach_tenant_role_assume_policy: expected create_tenant_role = true with it.",
      },
    ],
  },
  publish: {
    type: "bool",
    description:
      "Publish a version of every function (API, worker, stream, cleaner, API-key authorizer) on every change and point alias_name at it; every invoker then calls the alias: the HTTP API and its Lambda authorizer, the stream URL, the stream mapping, the recovery sweep, the worker's callers (needed for provisioned concurrency and canaries). false: everything invokes $LATEST",
    default: DEFAULTS.publish,
  },
  alias_name: {
    type: "string",
    description: "Name of the alias on each function's published version (with publish)",
    default: DEFAULTS.aliasName,
    validation: [
      {
        condition: `can(regex(${hcl(ALIAS_NAME_PATTERN)}, var.alias_name))`,
        message: "Invalid alias_name: expected a letter, then up to 127 letters, digits, - or _.",
      },
    ],
  },
  stable_version: {
    type: "string",
    description:
      'The published version the API function\'s alias keeps, like "7" (lambda_function_version before the change): a rollback, or the stable side of a canary (canary_weight). null: the latest version, so every apply that publishes one moves the alias to it',
    default: null,
    validation: [
      {
        condition: `var.stable_version == null || can(regex(${hcl(VERSION_NUMBER_PATTERN)}, var.stable_version))`,
        message: 'Invalid stable_version: expected a published version number like "7".',
      },
      {
        condition: "var.stable_version == null || var.publish",
        message:
          "Invalid stable_version: expected none without publish (only an alias keeps a version).",
      },
    ],
  },
  canary_weight: {
    type: "number",
    description: `Percent (${CANARY_WEIGHT_PERCENT.min} to ${CANARY_WEIGHT_PERCENT.max}) of the API function alias's invocations routed to the latest published version while the alias stays on stable_version: a weighted canary of what the last apply published (0: none)`,
    default: DEFAULTS.canaryWeight,
    validation: [
      {
        condition: wholeNumberIn("var.canary_weight", CANARY_WEIGHT_PERCENT),
        message: `Invalid canary_weight: expected a whole number from ${CANARY_WEIGHT_PERCENT.min} to ${CANARY_WEIGHT_PERCENT.max} percent.`,
      },
      {
        condition: "var.canary_weight == 0 || var.stable_version != null",
        message:
          "Invalid canary_weight: expected stable_version with it (the version the alias keeps while the rest goes to the latest).",
      },
    ],
  },
  image_uri_managed_externally: {
    type: "bool",
    description:
      "A pipeline owns the functions' image after creation (aws lambda update-function-code --publish, then update-alias; see the README): Terraform ignores changes of image_uri, so its plan stays empty. Switching it on an existing deployment moves the functions to other addresses (terraform state mv, see the README)",
    default: false,
  },
  provisioned_concurrent_executions: {
    type: "number",
    description:
      "Provisioned concurrency of the API function's alias: environments kept initialized, so users do not wait for cold starts (0: none; needs publish, at most reserved_concurrent_executions)",
    default: DEFAULTS.provisionedConcurrentExecutions,
    validation: [
      {
        condition:
          "var.provisioned_concurrent_executions >= 0 && floor(var.provisioned_concurrent_executions) == var.provisioned_concurrent_executions",
        message: "Invalid provisioned_concurrent_executions: expected a whole number, 0 or more.",
      },
      {
        condition: "var.provisioned_concurrent_executions == 0 || var.publish",
        message:
          "Invalid provisioned_concurrent_executions: expected 0 without publish (provisioned concurrency needs a published version).",
      },
      {
        condition: "var.provisioned_concurrent_executions <= var.reserved_concurrent_executions",
        message:
          "Invalid provisioned_concurrent_executions: expected at most reserved_concurrent_executions.",
      },
    ],
  },
  create_alarms: {
    type: "bool",
    description:
      "Create CloudWatch alarms: API 5xx rate and p99 latency, function errors, throttles and concurrency near the reserved limit, API function and cleaner duration near the timeout, the stream URL's 5xx rate, failed and timed-out runs, the cleaner's iterator age, the on-failure queues, DynamoDB throttles (thresholds in alarm_thresholds). Requires a topic for them to notify: create_alarm_topic = true or alarm_sns_topic_arn",
    default: false,
  },
  create_alarm_topic: {
    type: "bool",
    description:
      "Create an SNS topic for the alarms, encrypted with a KMS key of its own that CloudWatch may use (subscribe to it yourself); or give alarm_sns_topic_arn",
    default: false,
    validation: [
      {
        condition: "!var.create_alarm_topic || var.create_alarms",
        message: "Invalid create_alarm_topic: expected create_alarms = true with it.",
      },
    ],
  },
  alarm_sns_topic_arn: {
    type: "string",
    description:
      "An existing standard SNS topic the alarms notify (if it is encrypted, its key must let cloudwatch.amazonaws.com use it)",
    default: null,
    validation: [
      {
        condition: `var.alarm_sns_topic_arn == null || can(regex(${hcl(SNS_TOPIC_ARN_PATTERN)}, var.alarm_sns_topic_arn))`,
        message: "Invalid alarm_sns_topic_arn: expected a standard SNS topic ARN.",
      },
      {
        condition:
          "var.alarm_sns_topic_arn == null || (var.create_alarms && !var.create_alarm_topic)",
        message:
          "Invalid alarm_sns_topic_arn: expected it with create_alarms = true and without create_alarm_topic.",
      },
      {
        // Here, not on create_alarms: create_alarm_topic's rule reads create_alarms, and validations may not
        // read each other in a cycle.
        condition:
          "!var.create_alarms || var.create_alarm_topic || var.alarm_sns_topic_arn != null",
        message:
          "Invalid alarm_sns_topic_arn: expected a topic for the alarms of create_alarms = true (this ARN, or create_alarm_topic = true): alarms without actions notify nobody.",
      },
    ],
  },
  alarm_thresholds: {
    type: `object({ ${Object.values(ALARM_THRESHOLDS)
      .map((spec) => `${spec.variable} = optional(number, ${spec.default})`)
      .join(", ")} })`,
    description: `Alarm thresholds, each optional: ${Object.values(ALARM_THRESHOLDS)
      .map((spec) => `${spec.variable} (${spec.description}, default ${spec.default})`)
      .join("; ")}`,
    default: {},
    validation: [
      {
        condition: "alltrue([for value in values(var.alarm_thresholds) : value >= 0])",
        message: "Invalid alarm_thresholds: expected numbers, 0 or more.",
      },
    ],
  },
  vpc_subnet_ids: {
    type: "list(string)",
    description:
      "Subnets to attach every function to (with vpc_security_group_ids; default none: no VPC). Their roles then get the EC2 network-interface actions Lambda needs, scoped to these subnets and security groups; private subnets without NAT need the VPC endpoints listed in the README",
    default: [],
    validation: [
      {
        condition: `alltrue([for id in var.vpc_subnet_ids : can(regex(${hcl(SUBNET_ID_PATTERN)}, id))])`,
        message: "Invalid vpc_subnet_ids: expected subnet ids like subnet-0123456789abcdef0.",
      },
      {
        condition: "(length(var.vpc_subnet_ids) == 0) == (length(var.vpc_security_group_ids) == 0)",
        message:
          "Invalid vpc_subnet_ids: expected vpc_subnet_ids and vpc_security_group_ids together (both or neither).",
      },
    ],
  },
  vpc_security_group_ids: {
    type: "list(string)",
    description:
      "Security groups of the functions in the VPC (with vpc_subnet_ids): egress to 443 of the VPC endpoints (or NAT), no ingress needed",
    default: [],
    validation: [
      {
        condition: `alltrue([for id in var.vpc_security_group_ids : can(regex(${hcl(SECURITY_GROUP_ID_PATTERN)}, id))])`,
        message:
          "Invalid vpc_security_group_ids: expected security group ids like sg-0123456789abcdef0.",
      },
    ],
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
  function_tags: tagsOf(
    "the functions, their log groups, the SQS queues and the event source mappings",
  ),
  api_tags: tagsOf("the HTTP API, its stage, access log group and user pool"),
  kms_key_tags: tagsOf("the KMS key"),
  role_tags: tagsOf("the IAM roles"),
  ecr_tags: tagsOf("the ECR repository"),
  alarm_tags: tagsOf("the alarms, their topic and its key"),
} satisfies Record<string, VariableSpec>;
