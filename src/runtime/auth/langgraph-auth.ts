import type { Auth } from "@langchain/langgraph-sdk/auth";
import { AuthRefusedError, InvalidConfigurationError } from "../../shared/errors";

/**
 * LangGraph's own authorization (`Auth` of `@langchain/langgraph-sdk/auth`, named by `auth.path` in
 * langgraph.json), honoured as LangGraph Server honours it: `authenticate` makes the request's user, and the
 * handlers registered with `on(resource:action)` stamp metadata on what is created and return the filters every
 * read applies. Here they run inside the tenant a verified credential named: no handler can change the tenant.
 */

/** An `Auth` instance, whatever the generic parameters the project gave it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type LangGraphAuth = Auth<any, any, any>;

/** The user the handlers see (`user` of every `on` handler), as LangGraph Server makes it. */
export interface AuthUser {
  identity: string;
  permissions: string[];
  display_name: string;
  is_authenticated: boolean;
  [key: string]: unknown;
}

/** What an `on` handler returns to narrow reads: metadata keys to values (`$eq`), or lists that must hold one. */
export type AuthFilters = Record<string, string | { $eq?: string; $contains?: string | string[] }>;

/** The credential the tenant came from, verified before any handler runs. */
export interface VerifiedCredential {
  tenantId: string;
  /** The JWT's `sub`, or the API key's subject; "" when the credential names none. */
  subject: string;
  kind: "jwt" | "api-key";
  /** The verified JWT's claims (as the authorizer passed them on); empty for an API key. */
  claims: Record<string, unknown>;
}

/** A resource event of LangGraph's auth (`threads:read`, `store:put`, ...). */
export type AuthEvent = `${"threads" | "assistants" | "crons" | "store"}:${string}`;

type Handler = (parameter: Record<string, unknown>) => unknown;
interface HandlerCache {
  authenticate?: (request: Request, credential?: VerifiedCredential) => unknown;
  callbacks?: Record<string, Handler>;
}

function handlersOf(auth: LangGraphAuth): HandlerCache {
  return (auth as unknown as { "~handlerCache": HandlerCache })["~handlerCache"];
}

/** True for an `Auth` instance, from this copy of the SDK or the project's own. */
export function isLangGraphAuth(value: unknown): value is LangGraphAuth {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Record<string, unknown>)["~handlerCache"] === "object"
  );
}

/** `value` as an `Auth` instance, or InvalidConfigurationError naming `field`. */
export function checkLangGraphAuth(value: unknown, field: string): LangGraphAuth {
  if (!isLangGraphAuth(value)) {
    throw new InvalidConfigurationError(
      field,
      "expected an instance of Auth from @langchain/langgraph-sdk/auth",
    );
  }
  return value;
}

/**
 * The request's user: `authenticate`'s answer (a string, or an object with `identity`), or, without an
 * `authenticate` handler, the credential's subject with the JWT's `scope` claim as permissions. An
 * `HTTPException` it throws refuses the request with its status (AuthRefusedError); any other error is the
 * server's (500 with an error id).
 */
export async function authenticateRequest(
  auth: LangGraphAuth,
  request: Request,
  credential: VerifiedCredential,
): Promise<AuthUser> {
  const authenticate = handlersOf(auth).authenticate;
  if (!authenticate) return credentialUser(credential);
  let answer: unknown;
  try {
    answer = await authenticate(request, credential);
  } catch (error) {
    throw refusalOf(error);
  }
  if (typeof answer === "string" && answer !== "") {
    return { identity: answer, permissions: [], display_name: answer, is_authenticated: true };
  }
  if (typeof answer === "object" && answer !== null) {
    const fields = answer as Record<string, unknown>;
    if (typeof fields.identity === "string" && fields.identity !== "") {
      const permissions = Array.isArray(fields.permissions)
        ? fields.permissions.filter((p): p is string => typeof p === "string")
        : [];
      return {
        ...fields,
        identity: fields.identity,
        permissions,
        display_name:
          typeof fields.display_name === "string" ? fields.display_name : fields.identity,
        is_authenticated:
          typeof fields.is_authenticated === "boolean" ? fields.is_authenticated : true,
      };
    }
  }
  throw new TypeError(
    "Invalid authenticate result: expected a non-empty string or an object with a non-empty identity",
  );
}

