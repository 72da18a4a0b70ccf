import type { HttpEvent } from "./http/http";
import {
  authenticateRequest,
  type LangGraphAuth,
  type VerifiedCredential,
} from "./auth/langgraph-auth";
import { RequestAccess } from "./auth/request-access";

/**
 * The bridge between the verified credential and the project's `auth` handlers: the request as `authenticate`
 * sees it (a WHATWG `Request`, as LangGraph Server gives it), and the credential the tenant came from. API
 * Gateway's authorizer, the function URL's own verification and the dev server all hand the handler the same
 * event, so `authenticate` gets the same inputs on every door.
 */

const credentials = new WeakMap<Request, VerifiedCredential>();

/**
 * What the authorizer verified for the request `authenticate` was given: the tenant, the subject (the JWT's `sub`,
 * the API key's subject), the credential's kind and the JWT's claims. Undefined for any other request.
 */
export function verifiedCredential(request: Request): VerifiedCredential | undefined {
  return credentials.get(request);
}

/** The request's access: its user as the project's handlers make it, inside the verified tenant. */
export async function requestAccess(
  auth: LangGraphAuth,
  event: HttpEvent,
  path: string,
  tenantId: string,
): Promise<RequestAccess> {
  const credential = credentialOf(event, tenantId);
  const request = requestOf(event, path);
  credentials.set(request, credential);
  return new RequestAccess(auth, await authenticateRequest(auth, request, credential));
}

/** The credential as the authorizer passed it on: JWT claims, or the Lambda authorizer's context. */
function credentialOf(event: HttpEvent, tenantId: string): VerifiedCredential {
  const authorizer = event.requestContext?.authorizer as
    { jwt?: { claims?: Record<string, unknown> }; lambda?: Record<string, unknown> } | undefined;
  if (authorizer?.lambda) {
    const { subject, credential } = authorizer.lambda;
    return {
      tenantId,
      subject: typeof subject === "string" ? subject : "",
      kind: credential === "jwt" ? "jwt" : "api-key",
      claims: {},
    };
  }
  const claims = { ...authorizer?.jwt?.claims };
  return {
    tenantId,
    subject: typeof claims.sub === "string" ? claims.sub : "",
    kind: "jwt",
    claims,
  };
}

/** The event as a `Request`: method, URL (host, path and query), headers and cookies, and the body. */
function requestOf(event: HttpEvent, path: string): Request {
  const host = event.requestContext?.domainName ?? event.headers?.host ?? "localhost";
  const query = event.rawQueryString ? `?${event.rawQueryString}` : "";
  const headers = new Headers();
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value !== undefined) headers.set(name, value);
  }
  if (event.cookies?.length) headers.set("cookie", event.cookies.join("; "));
  const method = event.requestContext?.http?.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD" && event.body !== undefined;
  // A Host header that makes no URL (the dev server takes any) must not fail the request: the path still counts.
  const url = URL.canParse(`https://${host}${path}${query}`)
    ? `https://${host}${path}${query}`
    : `https://localhost${encodeURI(path)}${query}`;
  return new Request(url, {
    method,
    headers,
    ...(hasBody
      ? { body: event.isBase64Encoded ? Buffer.from(event.body!, "base64") : event.body! }
      : {}),
  });
}
