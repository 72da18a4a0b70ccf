import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { QueryCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { Client } from "@langchain/langgraph-sdk";
import pino from "pino";
import { InMemorySaver } from "../../src/checkpoint/memory";
import { loadDevKeys, signDevToken, type DevKeys } from "../../src/dev/auth";
import { startDevServer, type DevServerOptions, type RunningDevServer } from "../../src/dev/server";
import { buildBookingGraph, type BookingStateValues } from "../../src/examples/booking";
import { createHandler, type ApiHandler, type HandlerOptions } from "../../src/runtime/handler";
import type { HttpEvent } from "../../src/runtime/http/http";
import type { GraphFactory } from "../../src/runtime/types";
import { threadPartitionKey } from "../../src/table/keys";
import { createLocalClient, createTestTable } from "../support/dynamodb";
import { CURRENT_SDK, type SdkMajor } from "../support/sdk-majors";

export const quietLogger = pino({ level: "silent" });

/** The booking assistant with a hook on its irreversible side effect. */
export function bookingAssistants(
  onBooked?: (state: BookingStateValues) => void | Promise<void>,
): Record<string, GraphFactory> {
  return { booking: ({ checkpointer }) => buildBookingGraph({ checkpointer, onBooked }) };
}

export type Backend = "memory" | "dynamodb";

export interface TableHandle {
  client: DynamoDBClient;
  tableName: string;
}

export async function createTable(): Promise<TableHandle> {
  const client = createLocalClient();
  return { client, tableName: await createTestTable(client) };
}

/** A DynamoDB Local client that records the operation of every request it sends, in order. */
export function recordingClient(): { client: DynamoDBClient; sent: string[] } {
  const client = createLocalClient();
  const sent: string[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      sent.push((context.commandName ?? "").replace(/Command$/, ""));
      return next(args);
    },
    { step: "initialize", name: "recordOperations" },
  );
  return { client, sent };
}

/** How many items a thread's partition holds in `table` (its record, checkpoints, runs), read consistently. */
export async function partitionItemCount(
  table: TableHandle,
  tenantId: string,
  threadId: string,
): Promise<number> {
  const result = await table.client.send(
    new QueryCommand({
      TableName: table.tableName,
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": { S: threadPartitionKey(tenantId, threadId) } },
      ConsistentRead: true,
    }),
  );
  return result.Items?.length ?? 0;
}

/** A handler serving the booking assistant from `table` through `client`. */
export function bookingHandlerOn(table: TableHandle, client: DynamoDBClient): ApiHandler {
  return createHandler({
    tableName: table.tableName,
    dynamodbClient: client,
    logger: quietLogger,
    metrics: false,
    assistants: bookingAssistants(),
  });
}

/** Handler options for a backend: the bounded in-memory saver, or DynamoDB Local through the default path. */
export async function backendOptions(backend: Backend): Promise<Partial<HandlerOptions>> {
  if (backend === "memory") return { checkpointer: new InMemorySaver() };
  const { client, tableName } = await createTable();
  return { tableName, dynamodbClient: client };
}

export interface TestServer {
  url: string;
  handler: ApiHandler;
  keys: DevKeys;
  token(tenantId: string): Promise<string>;
  /** A client of the official SDK (`sdk`: which major, the current one unless said) for a tenant's token. */
  client(tenantId: string, sdk?: SdkMajor): Promise<Client>;
  close(): Promise<void>;
}

/**
 * The dev server on a free port with a throwaway key folder, exactly as `npm start` wires it (`server`: its own
 * options, such as the CORS origins `npm start` reads from CORS_ALLOW_ORIGINS).
 */
export async function startTestServer(
  options: HandlerOptions,
  server: Pick<DevServerOptions, "corsOrigins" | "timeoutMs"> = {},
): Promise<TestServer> {
  const keyDirectory = mkdtempSync(join(tmpdir(), "memory-table-keys-"));
  const keys = await loadDevKeys(keyDirectory);
  const handler = createHandler({ logger: quietLogger, metrics: false, ...options });
  const running: RunningDevServer = await startDevServer({ ...server, handler, keys, port: 0 });
  const token = (tenantId: string) => signDevToken(keys, { tenantId });
  return {
    url: running.url,
    handler,
    keys,
    token,
    async client(tenantId, sdk = CURRENT_SDK) {
      return sdk.createClient({
        apiUrl: running.url,
        apiKey: null,
        defaultHeaders: { Authorization: `Bearer ${await token(tenantId)}` },
        callerOptions: { maxRetries: 0 },
      });
    },
    async close() {
      await running.close();
      rmSync(keyDirectory, { recursive: true, force: true });
    },
  };
}

/** An API Gateway HTTP API (payload 2.0) event as the JWT authorizer hands it to the Lambda. */
export function apiEvent(
  method: string,
  path: string,
  options: { body?: string; tenantId?: string | null; claims?: Record<string, string> } = {},
): HttpEvent {
  const claims =
    options.claims ??
    (options.tenantId === null ? {} : { "custom:tenant_id": options.tenantId ?? "tenant-a" });
  return {
    version: "2.0",
    routeKey: "$default",
    rawPath: path,
    rawQueryString: "",
    headers: { "content-type": "application/json" },
    body: options.body,
    isBase64Encoded: false,
    requestContext: {
      accountId: "000000000000",
      apiId: "test",
      domainName: "test",
      domainPrefix: "test",
      http: { method, path, protocol: "HTTP/1.1", sourceIp: "127.0.0.1", userAgent: "jest" },
      requestId: "test-request",
      routeKey: "$default",
      stage: "$default",
      time: new Date().toISOString(),
      timeEpoch: Date.now(),
      authorizer: { principalId: "", integrationLatency: 0, jwt: { claims, scopes: [] } },
    },
  } as HttpEvent;
}

export async function postJson(
  url: string,
  token: string,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
