import type { JWTPayload } from "jose";
import { InvalidConfigurationError } from "../shared/errors";
import type { HandlerOptions } from "./assembly";
import { readRuntimeConfig } from "./config";
import type { ApiKeyIdentity, ApiKeyVerifier } from "./auth/api-keys";
import type { AuthorizerContext } from "./auth/authorizer";
import { presentedCredential } from "./credentials";
import { createHandler } from "./handler";
import type { HttpEvent, HttpResult } from "./http/http";
import { createJwtVerifier, type JwtVerifierOptions } from "./http/jwt-verifier";
import type { HandlerContext } from "./types";

/** What Lambda's response streaming hands a handler: a writable stream, ended once the response is complete. */
export interface ResponseStream {
  write(chunk: string | Uint8Array): unknown;
  end(): void;
  on(event: "close" | "error", listener: () => void): unknown;
}

/** `awslambda.HttpResponseStream.from`: the stream a function URL reads its status and headers from first. */
export type WithHttpMetadata = (
  stream: ResponseStream,
  metadata: { statusCode: number; headers: Record<string, string> },
) => ResponseStream;

/** A Lambda function URL event (payload 2.0): an HTTP API event without an authorizer. */
export type FunctionUrlEvent = Omit<HttpEvent, "requestContext"> & {
  requestContext: Omit<HttpEvent["requestContext"], "authorizer" | "stage"> & { stage?: string };
};

export type StreamingHandler = (
  event: FunctionUrlEvent,
  responseStream: ResponseStream,
  context?: HandlerContext,
) => Promise<void>;

export interface FunctionUrlOptions extends HandlerOptions {
  /** Who may call (default from JWT_ISSUER and JWT_AUDIENCE; one of the two is required). */
  jwt?: JwtVerifierOptions;
  /** Default: the Lambda runtime's `awslambda.HttpResponseStream.from`. */
  withHttpMetadata?: WithHttpMetadata;
  /**
   * Verifies API keys (`X-Api-Key: mt_…`). Default: one on the table (TABLE_NAME) with the environment's
   * API_KEY_CACHE_SECONDS; without a table, or `false`, API keys are refused.
   */
  apiKeys?: ApiKeyVerifier | false;
}

/**
 * The whole API from a Lambda function URL in RESPONSE_STREAM mode (wrapped by `awslambda.streamifyResponse`):
 * the same routes and answers as behind API Gateway, streamed routes as their events come, runs with the
 * function's whole time (up to 15 minutes). A function URL has no JWT authorizer: the token (`Authorization:
 * Bearer <jwt>`, or the same JWT as `X-Api-Key`, what browser UIs send) is verified here, as API Gateway's
 * authorizer would (401 before the handler runs, the body of an unauthenticated request never parsed), and its
 * claims reach the handler exactly where the authorizer puts them.
 */
