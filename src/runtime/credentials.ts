import { isApiKey } from "./auth/api-key-format";

/**
 * The JWT a request presents, from `Authorization: Bearer <jwt>` or from `X-Api-Key: <jwt>`: browser UIs built on
 * the LangGraph SDK (Agent Chat UI, Agent Inbox, Studio) can send a credential only as `X-Api-Key` (the SDK's
 * `apiKey`), so the same token is accepted there and verified the same way. Both headers sent: they must carry the
 * same token, or neither counts (a request is never authorized by one credential while carrying another).
 * Undefined: no token, a malformed header, or two that disagree; the caller answers 401.
 */
export function presentedToken(
  authorization: string | undefined,
  apiKey: string | undefined,
): string | undefined {
  const bearer =
    authorization === undefined ? undefined : (/^Bearer\s+(\S+)$/i.exec(authorization)?.[1] ?? "");
  const key = apiKey === undefined ? undefined : (/^\s*(\S+)\s*$/.exec(apiKey)?.[1] ?? "");
  // "": a header that is there but carries no usable token, which refuses the request as a wrong one would.
  if (bearer === "" || key === "") return undefined;
  if (bearer !== undefined && key !== undefined && bearer !== key) return undefined;
  return bearer ?? key;
}

/** A credential as presented: a JWT, or one of Memory Table's API keys (`mt_…`, see auth/api-keys.ts). */
export type PresentedCredential = { kind: "jwt"; token: string } | { kind: "api-key"; key: string };

/**
 * The credential of a request, from either header (as {@link presentedToken}): an API key when it has the shape
 * of one (a JWT never starts with `mt_`), else a JWT. Undefined where the caller answers 401.
 */
export function presentedCredential(
  authorization: string | undefined,
  apiKey: string | undefined,
): PresentedCredential | undefined {
  const token = presentedToken(authorization, apiKey);
  if (token === undefined) return undefined;
  return isApiKey(token) ? { kind: "api-key", key: token } : { kind: "jwt", token };
}
