import { Token } from "../cdktf";
import { InvalidConfigurationError } from "../../src/shared/errors";
import { ENVIRONMENT } from "../../src/runtime/environment";
import { MAX_RUN_LEGS_RANGE, WORKER_END_MARGIN_MS } from "../../src/shared/limits";

/**
 * Input rules shared by the construct (checked in TypeScript for literal props) and the HCL module (rendered as
 * `validation {}` blocks), so a CDKTF user and an HCL user are refused the same values with the same words.
 */

/** Lowercase (ECR repository names must be), short enough for `<name>-cleaner` and `<name>-dlq` names. */
export const NAME_PATTERN = "^[a-z][a-z0-9-]{1,38}[a-z0-9]$";

/** An ECR image pinned by digest: tags are mutable references, a digest is what was scanned and tested. */
export const IMAGE_URI_PATTERN =
  "^[0-9]{12}\\.dkr\\.ecr\\.[a-z0-9-]+\\.amazonaws\\.com(\\.cn)?/[a-z0-9][a-z0-9._/-]*@sha256:[a-f0-9]{64}$";

/** API Gateway stops waiting for an integration at 30 s: a longer function run would answer nobody. */
export const MAX_API_TIMEOUT_SECONDS = 29;

/**
 * The worker function's timeout, in seconds: Lambda's longest at most. A leg keeps its last 10 s (or
 * DEADLINE_MARGIN_MS, if longer) to record how it ended and hand over, so under a minute a leg would spend
 * more of its time starting and handing over than running the graph.
 */
export const WORKER_TIMEOUT_SECONDS = { min: 60, max: 900 } as const;
/** The end of a worker invocation a leg keeps free to record how it ended and hand over (src/shared/limits.ts). */
export const WORKER_END_MARGIN_SECONDS = WORKER_END_MARGIN_MS / 1000;

/**
 * The stream function's timeout, in seconds: a stream lasts as long as its run, up to Lambda's longest. Under
 * 30 s the HTTP API serves the same runs (buffered), and a stream would end before a client noticed it.
 */
export const STREAM_TIMEOUT_SECONDS = { min: 30, max: 900 } as const;

/** What Lambda accepts for an asynchronously invoked function's retries and event age (seconds). */
export const ASYNC_RETRY_ATTEMPTS = { min: 0, max: 2 } as const;
export const ASYNC_EVENT_AGE_SECONDS = { min: 60, max: 21600 } as const;

/** Legs of one background run: MAX_RUN_LEGS as the runtime accepts it (src/shared/limits.ts). */
export const MAX_RUN_LEGS = MAX_RUN_LEGS_RANGE;
/** API_KEY_CACHE_SECONDS as the runtime accepts it (src/runtime/config.ts). */
export const API_KEY_CACHE_SECONDS = { min: 0, max: 3600 } as const;

/**
 * A host run webhooks may be posted to: `host` or `host:port`, lowercase, as the runtime reads
 * WEBHOOK_ALLOWED_HOSTS (src/runtime/config.ts; the scheme is always https).
 */
export const WEBHOOK_HOST_PATTERN = "^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?$";

/**
 * An EventBridge schedule the recovery sweep accepts: `rate(<n> <unit>)` (singular unit for 1, plural otherwise,
 * as EventBridge requires) or `cron(<six fields>)`.
 */
export const SCHEDULE_EXPRESSION_PATTERN =
  "^(rate\\((1 (minute|hour|day)|([2-9]|[1-9][0-9]+) (minutes|hours|days))\\)|cron\\([^()\\s]+( [^()\\s]+){5}\\))$";
export const SCHEDULE_EXPRESSION_RULE =
  'an EventBridge schedule, rate(1 minute), rate(5 minutes) or cron(<six fields>), or null or "" to turn the sweep off';

/** Memory Lambda accepts, in MB. */
export const MEMORY_SIZE_MB = { min: 128, max: 10240 } as const;

/** The retention values CloudWatch Logs accepts (0, "never expire", is deliberately not offered). */
export const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288,
  3653,
] as const;

/**
 * Environment variable names that name a secret *value*: the last word is SECRET, PASSWORD, TOKEN, CREDENTIALS,
 * or an API, private, access, signing or client KEY (`OPENAI_API_KEY`, `DB_PASSWORD`, `GITHUB_TOKEN`,
 * `openaiApiKey`). Words elsewhere in the name are ordinary (`MAX_TOKENS`, `TOKEN_BUDGET`, `SECRET_ARN`).
 * Two patterns, both used case by case: SNAKE_CASE (any case) and camelCase (case-sensitive).
 */
