import { type OptionSpec, hcl, tagsOf } from "../option-spec";
import { DEFAULTS } from "../../construct/props";
import { SECURITY_GROUP_ID_PATTERN, SUBNET_ID_PATTERN } from "../../construct/rules";

/** Where it runs: the VPC, the roles, the cleaner, the account and the tags. */
export const ACCOUNT_OPTIONS = {
  vpc_subnet_ids: {
    prop: "vpcSubnetIds",
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
    prop: "vpcSecurityGroupIds",
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
    prop: "rolePath",
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
    prop: "rolePermissionsBoundary",
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
    prop: "cleanerTimeout",
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
    prop: "cleanerReservedConcurrentExecutions",
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
    prop: "lookUpAccountId",
    type: "bool",
    description:
      "Read the account id with aws_caller_identity; false requires account_id (offline plans, principals without sts:GetCallerIdentity)",
    default: true,
  },
  account_id: {
    prop: "accountId",
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
  tags: { type: "map(string)", description: "Tags of every resource", default: {}, prop: "tags" },
  table_tags: tagsOf("the table", "tableTags"),
  function_tags: tagsOf(
    "the functions, their log groups, the SQS queues and the event source mappings",
    "functionTags",
  ),
  api_tags: tagsOf(
    "the HTTP API, its stage, access log group, user pool and custom domain, and the stream domain's CloudFront distribution",
    "apiTags",
  ),
  kms_key_tags: tagsOf("the KMS key", "kmsKeyTags"),
  role_tags: tagsOf("the IAM roles", "roleTags"),
  ecr_tags: tagsOf("the ECR repository", "ecrTags"),
  alarm_tags: tagsOf("the alarms, their topic and its key", "alarmTags"),
} satisfies Record<string, OptionSpec>;
