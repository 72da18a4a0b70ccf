import { type OptionSpec, hcl } from "../option-spec";
import { DEFAULTS } from "../../construct/props";
import { CERTIFICATE_ARN_PATTERN, DOMAIN_NAME_PATTERN } from "../../construct/domain";
import {
  CLOUDFRONT_CERTIFICATE_REGION,
  CLOUDFRONT_SECURITY_POLICY,
  CLOUDFRONT_WEB_ACL_ARN_PATTERN,
} from "../../construct/stream-domain";
import {
  CORS_ORIGIN_PATTERN,
  KMS_KEY_ARN_PATTERN,
  TABLE_ARN_PATTERN,
  TABLE_NAME_PATTERN,
  TABLE_STREAM_ARN_PATTERN,
} from "../../construct/rules";

/** The key, the table, who may call (issuer, CORS, throttling, custom domains), the repository and the tenant role. */
export const DATA_OPTIONS = {
  create_kms_key: {
    prop: "createKmsKey",
    type: "bool",
    description: "Create the customer-managed KMS key; false requires kms_key_arn",
    default: true,
  },
  kms_key_arn: {
    prop: "kmsKeyArn",
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
    prop: "kmsKeyDeletionWindowInDays",
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
    prop: "createTable",
    type: "bool",
    description:
      "Create the checkpoint table; false uses an existing one (table_name, table_arn, table_stream_arn, and table_kms_key_arn if it has a key of its own), which must have the module's definition: the keys, indexes, TTL attribute and a KEYS_ONLY stream of the README's table. The roles are scoped to it as to a created one",
    default: true,
  },
  table_name: {
    prop: "tableName",
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
    prop: "tableArn",
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
    prop: "tableStreamArn",
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
    prop: "tableKmsKeyArn",
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
    prop: "deletionProtection",
    type: "bool",
    description: "Deletion protection of the table and the user pool",
    default: true,
  },
  create_cognito_user_pool: {
    prop: "createCognitoUserPool",
    type: "bool",
    description:
      "Create a Cognito user pool and app client as the JWT issuer; false requires jwt_issuer and jwt_audience",
    default: true,
  },
  jwt_issuer: {
    prop: "jwtIssuer",
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
    prop: "jwtAudience",
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
    prop: "corsAllowOrigins",
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
    prop: "throttlingBurstLimit",
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
    prop: "throttlingRateLimit",
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
    prop: "apiDomainName",
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
    prop: "apiCertificateArn",
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
  api_disable_default_endpoint: {
    prop: "apiDisableDefaultEndpoint",
    type: "bool",
    description:
      "Turn off the HTTP API's default execute-api endpoint (disable_execute_api_endpoint), so that api_domain_name is the one way in; requires api_domain_name. The outputs api_endpoint and stage_invoke_url keep naming that endpoint, which then refuses every request: give clients api_domain_url",
    default: false,
    validation: [
      {
        condition: "!var.api_disable_default_endpoint || var.api_domain_name != null",
        message:
          "Invalid api_disable_default_endpoint: expected api_domain_name with it (without the default endpoint and a custom domain the API is unreachable).",
      },
    ],
  },
  stream_domain_name: {
    prop: "streamDomainName",
    type: "string",
    description: `Custom domain of the stream function's URL, like stream.example.com (with stream_certificate_arn; requires create_stream_function): a CloudFront distribution with the URL as its origin, https only, ${CLOUDFRONT_SECURITY_POLICY}, caching and compression off so Server-Sent Events stream through, every viewer header but Host forwarded (Authorization and X-Api-Key reach the function). Point your DNS at stream_cloudfront_distribution_domain_name (an alias record in stream_cloudfront_distribution_hosted_zone_id). The URL keeps answering directly. Must be known at plan (null: no distribution)`,
    default: null,
    validation: [
      {
        condition: `var.stream_domain_name == null || can(regex(${hcl(DOMAIN_NAME_PATTERN)}, var.stream_domain_name))`,
        message:
          "Invalid stream_domain_name: expected a lowercase domain name like stream.example.com.",
      },
      {
        condition: "var.stream_domain_name == null || var.create_stream_function",
        message:
          "Invalid stream_domain_name: expected create_stream_function = true with it (the distribution's origin is the stream function's URL).",
      },
    ],
  },
  stream_certificate_arn: {
    prop: "streamCertificateArn",
    type: "string",
    description: `ACM certificate of stream_domain_name, in ${CLOUDFRONT_CERTIFICATE_REGION} whatever the module's region (CloudFront serves certificates of ${CLOUDFRONT_CERTIFICATE_REGION} only; checked at plan once the ARN is known); it may be created in the same apply, through a provider configuration of ${CLOUDFRONT_CERTIFICATE_REGION}`,
    default: null,
    validation: [
      {
        condition: `var.stream_certificate_arn == null || can(regex(${hcl(CERTIFICATE_ARN_PATTERN)}, var.stream_certificate_arn))`,
        message: `Invalid stream_certificate_arn: expected an ACM certificate ARN (arn:aws:acm:${CLOUDFRONT_CERTIFICATE_REGION}:<account>:certificate/<id>).`,
      },
      {
        condition: "(var.stream_domain_name == null) == (var.stream_certificate_arn == null)",
        message:
          "Invalid stream_certificate_arn: expected stream_domain_name and stream_certificate_arn together (both or neither).",
      },
    ],
  },
  stream_web_acl_arn: {
    prop: "streamWebAclArn",
    type: "string",
    description:
      "ARN of a WAFv2 web ACL of scope CLOUDFRONT for the stream domain's distribution, with stream_domain_name (null: none): per-client rate limits and managed rules in front of the stream function. It does not cover the function URL itself, which keeps answering directly",
    default: null,
    validation: [
      {
        condition: `var.stream_web_acl_arn == null || can(regex(${hcl(CLOUDFRONT_WEB_ACL_ARN_PATTERN)}, var.stream_web_acl_arn))`,
        message:
          "Invalid stream_web_acl_arn: expected the ARN of a WAFv2 web ACL of scope CLOUDFRONT (arn:aws:wafv2:us-east-1:<account>:global/webacl/<name>/<id>).",
      },
      {
        condition: "var.stream_web_acl_arn == null || var.stream_domain_name != null",
        message:
          "Invalid stream_web_acl_arn: expected stream_domain_name with it (the web ACL protects the stream domain's distribution).",
      },
    ],
  },
  create_ecr_repository: {
    prop: "createEcrRepository",
    type: "bool",
    description:
      "Create an ECR repository for the image (immutable tags, scan on push, KMS; untagged images expire after 14 days, tagged ones never)",
    default: false,
  },
  create_tenant_role: {
    prop: "createTenantRole",
    type: "bool",
    description:
      "Create a role for tenant-scoped credentials (dynamodb:LeadingKeys on <tenant>#*), for callers that assume it per tenant with the session tag tenant_id; only the roles of the functions that run graphs (the API function, the worker and the stream function) may assume it. The bundled handler does not assume it yet",
    default: false,
  },
  attach_tenant_role_assume_policy: {
    prop: "attachTenantRoleAssumePolicy",
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
} satisfies Record<string, OptionSpec>;