const SECRET_WORDS =
  "secrets?|passwords?|passwd|passphrase|token|credentials?|apikey|(api|private|access|secret|signing|encryption|client)_?key";
const SECRET_WORDS_CAMEL =
  "Secrets?|Passwords?|Passwd|Passphrase|Token|Credentials?|(Api|Private|Access|Secret|Signing|Encryption|Client)Key";
export const SECRET_NAME_PATTERNS = {
  /** RE2 (Terraform) syntax. */
  snake: `(?i)(^|_)(${SECRET_WORDS})$`,
  camel: `[a-z0-9](${SECRET_WORDS_CAMEL})$`,
} as const;
const SECRET_NAME_REGEXPS = [
  new RegExp(`(^|_)(${SECRET_WORDS})$`, "i"),
  new RegExp(SECRET_NAME_PATTERNS.camel),
];

/**
 * Values that are a credential whatever their name: a PEM private key, a URL carrying a password
 * (`postgres://user:password@host`), an AWS access key id. Checked without ever echoing the value.
 */
export const SECRET_VALUE_PATTERN =
  "(-----BEGIN [A-Z ]*PRIVATE KEY-----|[a-zA-Z][a-zA-Z0-9+.-]*://[^/:@\\s]+:[^/@\\s]+@|(^|[^A-Z0-9])(AKIA|ASIA)[A-Z0-9]{16}([^A-Z0-9]|$))";

/** What `environment` refuses, in the words both the construct and the module use. */
export const ENVIRONMENT_SECRET_RULE =
  "no variable named like a secret (its last word SECRET, PASSWORD, PASSPHRASE, TOKEN or CREDENTIALS, or an API, private, access, secret, signing, encryption or client KEY) and no value that is a credential (a private key, a URL with a password, an AWS access key id): give its Secrets Manager or SSM SecureString ARN in secrets instead, resolved at cold start and never stored in Terraform state";

/** An environment variable name Lambda accepts. */
export const ENVIRONMENT_NAME_PATTERN = "^[A-Za-z][A-Za-z0-9_]*$";

/**
 * Names a secret may not take: Lambda's and the runtime's own (`AWS_*`, `LAMBDA_*`, `_HANDLER`) and the ones this
 * module sets (a secret must not shadow TABLE_NAME).
 */
export const RESERVED_NAME_PATTERN = "^(AWS_|LAMBDA_|_)";
export const MODULE_ENVIRONMENT_NAMES: readonly string[] = Object.values(ENVIRONMENT);

/**
 * Names `environment` may not set: who may call the stream function comes from the authorizer's issuer and
 * audiences only (the created user pool, or jwt_issuer and jwt_audience), never from a variable beside them.
 */
export const AUTH_ENVIRONMENT_NAMES: readonly string[] = [
  ENVIRONMENT.jwtIssuer,
  ENVIRONMENT.jwtAudience,
];
export const AUTH_ENVIRONMENT_RULE = `none of ${AUTH_ENVIRONMENT_NAMES.join(", ")} (the module sets them from the authorizer's issuer and audiences: the created user pool, or jwt_issuer and jwt_audience)`;

/** Any Secrets Manager secret ARN, complete or partial. */
export const SECRET_ARN_SHAPE =
  "^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[A-Za-z0-9/_+=.@-]+$";
/**
 * A Secrets Manager secret by its complete ARN: with the `-` and six characters Secrets Manager appends to the
 * name. A partial ARN (without them) matches no secret in an IAM policy's Resource, so the functions would be
 * denied GetSecretValue at cold start.
 */
export const SECRET_ARN_PATTERN =
  "^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$";
export const SECRET_ARN_SUFFIX_RULE =
  "complete Secrets Manager ARNs, ending in the - and six characters Secrets Manager appends to the name (…:secret:<name>-AbCdEf, as the console and the secret's arn attribute give it): a partial ARN matches no secret in the functions' IAM policy";

/** An Allow statement may not pair a wildcard action (s3:*, s3:Get*) with the resource `*`. */
export const WILDCARD_ON_WILDCARD_RULE =
  "no Allow statement with a wildcard action (like s3:*) on resource *: name the actions, or the resources";
/** An SSM Parameter Store parameter, by ARN (`parameter/<name without its leading slash>`). */
export const PARAMETER_ARN_PATTERN =
  "^arn:aws[a-z-]*:ssm:[a-z0-9-]+:[0-9]{12}:parameter/[A-Za-z0-9/_.-]+$";
export const KMS_KEY_ARN_PATTERN = "^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[A-Za-z0-9-]+$";
export const POLICY_ARN_PATTERN =
  "^arn:aws[a-z-]*:iam::([0-9]{12}|aws):policy/[A-Za-z0-9+=,.@_/-]+$";