export function createFunctionUrlHandler(options: FunctionUrlOptions): StreamingHandler {
  const environment = options.environment ?? readRuntimeConfig(process.env);
  const jwt = options.jwt ?? environment.jwt;
  if (!jwt) {
    throw new InvalidConfigurationError(
      "JWT_ISSUER",
      "expected the issuer and audiences of accepted tokens (JWT_ISSUER, JWT_AUDIENCE): a function URL has no authorizer",
    );
  }
  const verify = createJwtVerifier(jwt);
  const tableName = options.tableName ?? environment.tableName;
  const verifyApiKey =
    options.apiKeys === false
      ? undefined
      : (options.apiKeys ??
        (tableName === undefined
          ? undefined
          : loadTableApiKeys().openApiKeyVerifier({
              tableName,
              client: options.dynamodbClient,
              endpoint: environment.dynamodbEndpoint,
              cacheSeconds: environment.apiKeyCacheSeconds,
            })));
  const handler = createHandler({ ...options, environment });
  return async (event, responseStream, context) => {
    const withMetadata = options.withHttpMetadata ?? runtimeHttpMetadata();
    const credential = presentedCredential(
      header(event, "authorization"),
      header(event, "x-api-key"),
    );
    let authorizedEvent: HttpEvent | undefined;
    if (credential?.kind === "api-key") {
      const identity = verifyApiKey ? await verifyApiKey(credential.key) : undefined;
      if (identity) authorizedEvent = authorizedByKey(event, identity);
    } else if (credential) {
      // The verifier reads an Authorization header: a token sent as X-Api-Key is verified exactly as a bearer one.
      const claims = await verify(`Bearer ${credential.token}`);
      if (claims) authorizedEvent = authorized(event, claims);
    }
    const result = authorizedEvent ? await handler.open(authorizedEvent, context) : unauthorized();
    const body = withMetadata(responseStream, {
      statusCode: result.statusCode,
      headers: result.headers,
    });
    if (!result.stream) {
      // Written even when empty (a 204): the runtime sends the status and headers just before the first write,
      // so a stream ended without one reaches the function URL with no status at all.
      body.write(
        result.body === undefined
          ? ""
          : result.isBase64Encoded
            ? Buffer.from(result.body, "base64")
            : result.body,
      );
      body.end();
      return;
    }
    let gone = false;
    responseStream.on("close", () => {
      gone = true;
      result.clientGone?.();
    });
    responseStream.on("error", () => {
      gone = true;
      result.clientGone?.();
    });
    let wrote = false;
    try {
      for await (const chunk of result.stream) {
        if (gone) break;
        body.write(chunk);
        wrote = true;
      }
    } finally {
      // As above: a stream that yielded nothing still owes the client its status and headers; and the response
      // ends whatever happened, or the function URL holds the connection until the function times out.
      if (!wrote && !gone) body.write("");
      body.end();
    }
  };
}

/** The event as API Gateway's JWT authorizer hands it on: the verified claims under `authorizer.jwt`. */
function authorized(event: FunctionUrlEvent, claims: JWTPayload): HttpEvent {
  return {
    ...event,
    requestContext: {
      ...event.requestContext,
      stage: event.requestContext.stage ?? "$default",
      authorizer: { principalId: "", integrationLatency: 0, jwt: { claims, scopes: [] } },
    },
  } as unknown as HttpEvent;
}

/** The event as the Lambda authorizer (auth/authorizer.ts) hands on an API key's identity: `authorizer.lambda`. */
function authorizedByKey(event: FunctionUrlEvent, identity: ApiKeyIdentity): HttpEvent {
  const context: AuthorizerContext = {
    tenant_id: identity.tenantId,
    subject: identity.subject,
    credential: "api-key",
  };
  return {
    ...event,
    requestContext: {
      ...event.requestContext,
      stage: event.requestContext.stage ?? "$default",
      authorizer: { principalId: "", integrationLatency: 0, lambda: context },
    },
  } as unknown as HttpEvent;
}

/** Loaded on demand: a function URL without a table never loads the DynamoDB client for API keys. */
function loadTableApiKeys(): typeof import("./auth/table-api-keys") {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- on-demand loading, see above
  return require("./auth/table-api-keys");
}

function unauthorized(): HttpResult {
  return {
    statusCode: 401,
    headers: {
      "content-type": "application/json",
      "www-authenticate": 'Bearer error="invalid_token"',
    },
    body: JSON.stringify({ message: "Unauthorized" }),
  };
}

function header(event: FunctionUrlEvent, name: string): string | undefined {
  const headers = event.headers ?? {};
  return headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
}

function runtimeHttpMetadata(): WithHttpMetadata {
  const runtime = (
    globalThis as unknown as { awslambda?: { HttpResponseStream?: { from: WithHttpMetadata } } }
  ).awslambda;
  if (!runtime?.HttpResponseStream) {
    throw new InvalidConfigurationError(
      "handler",
      "expected the Lambda runtime's response streaming (awslambda.HttpResponseStream): run it under aws-lambda-ric or Lambda",
    );
  }
  return (stream, metadata) => runtime.HttpResponseStream!.from(stream, metadata);
}