function credentialUser(credential: VerifiedCredential): AuthUser {
  if (credential.subject === "") {
    throw new AuthRefusedError(
      403,
      "Forbidden: the credential names no user (a JWT without sub), and the auth handlers need one",
    );
  }
  const scope = credential.claims.scope;
  const permissions = typeof scope === "string" ? scope.split(" ").filter(Boolean) : [];
  return {
    identity: credential.subject,
    permissions,
    display_name: credential.subject,
    is_authenticated: true,
    kind: credential.kind,
  };
}

/**
 * Runs the `on` handler of `event` (the most specific registered: `resource:action`, `resource`, `*:action`,
 * `*`), which may change `value` in place (metadata to stamp). Its filters, or undefined when it has none or no
 * handler applies; `false` refuses with 403, as LangGraph Server does.
 */
export async function authorizeEvent(
  auth: LangGraphAuth,
  user: AuthUser,
  event: AuthEvent,
  value: Record<string, unknown>,
): Promise<AuthFilters | undefined> {
  const callbacks = handlersOf(auth).callbacks ?? {};
  const [resource, action] = event.split(":") as [string, string];
  const key = [event, resource, `*:${action}`, "*"].find((candidate) =>
    Object.hasOwn(callbacks, candidate),
  );
  if (key === undefined) return undefined;
  let result: unknown;
  try {
    result = await callbacks[key]!({
      event,
      resource,
      action,
      value,
      user,
      permissions: user.permissions,
    });
  } catch (error) {
    throw refusalOf(error);
  }
  if (result === undefined || result === null || result === true) return undefined;
  if (result === false) throw new AuthRefusedError(403, "Forbidden");
  if (typeof result !== "object" || Array.isArray(result)) {
    throw new TypeError(
      `Invalid result of the ${key} auth handler: expected a filter object, a boolean or nothing, got a ${typeof result}`,
    );
  }
  return result as AuthFilters;
}

/** An `HTTPException` (duck-typed: the project may load its own copy of the SDK) as a refusal; others as they are. */
function refusalOf(error: unknown): unknown {
  if (typeof error !== "object" || error === null) return error;
  const { status, headers, message } = error as Record<string, unknown>;
  if (typeof status !== "number" || !("headers" in error)) return error;
  if (!Number.isInteger(status) || status < 400 || status > 599) return error;
  return new AuthRefusedError(
    status,
    typeof message === "string" && message !== "" ? message : "Forbidden",
    headersOf(headers),
    { cause: error },
  );
}

function headersOf(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  try {
    const headers: Record<string, string> = {};
    new Headers(value as ConstructorParameters<typeof Headers>[0]).forEach((field, name) => {
      headers[name] = field;
    });
    return headers;
  } catch {
    return {};
  }
}

/**
 * The metadata a filter asks for, as a JSON containment pattern (what the stores' own metadata filters take): a
 * value or `$eq` is that value, `$contains` a list holding it (or all of them), as LangGraph Server matches.
 */
export function filterPattern(filters: AuthFilters): Record<string, unknown> {
  const pattern: Record<string, unknown> = {};
  for (const [key, condition] of Object.entries(filters)) {
    if (typeof condition === "string") pattern[key] = condition;
    else if (condition.$eq !== undefined) pattern[key] = condition.$eq;
    else if (condition.$contains !== undefined) {
      pattern[key] = Array.isArray(condition.$contains)
        ? [...condition.$contains]
        : [condition.$contains];
    }
  }
  return pattern;
}

/**
 * Both patterns in one (a record must contain each), or undefined when no record can: the same key asked to
 * hold two different values. Lists merge (each element must be held).
 */
export function mergePatterns(
  own: Record<string, unknown> | undefined,
  required: Record<string, unknown>,
): Record<string, unknown> | undefined {
  const merged: Record<string, unknown> = { ...own };
  for (const [key, value] of Object.entries(required)) {
    if (!Object.hasOwn(merged, key)) {
      merged[key] = value;
      continue;
    }
    const existing = merged[key];
    if (Array.isArray(existing) && Array.isArray(value)) merged[key] = [...existing, ...value];
    else if (existing !== value) return undefined;
  }
  return merged;
}