/** Standard topics only: CloudWatch alarms cannot publish to FIFO topics. */
export const SNS_TOPIC_ARN_PATTERN = "^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]+$";
/** IAM statement ids: letters and digits. */
export const STATEMENT_ID_PATTERN = "^[A-Za-z0-9]+$";
/** `service:Action`, wildcards allowed inside the action name; never `*` alone. */
export const ACTION_PATTERN = "^[A-Za-z0-9-]+:[A-Za-z0-9*]+$";
/** A Lambda alias name that cannot be mistaken for a version number. */
export const ALIAS_NAME_PATTERN = "^[A-Za-z][A-Za-z0-9_-]{0,127}$";
/** A published Lambda version (`$LATEST` is not one: an alias on it could not route a canary). */
export const VERSION_NUMBER_PATTERN = "^[1-9][0-9]{0,9}$";
/** Percent of an alias's invocations routed to the canary version. */
export const CANARY_WEIGHT_PERCENT = { min: 0, max: 100 } as const;

/** CORS origins: https only (a browser origin over http is readable by anyone on the path), http for local dev. */
export const CORS_ORIGIN_PATTERN =
  "^(https://[^*\\s/]+|http://(localhost|127\\.0\\.0\\.1)(:[0-9]{1,5})?)$";

/**
 * Endings a name may not have: the module names resources `<name><suffix>`, and an instance named `x-worker` would
 * take names of instance `x` (its worker function and log group `x-worker`, its alarms `x-worker-errors`...;
 * `x-dynamodb-throttles` is both x's table alarm and x-dynamodb's throttles alarm). A test derives this list from
 * the synthesized module's names, so it cannot fall behind a new resource.
 */
export const RESERVED_NAME_ENDINGS = [
  "-authorizer",
  "-cleaner",
  "-dynamodb",
  "-stream",
  "-worker",
] as const;
export const RESERVED_NAME_ENDING_PATTERN = `(${RESERVED_NAME_ENDINGS.join("|")})$`;
export const RESERVED_NAME_ENDING_RULE = `a name not ending in ${RESERVED_NAME_ENDINGS.join(", ")} (another instance's resources use those names: x-worker would collide with instance x's worker)`;

/** A VPC subnet id and a security group id (8 or 17 hex digits). */
/** An existing table's name, ARN and stream ARN. */
export const TABLE_NAME_PATTERN = "^[A-Za-z0-9_.-]{3,255}$";
export const TABLE_ARN_PATTERN =
  "^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:[0-9]{12}:table/[A-Za-z0-9_.-]{3,255}$";
export const TABLE_STREAM_ARN_PATTERN =
  "^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:[0-9]{12}:table/[A-Za-z0-9_.-]{3,255}/stream/[0-9TZ:.-]+$";
export const SUBNET_ID_PATTERN = "^subnet-([0-9a-f]{8}|[0-9a-f]{17})$";
export const SECURITY_GROUP_ID_PATTERN = "^sg-([0-9a-f]{8}|[0-9a-f]{17})$";

export const ARCHITECTURES = ["arm64", "x86_64"] as const;
export type Architecture = (typeof ARCHITECTURES)[number];

function reject(option: string, expected: string, got: unknown): never {
  throw new InvalidConfigurationError(option, `expected ${expected}, got ${JSON.stringify(got)}`);
}

/** True for a value known now (not a Terraform reference resolved at plan time). */
export function isLiteral(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === "object") return !Token.isUnresolved(value);
  return !Token.isUnresolved(value);
}

const literalEntries = <T>(value: Record<string, T> | undefined): [string, T][] =>
  value !== undefined && isLiteral(value) ? Object.entries(value) : [];

export function assertName(value: string): void {
  if (isLiteral(value) && !new RegExp(NAME_PATTERN).test(value)) {
    reject("name", "3-40 lowercase letters, digits or hyphens, starting with a letter", value);
  }
  if (isLiteral(value) && new RegExp(RESERVED_NAME_ENDING_PATTERN).test(value)) {
    reject("name", RESERVED_NAME_ENDING_RULE, value);
  }
}

export function assertImageUri(value: string): void {
  if (isLiteral(value) && !new RegExp(IMAGE_URI_PATTERN).test(value)) {
    reject(
      "image_uri",
      "an ECR image pinned by digest (<account>.dkr.ecr.<region>.amazonaws.com/<repo>@sha256:<64 hex>)",
      value,
    );
  }
}

