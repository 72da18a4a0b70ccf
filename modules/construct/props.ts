import { DEFAULT_API_KEY_CACHE_SECONDS, DEFAULT_MAX_RUN_LEGS } from "../../src/runtime/config";
import { IMAGE_HANDLERS } from "../../src/runtime/environment";
import {
  DEFAULT_DEADLINE_MARGIN_MS,
  DEFAULT_LOG_LEVEL,
  DEFAULT_TENANT_CLAIM,
} from "../../src/shared/defaults";
import type { AlarmThresholds } from "./alarms";
import type { Flag } from "./expressions";
import type { Architecture, GraphPolicyStatement } from "./rules";

/**
 * Props of {@link MemoryTable}. Every value may be a literal or a Terraform reference (the HCL module passes its
 * variables); defaults are the secure choice.
 */
export interface MemoryTableProps {
  /** Prefix of every resource name (3-40 lowercase letters, digits, hyphens). */
  readonly name: string;
  /** The function's container image, pinned by digest (`<repo>@sha256:...`). */
  readonly imageUri: string;
  /**
   * `CMD` of the API function (default `["index.handler"]`); the worker runs `worker.handler`, the stream
   * function `stream.handler`, the cleaner `cleaner.handler`.
   */
  readonly imageCommand?: string[];
  /** `ENTRYPOINT` override for every function (default: the image's). */
  readonly imageEntryPoint?: string[];
  readonly architecture?: Architecture;
  /** MB (default 1024). */
  readonly memorySize?: number;
  /** Seconds, at most 29 (API Gateway stops waiting at 30 s). Default 29. */
  readonly timeout?: number;
  /** Default 50. */
  readonly reservedConcurrentExecutions?: number;
  /** Seconds of one leg of a background run in the worker function, 60 to 900 (default 900). */
  readonly workerTimeout?: number;
  /** MB of the worker function (default: `memorySize`). */
  readonly workerMemorySize?: number;
  /** Background runs running at once (default 20). */
  readonly workerReservedConcurrentExecutions?: number;
  /** Retries of a failed worker invocation before its job goes to the failure queue, 0 to 2 (default 2). */
  readonly workerMaximumRetryAttempts?: number;
  /**
   * Seconds a worker invocation may wait (throttled, or between retries) before its job goes to the failure
   * queue, 60 to 21600 (default 3600).
   */
  readonly workerMaximumEventAgeInSeconds?: number;
  /**
   * How often the worker sweeps the table for runs whose process died and takes them over: an EventBridge
   * `rate(...)` or `cron(...)` expression (default `rate(1 minute)`); `null` or `""` creates no schedule.
   */
  readonly recoverySweepSchedule?: string | null;
  /**
   * Fire crons (default true): they live in the table and the worker fires the due ones on every recovery sweep,
   * so this needs `recoverySweepSchedule`; false sets CRONS_ENABLED=false on the functions that run graphs.
   */
  readonly createCrons?: Flag;
  /** Most legs (each at most `workerTimeout`) of one background run, 1 to 999 (default 8). */
  readonly maxRunLegs?: number;
  /**
   * Create the stream function: the whole API from a Lambda function URL in RESPONSE_STREAM mode, for the
   * streaming routes (Server-Sent Events) and runs longer than API Gateway's 30 s (default true).
   */
  readonly createStreamFunction?: Flag;
  /**
   * Declare the stream URL's second statement (lambda:InvokeFunction to `*` only through a function URL) with
   * Cloud Control, which provider 5.x needs for its condition (default true). False: add it yourself, or the
   * URL answers 403 (see the module README).
   */
  readonly createStreamUrlInvokePermission?: Flag;
  /** Seconds a request to the stream function may take, 30 to 900 (default 900). */
  readonly streamTimeout?: number;
  /** MB of the stream function (default: `memorySize`). */
  readonly streamMemorySize?: number;
  /** Requests the stream function serves at once, each open stream holding one (default 50). */
  readonly streamReservedConcurrentExecutions?: number;
  /**
   * Accept API keys (`X-Api-Key`, created with `npm run api-key`) at API Gateway next to JWTs: every route goes
   * behind a Lambda REQUEST authorizer (`authorizer.handler`) that checks either credential, instead of the JWT
   * authorizer. Costs one authorizer invocation per API request (API Gateway cannot cache it). Default false. The
   * stream function checks API keys itself either way.
   */
  readonly enableApiKeys?: Flag;
  /** Seconds a container reuses an API key's verdict: how long a revocation may take (0 to 3600, default 60). */
  readonly apiKeyCacheSeconds?: number;
  /** Origins allowed by the function URL's CORS (default: `corsAllowOrigins`). Never `*`. */
  readonly streamCorsAllowOrigins?: string[];
  /** Hosts (`host` or `host:port`, lowercase) run webhooks may be posted to over https (default none). */
  readonly webhookAllowedHosts?: string[];
  /** Extra environment variables of the functions that run graphs (never secrets: see `secrets`). */
  readonly environment?: Record<string, string>;
  /**
   * Variables of the functions that run graphs, read at cold start before the graph module loads: name => ARN
   * of a Secrets Manager secret or an SSM SecureString parameter. The functions may read exactly these.
   */
  readonly secrets?: Record<string, string>;
  /** Customer-managed KMS keys the secrets are encrypted with (none for AWS managed keys). */
  readonly secretsKmsKeyArns?: string[];
  /** Additional IAM statements of the functions that run graphs, by statement id (their own policy). */
  readonly graphPolicyStatements?: Record<string, GraphPolicyStatement>;
  /** Managed policies attached to the roles of the functions that run graphs, by a name of yours. */
  readonly graphPolicyArns?: Record<string, string>;
  /** JWT claim that carries the tenant id (default `custom:tenant_id`). */
  readonly tenantClaim?: string;
  /** Default `info`. */
  readonly logLevel?: string;
  /** Default 3000. */
  readonly deadlineMarginMs?: number;
  /** Days, one of the values CloudWatch Logs accepts (default 365). */
  readonly logRetentionInDays?: number;
  /** Create a customer-managed KMS key (default true); otherwise pass `kmsKeyArn`. */
  readonly createKmsKey?: Flag;
  readonly kmsKeyArn?: string;
  /** Default 30. */
  readonly kmsKeyDeletionWindowInDays?: number;
  /**
   * Create the table (default true). False: an existing table with the module's definition (keys, indexes, TTL
   * attribute, a KEYS_ONLY stream), given by `tableName`, `tableArn` and `tableStreamArn`.
   */
  readonly createTable?: Flag;
  readonly tableName?: string;
  readonly tableArn?: string;
  readonly tableStreamArn?: string;
  /** The existing table's customer-managed key (none: an AWS owned or AWS managed key). */
  readonly tableKmsKeyArn?: string;
  /**
   * A custom domain for the HTTP API (with `apiCertificateArn`, an ACM certificate in the API's region): a
   * regional domain name with TLS 1.2, mapped to the `$default` stage. Point your DNS at its target.
   */
  readonly apiDomainName?: string;
  readonly apiCertificateArn?: string;
  /**
   * Turn off the HTTP API's default `execute-api` endpoint (default false), so that the custom domain is the one
   * way in. Needs `apiDomainName`: without it the API would be unreachable.
   */
  readonly apiDisableDefaultEndpoint?: Flag;
  /**
   * A custom domain for the stream function's URL (with `streamCertificateArn`, an ACM certificate in us-east-1):
   * a CloudFront distribution with the URL as its origin, streaming unbuffered. Point your DNS at it.
   */
  readonly streamDomainName?: string;
  readonly streamCertificateArn?: string;
  /** A WAFv2 web ACL (scope CLOUDFRONT) on the stream domain's distribution, for rate limits (optional). */
  readonly streamWebAclArn?: string;
  /** Table and user pool deletion protection (default true). */
  readonly deletionProtection?: Flag;
  /** Create a Cognito user pool and app client (default: when no `jwtIssuer` is given). */
  readonly createCognitoUserPool?: Flag;
  /** External JWT issuer URL (with `jwtAudience`), instead of the Cognito user pool. */
  readonly jwtIssuer?: string;
  readonly jwtAudience?: string[];
  /** Origins allowed by CORS (default none: no CORS configuration). Never `*`. */
  readonly corsAllowOrigins?: string[];
  /** Default 100. */
  readonly throttlingBurstLimit?: number;
  /** Requests per second (default 50). */
  readonly throttlingRateLimit?: number;
  /** Create an ECR repository for the image (default false). */
  readonly createEcrRepository?: Flag;
  /**
   * Create a role for tenant-scoped credentials (`dynamodb:LeadingKeys`), for callers that assume it per tenant;
   * the bundled handler does not assume it yet (default false).
   */
  readonly createTenantRole?: Flag;
  /**
   * Let the functions that run graphs assume the tenant role (sts:AssumeRole, sts:TagSession on it): only for
   * code that does; the bundled handler does not (default false).
   */
  readonly attachTenantRoleAssumePolicy?: Flag;
  /**
   * Publish a version of every function on every change, behind an alias (`aliasName`) that every invoker calls:
   * the HTTP API, the stream function's URL, the stream mapping, the recovery sweep and the worker's callers
   * (default true). False: everything invokes $LATEST.
   */
  readonly publish?: Flag;
  /** Alias of the published versions (default `live`). */
  readonly aliasName?: string;
  /**
   * The published version of the API function its alias keeps (a rollback, or the stable side of a canary), as
   * a number like `"7"`; default: the latest version, so every change reaches the alias on apply.
   */
  readonly stableVersion?: string;
  /**
   * Percent (0 to 100) of the API function alias's invocations routed to the latest published version while the
   * alias stays on `stableVersion` (default 0: no canary).
   */
  readonly canaryWeight?: number;
  /**
   * A pipeline owns the image (`aws lambda update-function-code --publish`, then `update-alias`): Terraform
   * ignores `image_uri` changes after creation (default false). A known value only: it is a lifecycle setting.
   */
  readonly imageUriManagedExternally?: boolean;
  /** Provisioned concurrency of the API function's alias (default 0: none); needs `publish`. */
  readonly provisionedConcurrentExecutions?: number;
  /** Create the CloudWatch alarms (default false). */
  readonly createAlarms?: Flag;
  /** Create an SNS topic (KMS-encrypted) for the alarms (default false). */
  readonly createAlarmTopic?: Flag;
  /** An existing SNS topic the alarms notify, instead of a created one. */
  readonly alarmSnsTopicArn?: string;
  /** Alarm thresholds (each defaults to ALARM_THRESHOLDS). */
  readonly alarmThresholds?: Partial<AlarmThresholds>;
  /**
   * Subnets to attach every function to (with `vpcSecurityGroupIds`; default none: no VPC). The roles then get
   * the network-interface permissions Lambda needs; private subnets without NAT need VPC endpoints (README).
   */
  readonly vpcSubnetIds?: string[];
  /** Security groups of the functions in the VPC (with `vpcSubnetIds`). */
  readonly vpcSecurityGroupIds?: string[];
  /** Default `/`. */
  readonly rolePath?: string;
  readonly rolePermissionsBoundary?: string;
  /** Seconds for the expired-thread cleaner (default 60). */
  readonly cleanerTimeout?: number;
  /** Default 2. */
  readonly cleanerReservedConcurrentExecutions?: number;
  /** AWS account id; without it the module reads it with `aws_caller_identity`. */
  readonly accountId?: string;
  /** Read the account id from STS (default: when no `accountId` is given). */
  readonly lookUpAccountId?: Flag;
  readonly tags?: Record<string, string>;
  readonly tableTags?: Record<string, string>;
  readonly functionTags?: Record<string, string>;
  readonly apiTags?: Record<string, string>;
  readonly kmsKeyTags?: Record<string, string>;
  readonly roleTags?: Record<string, string>;
  readonly ecrTags?: Record<string, string>;
  readonly alarmTags?: Record<string, string>;
}

