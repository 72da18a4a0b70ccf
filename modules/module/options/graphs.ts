import { type OptionSpec, hcl } from "../option-spec";
import { DEFAULTS } from "../../construct/props";
import { LOG_LEVELS } from "../../../src/shared/defaults";
import {
  ACTION_PATTERN,
  AUTH_ENVIRONMENT_NAMES,
  AUTH_ENVIRONMENT_RULE,
  ENVIRONMENT_NAME_PATTERN,
  ENVIRONMENT_SECRET_RULE,
  KMS_KEY_ARN_PATTERN,
  LOG_RETENTION_DAYS,
  MODULE_ENVIRONMENT_NAMES,
  PARAMETER_ARN_PATTERN,
  POLICY_ARN_PATTERN,
  RESERVED_NAME_PATTERN,
  SECRET_ARN_PATTERN,
  SECRET_ARN_SHAPE,
  SECRET_ARN_SUFFIX_RULE,
  SECRET_NAME_PATTERNS,
  SECRET_VALUE_PATTERN,
  STATEMENT_ID_PATTERN,
  WILDCARD_ON_WILDCARD_RULE,
} from "../../construct/rules";

/** The names of var.environment the secret guard refuses (by name, or by a credential value). */
const SECRET_ENVIRONMENT = `[for name, value in var.environment : name if can(regex(${hcl(SECRET_NAME_PATTERNS.snake)}, name)) || can(regex(${hcl(SECRET_NAME_PATTERNS.camel)}, name)) || can(regex(${hcl(SECRET_VALUE_PATTERN)}, value))]`;

/** The names of var.environment that only the module sets (JWT_ISSUER, JWT_AUDIENCE). */
const AUTH_ENVIRONMENT = `[for name in keys(var.environment) : name if contains(${JSON.stringify(AUTH_ENVIRONMENT_NAMES)}, name)]`;

/** What the graphs get: their environment, secrets and permissions, and the functions' runtime settings. */
export const GRAPH_OPTIONS = {
  environment: {
    prop: "environment",
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
    prop: "secrets",
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
    prop: "secretsKmsKeyArns",
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
    prop: "graphPolicyStatements",
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
    prop: "graphPolicyArns",
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
    prop: "tenantClaim",
    type: "string",
    description: "JWT claim that carries the tenant id",
    default: DEFAULTS.tenantClaim,
  },
  log_level: {
    prop: "logLevel",
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
    prop: "deadlineMarginMs",
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
    prop: "logRetentionInDays",
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
} satisfies Record<string, OptionSpec>;
