import type { JWTPayload } from "jose";
import { InvalidConfigurationError } from "../shared/errors";
import type { HandlerOptions } from "./assembly";
import { readRuntimeConfig } from "./config";
import { presentedToken } from "./credentials";
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
  const handler = createHandler({ ...options, environment });
  return async (event, responseStream, context) => {
    const withMetadata = options.withHttpMetadata ?? runtimeHttpMetadata();
    const token = presentedToken(header(event, "authorization"), header(event, "x-api-key"));
    // The verifier reads an Authorization header: a token sent as X-Api-Key is verified exactly as a bearer one.
    const claims = token === undefined ? undefined : await verify(`Bearer ${token}`);
    const result = claims ? await handler.open(authorized(event, claims), context) : unauthorized();
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
