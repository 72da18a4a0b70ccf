import { IMAGE_HANDLERS } from "../../src/runtime/environment";
import {
  DEFAULT_DEADLINE_MARGIN_MS,
  DEFAULT_LOG_LEVEL,
  DEFAULT_TENANT_CLAIM,
} from "../../src/shared/defaults";
import type { Flag } from "./expressions";
import type { Architecture } from "./rules";

/**
 * Props of {@link MemoryTable}. Every value may be a literal or a Terraform reference (the HCL module passes its
 * variables); defaults are the secure choice.
 */
export interface MemoryTableProps {
  /** Prefix of every resource name (3-40 lowercase letters, digits, hyphens). */
  readonly name: string;
  /** The function's container image, pinned by digest (`<repo>@sha256:...`). */
  readonly imageUri: string;
  /** `CMD` of the API function (default `["index.handler"]`); the cleaner runs `cleaner.handler`. */
  readonly imageCommand?: string[];
  /** `ENTRYPOINT` override for both functions (default: the image's). */
  readonly imageEntryPoint?: string[];
  readonly architecture?: Architecture;
  /** MB (default 1024). */
  readonly memorySize?: number;
  /** Seconds, at most 29 (API Gateway stops waiting at 30 s). Default 29. */
  readonly timeout?: number;
  /** Default 50. */
  readonly reservedConcurrentExecutions?: number;
  /** Extra environment variables of the API function (never secrets). */
  readonly environment?: Record<string, string>;
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
}

export const DEFAULTS = {
  imageCommand: [IMAGE_HANDLERS.api],
  // scripts/push-image.sh builds x86_64 by default: the function must run what is pushed.
  architecture: "x86_64" as Architecture,
  memorySize: 1024,
  timeout: 29,
  reservedConcurrentExecutions: 50,
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
} as const;

/** Where the module's pieces meet: what one part created and another uses. */
export interface Context {
  readonly name: string;
  readonly partition: string;
  readonly region: string;
  readonly accountId: string;
  readonly kmsKeyArn: string;
}
