import { sleep } from "../shared/sleep";
/**
 * Backoff for requests DynamoDB refuses for now: throttling errors and unprocessed batch entries are retried
 * with capped exponential backoff and full jitter; only a persistent refusal reaches the caller.
 */
export const MAX_ATTEMPTS = 10;
const BASE_DELAY_MS = 20;
const MAX_DELAY_MS = 2_000;

const THROTTLING_ERRORS = new Set([
  "ProvisionedThroughputExceededException",
  "ThrottlingException",
  "RequestLimitExceeded",
  "TooManyRequestsException",
]);

export function isThrottlingError(error: unknown): boolean {
  return error instanceof Error && THROTTLING_ERRORS.has(error.name);
}

export function backoffDelay(attempt: number): number {
  return Math.random() * Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** attempt);
}

/** Runs `operation`, retrying throttling errors with backoff. */
export async function withThrottlingRetry<T>(operation: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await operation();
    } catch (error) {
      if (!isThrottlingError(error) || attempt + 1 >= MAX_ATTEMPTS) throw error;
      await sleep(backoffDelay(attempt));
    }
  }
}
