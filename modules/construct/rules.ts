import { Token } from "../cdktf";
import { InvalidConfigurationError } from "../../src/shared/errors";

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

/** The retention values CloudWatch Logs accepts (0, "never expire", is deliberately not offered). */
export const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288,
  3653,
] as const;

/** Environment variable names that suggest a secret: secrets belong in Secrets Manager, not in configuration. */
export const SECRET_NAME_PATTERN =
  "(?i)(secret|password|passwd|token|private_key|api_key|credential)";
const SECRET_NAME_REGEXP = /(secret|password|passwd|token|private_key|api_key|credential)/i;

/** CORS origins: https only (a browser origin over http is readable by anyone on the path), http for local dev. */
export const CORS_ORIGIN_PATTERN =
  "^(https://[^*\\s/]+|http://(localhost|127\\.0\\.0\\.1)(:[0-9]{1,5})?)$";

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

export function assertName(value: string): void {
  if (isLiteral(value) && !new RegExp(NAME_PATTERN).test(value)) {
    reject("name", "3-40 lowercase letters, digits or hyphens, starting with a letter", value);
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

export function assertLogRetention(value: number): void {
  if (isLiteral(value) && !(LOG_RETENTION_DAYS as readonly number[]).includes(value)) {
    reject("log_retention_in_days", `one of ${LOG_RETENTION_DAYS.join(", ")}`, value);
  }
}

export function assertEnvironment(value: Record<string, string>): void {
  if (!isLiteral(value)) return;
  for (const key of Object.keys(value)) {
    if (SECRET_NAME_REGEXP.test(key)) {
      reject("environment", "no variable whose name suggests a secret", key);
    }
  }
}

export function assertCorsOrigins(value: string[]): void {
  if (!isLiteral(value)) return;
  for (const origin of value) {
    if (isLiteral(origin) && !new RegExp(CORS_ORIGIN_PATTERN).test(origin)) {
      reject(
        "cors_allow_origins",
        "https origins like https://app.example.com (http only for localhost or 127.0.0.1, never *)",
        origin,
      );
    }
  }
}