export function assertTimeout(value: number): void {
  if (
    isLiteral(value) &&
    !(Number.isInteger(value) && value >= 1 && value <= MAX_API_TIMEOUT_SECONDS)
  ) {
    reject("timeout", `an integer from 1 to ${MAX_API_TIMEOUT_SECONDS} seconds`, value);
  }
}

/** A whole number within `range` (a reference is checked by the module's validation instead). */
export function assertWholeNumber(
  option: string,
  value: number | undefined,
  range: { min: number; max?: number },
  unit = "",
): void {
  if (value === undefined || !isLiteral(value)) return;
  const max = range.max;
  if (!(Number.isInteger(value) && value >= range.min && (max === undefined || value <= max))) {
    const expected =
      max === undefined
        ? `a whole number, ${range.min} or more`
        : `a whole number from ${range.min} to ${max}`;
    reject(option, `${expected}${unit}`, value);
  }
}

export function assertWebhookHosts(value: string[] | undefined): void {
  if (value === undefined || !isLiteral(value)) return;
  for (const host of value) {
    if (isLiteral(host) && !new RegExp(WEBHOOK_HOST_PATTERN).test(host)) {
      reject(
        "webhook_allowed_hosts",
        "lowercase host names, or host:port, like hooks.example.com (no scheme: webhooks are posted over https)",
        host,
      );
    }
  }
}

export function assertRecoverySweepSchedule(value: string | null | undefined): void {
  if (value === undefined || value === null || !isLiteral(value) || value === "") return;
  if (!new RegExp(SCHEDULE_EXPRESSION_PATTERN).test(value)) {
    reject("recovery_sweep_schedule", SCHEDULE_EXPRESSION_RULE, value);
  }
}

export function assertLogRetention(value: number): void {
  if (isLiteral(value) && !(LOG_RETENTION_DAYS as readonly number[]).includes(value)) {
    reject("log_retention_in_days", `one of ${LOG_RETENTION_DAYS.join(", ")}`, value);
  }
}

/** Names of `names` that name a secret value (see SECRET_NAME_PATTERNS). */
export function secretLikeNames(names: string[]): string[] {
  return names.filter((name) => SECRET_NAME_REGEXPS.some((pattern) => pattern.test(name)));
}

export function assertEnvironment(value: Record<string, string>): void {
  const entries = literalEntries(value);
  const named = secretLikeNames(entries.map(([name]) => name));
  // The value is never echoed: only the name of the variable that holds it.
  const valued = entries
    .filter(([, text]) => isLiteral(text) && new RegExp(SECRET_VALUE_PATTERN).test(text))
    .map(([name]) => name);
  const refused = [...new Set([...named, ...valued])];
  if (refused.length > 0) reject("environment", ENVIRONMENT_SECRET_RULE, refused);
  const auth = entries
    .map(([name]) => name)
    .filter((name) => AUTH_ENVIRONMENT_NAMES.includes(name));
  if (auth.length > 0) reject("environment", AUTH_ENVIRONMENT_RULE, auth);
}

export function assertSecrets(
  secrets: Record<string, string> | undefined,
  environment: Record<string, string> | undefined,
  kmsKeyArns: string[] | undefined,
): void {
  const entries = literalEntries(secrets);
  for (const [name, arn] of entries) {
    if (!new RegExp(ENVIRONMENT_NAME_PATTERN).test(name)) {
      reject("secrets", "variable names of letters, digits and _, starting with a letter", name);
    }
    if (new RegExp(RESERVED_NAME_PATTERN).test(name) || MODULE_ENVIRONMENT_NAMES.includes(name)) {
      reject(
        "secrets",
        `names that are neither Lambda's (AWS_*, LAMBDA_*, _*) nor the module's own (${MODULE_ENVIRONMENT_NAMES.join(", ")})`,
        name,
      );
    }
    if (environment !== undefined && isLiteral(environment) && name in environment) {
      reject("secrets", "names not also given in environment", name);
    }
    if (
      isLiteral(arn) &&
      new RegExp(SECRET_ARN_SHAPE).test(arn) &&
      !new RegExp(SECRET_ARN_PATTERN).test(arn)
    ) {
      reject("secrets", SECRET_ARN_SUFFIX_RULE, arn);
    }
    if (
      isLiteral(arn) &&
      !new RegExp(SECRET_ARN_SHAPE).test(arn) &&
      !new RegExp(PARAMETER_ARN_PATTERN).test(arn)
    ) {
      reject(
        "secrets",
        "ARNs of Secrets Manager secrets (arn:aws:secretsmanager:<region>:<account>:secret:<name>-<suffix>) or SSM parameters (arn:aws:ssm:<region>:<account>:parameter/<name>)",
        arn,
      );
    }
  }
  if (kmsKeyArns !== undefined && isLiteral(kmsKeyArns)) {
    for (const arn of kmsKeyArns) {
      if (isLiteral(arn) && !new RegExp(KMS_KEY_ARN_PATTERN).test(arn)) {
        reject("secrets_kms_key_arns", "KMS key ARNs", arn);
      }
    }
    if (
      kmsKeyArns.length > 0 &&
      secrets !== undefined &&
      isLiteral(secrets) &&
      entries.length === 0
    ) {
      reject("secrets_kms_key_arns", "none without secrets", kmsKeyArns);
    }
  }
}

