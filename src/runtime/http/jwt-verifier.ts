import type { JWTPayload, JWTVerifyGetKey } from "jose";
import { createRemoteJWKSet } from "jose/jwks/remote";
import { jwtVerify } from "jose/jwt/verify";
import { InvalidConfigurationError } from "../../shared/errors";

/** Who may call: the tokens' issuer (Cognito user pool or any OIDC issuer) and the audiences accepted. */
export interface JwtVerifierOptions {
  /** `iss` of accepted tokens, e.g. `https://cognito-idp.<region>.amazonaws.com/<pool id>`. */
  issuer: string;
  /** Accepted `aud` (ID tokens) or `client_id` (Cognito access tokens) values, as API Gateway accepts them. */
  audiences: readonly string[];
  /** The issuer's key set (default: `<issuer>/.well-known/jwks.json`, where Cognito and most issuers serve it). */
  jwksUri?: string;
  /** A key set to verify with instead of fetching one (tests). */
  keys?: JWTVerifyGetKey;
}

/** Asymmetric signatures only: a token signed with a shared secret is never accepted. */
const ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "ES256",
  "ES384",
  "ES512",
  "PS256",
  "PS384",
  "PS512",
];

/**
 * Verifies `Authorization: Bearer <jwt>` as API Gateway's JWT authorizer does, inside the function (a Lambda
 * function URL has no authorizer): signature against the issuer's published keys (fetched once per container,
 * refetched on an unknown key id, at most every 30 s), `iss`, `exp` (required) and `nbf`, and an audience: `aud`
 * or, for Cognito access tokens, `client_id`. Resolves the claims, or undefined where API Gateway answers 401.
 */
export function createJwtVerifier(
  options: JwtVerifierOptions,
): (authorization: string | undefined) => Promise<JWTPayload | undefined> {
  const issuer = checkIssuer(options.issuer);
  if (options.audiences.length === 0 || options.audiences.some((a) => a.trim() === "")) {
    throw new InvalidConfigurationError("JWT_AUDIENCE", "expected at least one audience, got none");
  }
  const keys =
    options.keys ??
    createRemoteJWKSet(
      new URL(options.jwksUri ?? `${issuer.replace(/\/$/, "")}/.well-known/jwks.json`),
      {
        cooldownDuration: 30_000,
        cacheMaxAge: 10 * 60_000,
      },
    );
  const audiences = new Set(options.audiences);
  return async (authorization) => {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? "");
    if (!match) return undefined;
    try {
      const { payload } = await jwtVerify(match[1]!, keys, {
        issuer,
        algorithms: ALGORITHMS,
        requiredClaims: ["exp"],
      });
      // As API Gateway's JWT authorizer: `aud` when the token has one, `client_id` (Cognito access tokens) only
      // when it has none, so a token for another audience is refused whatever its client_id.
      const named =
        payload.aud !== undefined
          ? Array.isArray(payload.aud)
            ? payload.aud
            : [payload.aud]
          : typeof payload.client_id === "string"
            ? [payload.client_id]
            : [];
      return named.some((audience) => audiences.has(audience)) ? payload : undefined;
    } catch {
      // Any failure (signature, expiry, an unreachable key set) is a refusal, as the authorizer's.
      return undefined;
    }
  };
}

function checkIssuer(issuer: string): string {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new InvalidConfigurationError(
      "JWT_ISSUER",
      `expected an https:// URL, got ${JSON.stringify(issuer)}`,
    );
  }
  // The key set is fetched from the issuer: plain http only on this machine (tests, local issuers).
  const local = url.hostname === "localhost" || url.hostname === "127.0.0.1";
  if (url.protocol !== "https:" && !(url.protocol === "http:" && local)) {
    throw new InvalidConfigurationError(
      "JWT_ISSUER",
      `expected an https:// URL, got ${JSON.stringify(issuer)}`,
    );
  }
  return issuer;
}
