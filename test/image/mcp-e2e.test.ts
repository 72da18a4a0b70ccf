import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createRemoteJWKSet, jwtVerify, SignJWT } from "jose";
import { ENVIRONMENT, IMAGE_HANDLERS } from "../../src/runtime/environment";
import { matchRoute } from "../../src/runtime/http/http";
import { DEFAULT_TENANT_CLAIM } from "../../src/shared/defaults";
import {
  createLocalClient,
  createTestTable,
  deleteTestTable,
  localEndpoint,
} from "../support/dynamodb";
import { startLoopbackIssuer, type LoopbackIssuer } from "../support/jwt-issuer";
import { readHttpIntegrationResponse } from "./http-integration-response";
import { imageNodeBinary, missingImageNode, startRic, type RicProcess } from "./ric-process";
import { RuntimeApiEmulator, type InvocationOutcome } from "./runtime-api";
import { bundleGraphModule, prepareTaskRoot, type TaskRoot } from "./task-root";

/**
 * `/mcp` through the image, end to end, with the official MCP SDK's Client over loopback: the built tree run by the
 * real aws-lambda-ric on the image's Node major, DynamoDB Local as the table, tokens from a loopback JWKS. Neither
 * API Gateway nor a function URL has a local engine, so each door is a stand-in named as such: an HTTP API with a
 * JWT authorizer (jose against the issuer's key set; 401 before the function runs; the claims handed on in a
 * payload 2.0 event to `index.handler`) and a function URL (the request handed on as its event to `stream.handler`,
 * which verifies the token itself; the streamed response read as Lambda reads it).
 */
const node = imageNodeBinary();
if (!node) console.log(`SKIP: image MCP end-to-end tests: ${missingImageNode()}`);
const describeWithImageNode = node ? describe : describe.skip;

const AUDIENCE = "web-client";

interface Runtime {
  api: RuntimeApiEmulator;
  ric: RicProcess;
}

/** A request as a stand-in received it. */
interface Received {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** What a stand-in answers. */
interface Answer {
  statusCode: number;
  headers: Record<string, string>;
  body: Buffer | string;
}

/** An HTTP server on 127.0.0.1 that hands each request to `serve` (a door's stand-in). */
async function startDoor(serve: (request: Received) => Promise<Answer>): Promise<{
  url: string;
  stop(): Promise<void>;
}> {
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(",") : value;
      }
      const url = new URL(request.url ?? "/", "http://127.0.0.1");
      serve({
        method: request.method ?? "GET",
        path: url.pathname,
        headers,
        body: Buffer.concat(chunks).toString("utf8"),
      }).then(
        (answer) => response.writeHead(answer.statusCode, answer.headers).end(answer.body),
        (error: Error) => response.writeHead(500).end(error.stack),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A payload 2.0 event for a received request (`authorizer`: what API Gateway's authorizer adds; none for a URL). */
function eventOf(request: Received, authorizer?: Record<string, unknown>): Record<string, unknown> {
  const now = Date.now();
  return {
    version: "2.0",
    routeKey: authorizer ? `${request.method} ${request.path}` : "$default",
    rawPath: request.path,
    rawQueryString: "",
    headers: request.headers,
    requestContext: {
      accountId: "123456789012",
      apiId: "local",
      domainName: "local.example",
      domainPrefix: "local",
      http: {
        method: request.method,
        path: request.path,
        protocol: "HTTP/1.1",
        sourceIp: "127.0.0.1",
        userAgent: request.headers["user-agent"] ?? "",
      },
      requestId: randomUUID(),
      routeKey: authorizer ? `${request.method} ${request.path}` : "$default",
      stage: "$default",
      time: new Date(now).toUTCString(),
      timeEpoch: now,
      ...(authorizer ? { authorizer } : {}),
    },
    body: request.body === "" ? undefined : request.body,
    isBase64Encoded: false,
  };
}

async function invoke(runtime: Runtime, event: unknown): Promise<InvocationOutcome> {
  const died = runtime.ric.exited.then((code) => {
    throw new Error(`runtime exited (${String(code)}) before answering:\n${runtime.ric.output()}`);
  });
  return Promise.race([runtime.api.invoke(event, { timeoutMs: 60_000 }), died]);
}

describeWithImageNode(
  "MCP through the image (integration: ric on Node 22, API Gateway and function URL stand-ins, DynamoDB Local, JWKS over loopback)",
  () => {
    let buildDir: string;
    let taskRoot: TaskRoot;
    let client: DynamoDBClient;
    let tableName: string;
    let issuer: LoopbackIssuer;
    const runtimes: Runtime[] = [];
    const doors: Array<{ url: string; stop(): Promise<void> }> = [];
    let apiGatewayUrl: string;
    let functionUrl: string;

    beforeAll(async () => {
      // A build directory of its own: other image tests build into the default one concurrently.
      buildDir = mkdtempSync(join(tmpdir(), "memory-table-mcp-build-"));
      taskRoot = await prepareTaskRoot(join(buildDir, "image"));
      await bundleGraphModule(
        join(__dirname, "fixtures", "echo-graph.ts"),
        taskRoot.dir,
        "graphs/echo-graph.mjs",
      );
      client = createLocalClient();
      tableName = await createTestTable(client, "memory-table-mcp");
      issuer = await startLoopbackIssuer();
      const environment = {
        TABLE_NAME: tableName,
        DYNAMODB_ENDPOINT: localEndpoint(),
        GRAPH_MODULE: "graphs/echo-graph.mjs",
        [ENVIRONMENT.jwtIssuer]: issuer.url,
        [ENVIRONMENT.jwtAudience]: AUDIENCE,
        LOG_LEVEL: "warn",
      };
      const start = async (handler: string) => {
        const api = await RuntimeApiEmulator.start();
        const ric = startRic({
          node: node!,
          taskRoot: taskRoot.dir,
          handler,
          runtimeApi: api.address,
          env: environment,
        });
        const runtime = { api, ric };
        runtimes.push(runtime);
        return runtime;
      };
      const apiFunction = await start(IMAGE_HANDLERS.api);
      const streamFunction = await start(IMAGE_HANDLERS.stream);

      // API Gateway HTTP API stand-in: its routes only (ROUTES, as the module creates them), its JWT authorizer.
      const keySet = createRemoteJWKSet(new URL(`${issuer.url}/.well-known/jwks.json`));
      const apiGateway = await startDoor(async (request) => {
        try {
          matchRoute(request.method, request.path);
        } catch {
          return plain(404, { message: "Not Found" });
        }
        const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1];
        const claims = token
          ? await jwtVerify(token, keySet, { issuer: issuer.url, audience: AUDIENCE }).then(
              ({ payload }) => payload,
              () => undefined,
            )
          : undefined;
        if (!claims) return plain(401, { message: "Unauthorized" });
        const outcome = await invoke(
          apiFunction,
          eventOf(request, { jwt: { claims, scopes: null } }),
        );
        if (outcome.kind !== "response") {
          throw new Error(`expected a response, got ${JSON.stringify(outcome)}`);
        }
        const result = outcome.body as Answer;
        return { statusCode: result.statusCode, headers: result.headers, body: result.body ?? "" };
      });
      // Function URL stand-in (RESPONSE_STREAM): the request as its event, the stream read as Lambda reads it.
      const url = await startDoor(async (request) => {
        const outcome = await invoke(streamFunction, eventOf(request));
        if (outcome.kind !== "streamed") {
          throw new Error(`expected a streamed response, got ${JSON.stringify(outcome)}`);
        }
        const { prelude, body } = readHttpIntegrationResponse(outcome);
        return { statusCode: prelude.statusCode ?? 200, headers: prelude.headers ?? {}, body };
      });
      doors.push(apiGateway, url);
      apiGatewayUrl = apiGateway.url;
      functionUrl = url.url;
    }, 120_000);

    afterAll(async () => {
      await Promise.all(doors.splice(0).map((door) => door.stop()));
      await Promise.all(
        runtimes.splice(0).map(async ({ ric, api }) => {
          await ric.kill();
          await api.stop();
        }),
      );
      await issuer?.stop();
      if (tableName) await deleteTestTable(client, tableName);
      client?.destroy();
      taskRoot?.remove();
      if (buildDir) rmSync(buildDir, { recursive: true, force: true });
    });

    function plain(statusCode: number, body: unknown): Answer {
      return {
        statusCode,
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      };
    }

    const token = (tenant: string) =>
      new SignJWT({ [DEFAULT_TENANT_CLAIM]: tenant, aud: AUDIENCE, sub: `user-of-${tenant}` })
        .setProtectedHeader({ alg: "RS256", kid: "k1" })
        .setIssuer(issuer.url)
        .setIssuedAt()
        .setExpirationTime("5m")
        .sign(issuer.privateKey);

    async function withMcp<T>(
      base: string,
      tenant: string | undefined,
      use: (mcp: Client) => Promise<T>,
    ): Promise<T> {
      const headers: Record<string, string> =
        tenant === undefined ? {} : { Authorization: `Bearer ${await token(tenant)}` };
      const mcp = new Client({ name: "memory-table-image-test", version: "1.0.0" });
      await mcp.connect(
        new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } }),
      );
      try {
        return await use(mcp);
      } finally {
        await mcp.close();
      }
    }

