import { randomUUID } from "node:crypto";

/**
 * Events as Lambda delivers them to the image: API Gateway HTTP API (payload 2.0) requests that passed the JWT
 * authorizer, and DynamoDB stream records.
 */
export interface HttpRequest {
  method: "GET" | "POST" | "DELETE";
  path: string;
  body?: unknown;
  /** The verified `custom:tenant_id` claim. */
  tenant: string;
  /** The verified `sub` claim (default `user-of-<tenant>`). */
  subject?: string;
}

export function apiGatewayEvent(request: HttpRequest): Record<string, unknown> {
  const now = Date.now();
  return {
    version: "2.0",
    routeKey: `${request.method} ${request.path}`,
    rawPath: request.path,
    rawQueryString: "",
    headers: {
      "content-type": "application/json",
      authorization: "Bearer <verified by API Gateway>",
    },
    requestContext: {
      accountId: "123456789012",
      apiId: "local",
      domainName: "local.execute-api.us-east-1.amazonaws.com",
      domainPrefix: "local",
      http: {
        method: request.method,
        path: request.path,
        protocol: "HTTP/1.1",
        sourceIp: "127.0.0.1",
        userAgent: "memory-table-test",
      },
      requestId: randomUUID(),
      routeKey: `${request.method} ${request.path}`,
      stage: "$default",
      time: new Date(now).toUTCString(),
      timeEpoch: now,
      authorizer: {
        jwt: {
          claims: {
            sub: request.subject ?? `user-of-${request.tenant}`,
            "custom:tenant_id": request.tenant,
            iss: "https://issuer.local",
            aud: "memory-table",
            exp: String(Math.floor(now / 1000) + 3600),
          },
          scopes: null,
        },
      },
    },
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
    isBase64Encoded: false,
  };
}

export interface StreamRemoval {
  pk: string;
  sk: string;
  /** True for a TTL deletion (the DynamoDB service principal), false for an application's DeleteItem. */
  byTtl: boolean;
}

export function dynamodbStreamEvent(removals: StreamRemoval[]): Record<string, unknown> {
  return {
    Records: removals.map((removal, index) => ({
      eventID: randomUUID(),
      eventName: "REMOVE",
      eventVersion: "1.1",
      eventSource: "aws:dynamodb",
      awsRegion: "us-east-1",
      dynamodb: {
        ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
        Keys: { pk: { S: removal.pk }, sk: { S: removal.sk } },
        SequenceNumber: String(1000 + index),
        SizeBytes: 64,
        StreamViewType: "KEYS_ONLY",
      },
      ...(removal.byTtl
        ? { userIdentity: { type: "Service", principalId: "dynamodb.amazonaws.com" } }
        : {}),
      eventSourceARN:
        "arn:aws:dynamodb:us-east-1:123456789012:table/memory-table/stream/2026-01-01T00:00:00.000",
    })),
  };
}

/** The parsed JSON body of an API Gateway result. */
export function resultBody(result: unknown): Record<string, unknown> {
  const body = (result as { body?: string }).body;
  return body ? (JSON.parse(body) as Record<string, unknown>) : {};
}