export const DEFAULTS = {
  imageCommand: [IMAGE_HANDLERS.api],
  // scripts/push-image.sh builds x86_64 by default: the function must run what is pushed.
  architecture: "x86_64" as Architecture,
  memorySize: 1024,
  timeout: 29,
  reservedConcurrentExecutions: 50,
  // A leg may take a worker function's longest timeout.
  workerTimeout: 900,
  workerReservedConcurrentExecutions: 20,
  // Lambda's own defaults for asynchronous invocations, except the event age: a run queued behind throttling
  // for an hour is better recorded as failed than started six hours late.
  workerMaximumRetryAttempts: 2,
  workerMaximumEventAgeInSeconds: 3600,
  // A stalled run is taken over within about a minute of its lease expiring, for about 44,000 invocations a month.
  recoverySweepSchedule: "rate(1 minute)",
  // Crons are part of the API (client.crons), fired by the sweep above at its precision.
  createCrons: true,
  maxRunLegs: DEFAULT_MAX_RUN_LEGS,
  // Streaming is how every LangGraph client talks to a server (useStream, Agent Chat UI, runs.stream).
  createStreamFunction: true,
  // Without it, a URL created since October 2025 answers 403 to every request.
  createStreamUrlInvokePermission: true,
  // A stream may last as long as a run: Lambda's longest timeout.
  streamTimeout: 900,
  streamReservedConcurrentExecutions: 50,
  tenantClaim: DEFAULT_TENANT_CLAIM,
  logLevel: DEFAULT_LOG_LEVEL,
  deadlineMarginMs: DEFAULT_DEADLINE_MARGIN_MS,
  logRetentionInDays: 365,
  kmsKeyDeletionWindowInDays: 30,
  throttlingBurstLimit: 100,
  throttlingRateLimit: 50,
  rolePath: "/",
  cleanerTimeout: 60,
  cleanerReservedConcurrentExecutions: 2,
  // Every function on a version behind an alias: a rollout or a rollback is one alias update.
  publish: true,
  aliasName: "live",
  canaryWeight: 0,
  provisionedConcurrentExecutions: 0,
  enableApiKeys: false,
  apiKeyCacheSeconds: DEFAULT_API_KEY_CACHE_SECONDS,
} as const;

/** Where the module's pieces meet: what one part created and another uses. */
export interface Context {
  readonly name: string;
  readonly partition: string;
  readonly region: string;
  readonly accountId: string;
  readonly kmsKeyArn: string;
}