    it.each([
      ["API Gateway", () => apiGatewayUrl],
      ["the function URL", () => functionUrl],
    ])(
      "through %s: lists the tenant's assistants, runs one, refuses no token and another tenant",
      async (_door, base) => {
        const tenantA = `img-mcp-a-${randomUUID().slice(0, 8)}`;
        const tenantB = `img-mcp-b-${randomUUID().slice(0, 8)}`;
        const refused = withMcp(base(), undefined, (mcp) => mcp.listTools());
        await expect(refused).rejects.toBeInstanceOf(StreamableHTTPError);
        await expect(refused).rejects.toMatchObject({ code: 401 });

        const created = await fetch(`${base()}/assistants`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${await token(tenantA)}`,
            "content-type": "application/json",
          },
          body: JSON.stringify({
            graph_id: "agent",
            name: "a_shouter",
            description: "Shouts for tenant A",
          }),
        });
        expect(created.status).toBe(200);

        const listedA = await withMcp(base(), tenantA, (mcp) => mcp.listTools());
        expect(listedA.tools).toEqual([
          {
            name: "a_shouter",
            description: "Shouts for tenant A",
            inputSchema: { type: "object" },
          },
          { name: "agent", inputSchema: { type: "object" } },
        ]);
        const called = (await withMcp(base(), tenantA, (mcp) =>
          mcp.callTool({ name: "a_shouter", arguments: { text: "hello" } }),
        )) as CallToolResult;
        expect(called.isError).toBeFalsy();
        expect(called.structuredContent).toEqual({ text: "hello", echoed: "HELLO!" });

        const listedB = await withMcp(base(), tenantB, (mcp) => mcp.listTools());
        expect(listedB.tools.map((tool) => tool.name)).toEqual(["agent"]);
        const stolen = withMcp(base(), tenantB, (mcp) =>
          mcp.callTool({ name: "a_shouter", arguments: { text: "mine now" } }),
        );
        await expect(stolen).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
      },
      120_000,
    );
  },
);
