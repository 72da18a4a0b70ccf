/**
 * Limits the runtime enforces and the Terraform module states and validates: one place for both, so a module
 * input can never promise what the runtime refuses.
 */

/** Time kept free at the end of a worker invocation to record how a leg ended and hand over. */
export const WORKER_END_MARGIN_MS = 10_000;

/** Legs one background run may take (MAX_RUN_LEGS, the module's `max_run_legs`). */
export const MAX_RUN_LEGS_RANGE = { min: 1, max: 999 } as const;

/**
 * A quiet Server-Sent Events stream gets a keep-alive comment this often. The module's CloudFront distribution in
 * front of the stream URL (`stream_domain_name`) closes a response after its origin read timeout without a byte,
 * so that timeout must stay above this interval (a test holds the two apart).
 */
export const SSE_KEEP_ALIVE_MS = 15_000;