/** An additional statement of the functions that run graphs (rendered as an IAM policy statement). */
export interface GraphPolicyStatement {
  /** `Allow` (default) or `Deny`. */
  effect?: "Allow" | "Deny";
  actions: string[];
  resources: string[];
  /** IAM condition block: operator => condition key => values. */
  condition?: Record<string, Record<string, string[]>>;
}

export function assertGraphPolicyStatements(
  statements: Record<string, GraphPolicyStatement> | undefined,
): void {
  for (const [sid, statement] of literalEntries(statements)) {
    if (!new RegExp(STATEMENT_ID_PATTERN).test(sid)) {
      reject("graph_policy_statements", "statement ids of letters and digits (IAM Sid)", sid);
    }
    if (!isLiteral(statement)) continue;
    const effect = statement.effect ?? "Allow";
    if (isLiteral(effect) && effect !== "Allow" && effect !== "Deny") {
      reject("graph_policy_statements", `effect Allow or Deny in ${sid}`, effect);
    }
    const actions = isLiteral(statement.actions) ? statement.actions : [];
    if (isLiteral(statement.actions) && actions.length === 0) {
      reject("graph_policy_statements", `at least one action in ${sid}`, actions);
    }
    for (const action of actions) {
      if (isLiteral(action) && !new RegExp(ACTION_PATTERN).test(action)) {
        reject(
          "graph_policy_statements",
          `actions like bedrock:InvokeModel in ${sid}, never *`,
          action,
        );
      }
    }
    if (isLiteral(statement.resources) && statement.resources.length === 0) {
      reject("graph_policy_statements", `at least one resource in ${sid}`, statement.resources);
    }
    const resources = isLiteral(statement.resources) ? statement.resources : [];
    if (
      effect === "Allow" &&
      resources.includes("*") &&
      actions.some((action) => isLiteral(action) && action.includes("*"))
    ) {
      reject("graph_policy_statements", `${WILDCARD_ON_WILDCARD_RULE} (${sid})`, actions);
    }
  }
}

export function assertGraphPolicyArns(arns: Record<string, string> | undefined): void {
  for (const [name, arn] of literalEntries(arns)) {
    if (isLiteral(arn) && !new RegExp(POLICY_ARN_PATTERN).test(arn)) {
      reject("graph_policy_arns", `an IAM policy ARN for ${name}`, arn);
    }
  }
}

export function assertCorsOrigins(value: string[], option = "cors_allow_origins"): void {
  if (!isLiteral(value)) return;
  for (const origin of value) {
    if (isLiteral(origin) && !new RegExp(CORS_ORIGIN_PATTERN).test(origin)) {
      reject(
        option,
        "https origins like https://app.example.com (http only for localhost or 127.0.0.1, never *)",
        origin,
      );
    }
  }
}

/** Subnets and security groups: both or neither, each id well formed (literal values only). */
export function assertVpc(
  subnetIds: string[] | undefined,
  securityGroupIds: string[] | undefined,
): void {
  const subnets = subnetIds ?? [];
  const groups = securityGroupIds ?? [];
  if (!isLiteral(subnets) || !isLiteral(groups)) return;
  if ((subnets.length === 0) !== (groups.length === 0)) {
    throw new InvalidConfigurationError(
      "vpc_subnet_ids",
      `expected subnets and security groups together (both or neither), got ${subnets.length} subnets and ${groups.length} security groups`,
    );
  }
  for (const [option, ids, pattern, shape] of [
    ["vpc_subnet_ids", subnets, SUBNET_ID_PATTERN, "subnet-<8 or 17 hex digits>"],
    ["vpc_security_group_ids", groups, SECURITY_GROUP_ID_PATTERN, "sg-<8 or 17 hex digits>"],
  ] as const) {
    for (const id of ids) {
      if (isLiteral(id) && !new RegExp(pattern).test(id)) {
        throw new InvalidConfigurationError(
          option,
          `expected ids like ${shape}, got ${JSON.stringify(id)}`,
        );
      }
    }
  }
}
