import { type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { createApiKey, revokeTenantApiKey } from "../../src/runtime/auth/api-keys";
import { IMAGE_HANDLERS } from "../../src/runtime/environment";
import { connectTable, type TableConnection } from "../../src/table/client";
import {
  createLocalClient,
  createTestTable,
  deleteTestTable,
  localEndpoint,
} from "../support/dynamodb";
import { apiCorsConfiguration } from "../../modules/construct/api";
import { startApiGatewayStandIn } from "./api-gateway-stand-in";
import { apiGatewayEvent, resultBody, type HttpRequest } from "./events";
import { LambdaFunctionStandIn } from "./lambda-invoke-stand-in";
import { imageNodeBinary, missingImageNode, startRic, type RicProcess } from "./ric-process";
import { RuntimeApiEmulator, type InvocationOutcome } from "./runtime-api";
import { prepareTaskRoot, type TaskRoot } from "./task-root";

/**
 * The image's authorizer entry (`authorizer.handler`) run by aws-lambda-ric on the image's Node major, with
 * DynamoDB Local as the table, and the image's API handler behind it. API Gateway itself has no local engine: the
 * stand-in here passes an authorized context on as `requestContext.authorizer.lambda` and answers 403 to a refusal,
 * which is what an HTTP API does with a Lambda REQUEST authorizer's simple responses.
 */
const node = imageNodeBinary();
if (!node) console.log(`SKIP: image authorizer tests: ${missingImageNode()}`);
const describeWithImageNode = node ? describe : describe.skip;

describeWithImageNode(
  "image authorizer under aws-lambda-ric (API Gateway stand-in, DynamoDB Local)",
  () => {
    let taskRoot: TaskRoot;
    let client: DynamoDBClient;
    let tableName: string;
    let table: TableConnection;
    const running: Array<{ api: RuntimeApiEmulator; ric: RicProcess }> = [];

    beforeAll(async () => {
      taskRoot = await prepareTaskRoot();
      client = createLocalClient();
      tableName = await createTestTable(client, "memory-table-authorizer");
      table = connectTable(client, tableName);
    }, 120_000);

    afterAll(async () => {
      await Promise.all(
        running.splice(0).map(async ({ ric, api }) => {
          await ric.kill();
          await api.stop();
        }),
      );
      if (tableName) await deleteTestTable(client, tableName);
      client?.destroy();
      taskRoot?.remove();
    });

    async function start(handler: string, env: Record<string, string> = {}) {
      const api = await RuntimeApiEmulator.start();
      const ric = startRic({
        node: node!,
        taskRoot: taskRoot.dir,
        handler,
        runtimeApi: api.address,
        env: {
          TABLE_NAME: tableName,
          DYNAMODB_ENDPOINT: localEndpoint(),
          LOG_LEVEL: "info",
          ...env,
        },
      });
      const runtime = { api, ric };
      running.push(runtime);
      return runtime;
    }

    async function invoke(
      { api, ric }: { api: RuntimeApiEmulator; ric: RicProcess },
      event: unknown,
    ): Promise<unknown> {
      const died = ric.exited.then((code) => {
        throw new Error(`runtime exited (${String(code)}) before answering:\n${ric.output()}`);
      });
      const outcome: InvocationOutcome = await Promise.race([
        api.invoke(event, { timeoutMs: 20_000 }),
        died,
      ]);
      if (outcome.kind !== "response") {
        throw new Error(`expected a response, got ${JSON.stringify(outcome)}:\n${ric.output()}`);
      }
      return outcome.body;
    }

    /** The payload 2.0 event API Gateway sends a REQUEST authorizer (the parts the authorizer reads, and more). */
    function authorizerEvent(headers: Record<string, string>) {
      return {
        version: "2.0",
        type: "REQUEST",
        routeArn: "arn:aws:execute-api:us-east-1:123456789012:local/$default/GET/threads/x",
        identitySource: [],
        routeKey: "GET /threads/{thread_id}",
        rawPath: "/threads/x",
        rawQueryString: "",
        headers: { "content-type": "application/json", ...headers },
        requestContext: { http: { method: "GET", path: "/threads/x" }, stage: "$default" },
      };
    }

    it("authorizes a key to its tenant, refuses it once revoked, and the API handler serves that tenant only", async () => {
      const authorizer = await start(IMAGE_HANDLERS.authorizer, { API_KEY_CACHE_SECONDS: "0" });
      const api = await start(IMAGE_HANDLERS.api);
      const keyA = await createApiKey(table, { tenantId: "img-a", expiresInMs: 3_600_000 });
      const keyB = await createApiKey(table, { tenantId: "img-b", expiresInMs: 3_600_000 });

      const viaStandIn = async (key: string, request: Omit<HttpRequest, "tenant">) => {
        const verdict = (await invoke(authorizer, authorizerEvent({ "x-api-key": key }))) as {
          isAuthorized: boolean;
          context?: Record<string, string>;
        };
        if (!verdict.isAuthorized) return { statusCode: 403, body: {} };
        const event = apiGatewayEvent({ ...request, tenant: "not-used" });
        const context = event.requestContext as Record<string, unknown>;
        context.authorizer = { lambda: verdict.context };
        event.headers = { "content-type": "application/json", "x-api-key": key };
        const result = (await invoke(api, event)) as { statusCode: number };
        return { statusCode: result.statusCode, body: resultBody(result) };
      };

      await expect(invoke(authorizer, authorizerEvent({ "x-api-key": keyA.key }))).resolves.toEqual(
        {
          isAuthorized: true,
          context: { tenant_id: "img-a", subject: keyA.subject, credential: "api-key" },
        },
      );
      const created = await viaStandIn(keyA.key, {
        method: "POST",
        path: "/threads",
        body: { thread_id: "img-private" },
      });
      expect(created.statusCode).toBe(200);
      expect(
        (await viaStandIn(keyA.key, { method: "GET", path: "/threads/img-private" })).statusCode,
      ).toBe(200);
      expect(
        (await viaStandIn(keyB.key, { method: "GET", path: "/threads/img-private" })).statusCode,
      ).toBe(404);

      await revokeTenantApiKey(table, "img-a", keyA.keyId);
      await expect(invoke(authorizer, authorizerEvent({ "x-api-key": keyA.key }))).resolves.toEqual(
        {
          isAuthorized: false,
        },
      );
      await expect(invoke(authorizer, authorizerEvent({}))).resolves.toEqual({
        isAuthorized: false,
      });
      // No credential is ever written to the logs.
      expect(authorizer.ric.output()).toContain("memory-table authorizer ready");
      expect(authorizer.ric.output()).not.toContain(keyA.key.slice(20));
      expect(api.ric.output()).not.toContain(keyA.key.slice(20));
    });

    it("through the API Gateway stand-in: the module's CORS answers preflights before the authorizer, which refuses a missing or revoked key (403)", async () => {
      const env = { TABLE_NAME: tableName, DYNAMODB_ENDPOINT: localEndpoint(), LOG_LEVEL: "warn" };
      const fn = (name: string, handler: string) =>
        new LambdaFunctionStandIn({
          name,
          node: node!,
          taskRoot: taskRoot.dir,
          handler,
          env,
          timeoutMs: 20_000,
        });
      const api = fn("memory-table-api", IMAGE_HANDLERS.api);
      const authorizer = fn("memory-table-authorizer", IMAGE_HANDLERS.authorizer);
      const page = "http://127.0.0.1:5173";
      const gateway = await startApiGatewayStandIn({
        integration: api,
        authorizer: { kind: "lambda", fn: authorizer },
        cors: apiCorsConfiguration([page]),
      });
      try {
        const key = await createApiKey(table, { tenantId: "img-cors", expiresInMs: 3_600_000 });
        const preflight = (origin: string, headers = "content-type,x-api-key") =>
          fetch(`${gateway.url}/threads`, {
            method: "OPTIONS",
            headers: {
              origin,
              "access-control-request-method": "POST",
              "access-control-request-headers": headers,
            },
          });
        const allowed = await preflight(page);
        expect(allowed.status).toBe(204);
        expect(allowed.headers.get("access-control-allow-origin")).toBe(page);
        expect(allowed.headers.get("access-control-allow-headers")).toBe(
          "authorization,content-type,mcp-protocol-version,x-api-key",
        );
        expect(
          (await preflight("https://elsewhere.example.com")).headers.get(
            "access-control-allow-origin",
          ),
        ).toBeNull();
        expect(
          (await preflight(page, "x-unlisted")).headers.get("access-control-allow-origin"),
        ).toBeNull();
        expect(gateway.counts).toEqual({ preflights: 3, authorizerCalls: 0, integrationCalls: 0 });

        const create = (headers: Record<string, string>) =>
          fetch(`${gateway.url}/threads`, {
            method: "POST",
            headers: { origin: page, "content-type": "application/json", ...headers },
            body: JSON.stringify({ thread_id: "img-cors-thread" }),
          });
        const created = await create({ "x-api-key": key.key });
        expect(created.status).toBe(200);
        expect(created.headers.get("access-control-allow-origin")).toBe(page);
        expect((await create({})).status).toBe(403);
        await revokeTenantApiKey(table, "img-cors", key.keyId);
        // The authorizer's container caches a verdict for API_KEY_CACHE_SECONDS: a new one reads the revocation.
        await authorizer.stop();
        expect((await create({ "x-api-key": key.key })).status).toBe(403);
        expect((await fetch(`${gateway.url}/nowhere`)).status).toBe(404);
      } finally {
        await gateway.close();
        await Promise.all([api.stop(), authorizer.stop()]);
      }
    }, 120_000);
  },
);
