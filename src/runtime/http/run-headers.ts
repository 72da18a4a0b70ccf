/**
 * Request headers a run's graph sees in `config.configurable`, as LangGraph Server gives them: every `x-*`
 * header and `user-agent`, by lowercase name, over the same keys of the body's `configurable` (the assistant's
 * come under both). A client can so pass per-request context (a request id, a caller's locale) without a body
 * field.
 *
 * Never credentials, nor what the AWS edge adds: `x-api-key` (and the reference's other key headers), every
 * `x-amz-*` / `x-amzn-*` header (API Gateway's and function URLs' own, SigV4's `x-amz-security-token`) and every
 * `x-forwarded-*` header (the caller's address, set by the proxy, not the client). `authorization` and `cookie`
 * are not `x-*` headers and are never copied. A run's config is stored with the run and readable by every node,
 * tool and tracer: nothing secret may reach it.
 */

/** Headers LangGraph Server keeps out of a run's config, and the ones this project's edge adds or trusts. */
const WITHHELD_HEADERS: ReadonlySet<string> = new Set([
  "x-api-key",
  "x-tenant-id",
  "x-service-key",
]);
const WITHHELD_PREFIXES: readonly string[] = ["x-amz-", "x-amzn-", "x-forwarded-"];

/** The `configurable` entries a request's headers give its run (an empty object when none). */
export function configurableFromHeaders(
  headers: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const [rawName, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const name = rawName.toLowerCase();
    if (name === "user-agent" || (name.startsWith("x-") && !isWithheld(name))) {
      entries[name] = value;
    }
  }
  return entries;
}

function isWithheld(name: string): boolean {
  return WITHHELD_HEADERS.has(name) || WITHHELD_PREFIXES.some((prefix) => name.startsWith(prefix));
}
