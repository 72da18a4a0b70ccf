import type { JWTPayload } from "jose";
import { assertTenantId } from "../../shared/identifiers";
import { presentedCredential } from "../credentials";
import type { ApiKeyVerifier } from "./api-keys";

/** What API Gateway sends a Lambda REQUEST authorizer of an HTTP API (payload 2.0): the part read here. */
export interface AuthorizerEvent {
  headers?: Record<string, string | undefined>;
}

/**
 * The identity an authorizer hands the API function, under `requestContext.authorizer.lambda` (strings only, as
 * API Gateway passes simple responses' context on). The handler takes the tenant from here and nowhere else.
 */
export interface AuthorizerContext {
  tenant_id: string;
  subject: string;
  /** `jwt` or `api-key`: which credential the request was authorized by. */
  credential: "jwt" | "api-key";
  [key: string]: string;
}

/** A simple response (`enableSimpleResponses`): API Gateway answers 403 to `isAuthorized: false`. */
export interface AuthorizerResult {
  isAuthorized: boolean;
  context?: AuthorizerContext;
}

export interface RequestAuthorizerOptions {
  /** Verifies a JWT (`Authorization: Bearer`, or `X-Api-Key` from browser UIs); undefined: JWTs are refused. */
  verifyJwt?: (authorization: string) => Promise<JWTPayload | undefined>;
  /** Verifies an API key; undefined: API keys are refused. */
  verifyApiKey?: ApiKeyVerifier;
  /** The JWT claim holding the tenant (`custom:tenant_id` by default). */
  tenantClaim: string;
}

/**
 * One authorizer for both credentials (an HTTP API route has one authorizer): a JWT checked as API Gateway's JWT
 * authorizer does, or an API key checked against its stored hash. Resolves the caller's tenant and subject, or
 * refuses: no credential, two that disagree, a bad one, or a JWT without a well-formed tenant claim.
 */
export function createRequestAuthorizer(
  options: RequestAuthorizerOptions,
): (event: AuthorizerEvent) => Promise<AuthorizerResult> {
  return async (event) => {
    const credential = presentedCredential(
      header(event, "authorization"),
      header(event, "x-api-key"),
    );
    const identity = credential ? await identify(credential, options) : undefined;
    return identity ? { isAuthorized: true, context: identity } : { isAuthorized: false };
  };
}

async function identify(
  credential: NonNullable<ReturnType<typeof presentedCredential>>,
  options: RequestAuthorizerOptions,
): Promise<AuthorizerContext | undefined> {
  if (credential.kind === "api-key") {
    const key = options.verifyApiKey ? await options.verifyApiKey(credential.key) : undefined;
    return key && { tenant_id: key.tenantId, subject: key.subject, credential: "api-key" };
  }
  const claims = options.verifyJwt
    ? await options.verifyJwt(`Bearer ${credential.token}`)
    : undefined;
  const tenant = claims && tenantOf(claims, options.tenantClaim);
  if (!claims || tenant === undefined) return undefined;
  return {
    tenant_id: tenant,
    subject: typeof claims.sub === "string" ? claims.sub : "",
    credential: "jwt",
  };
}

function tenantOf(claims: JWTPayload, claim: string): string | undefined {
  const value = Object.hasOwn(claims, claim) ? claims[claim] : undefined;
  try {
    return assertTenantId(value);
  } catch {
    return undefined;
  }
}

function header(event: AuthorizerEvent, name: string): string | undefined {
  const headers = event.headers ?? {};
  return headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
}
