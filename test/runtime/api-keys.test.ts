import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { ScanCommand } from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { SignJWT } from "jose";
import {
  createApiKey,
  createApiKeyVerifier,
  listTenantApiKeys,
  revokeTenantApiKey,
  type CreatedApiKey,
} from "../../src/runtime/auth/api-keys";
import { hashApiKey } from "../../src/runtime/auth/api-key-format";
import { createRequestAuthorizer, type AuthorizerResult } from "../../src/runtime/auth/authorizer";
import {
  createFunctionUrlHandler,
  type FunctionUrlOptions,
  type ResponseStream,
} from "../../src/runtime/function-url";
import { createHandler, type ApiHandler } from "../../src/runtime/handler";
import type { HttpEvent } from "../../src/runtime/http/http";
import { createJwtVerifier } from "../../src/runtime/http/jwt-verifier";
import { connectTable, type TableConnection } from "../../src/table/client";
import { startLoopbackIssuer, type LoopbackIssuer } from "../support/jwt-issuer";
import { localEndpoint } from "../support/dynamodb";
import { streamingChatGraph } from "./graphs";
import { apiEvent, createTable, quietLogger, type TableHandle } from "./support";

const DAY = 86_400_000;
const REPO = join(__dirname, "..", "..");

/**
 * API keys on DynamoDB Local: created, listed, used through the authorizer and the function URL, revoked and
 * expired. API Gateway's call of its Lambda authorizer has no local engine: `viaApiGatewayStandIn` does what it
 * does with a simple response (refused: 403 without calling the function; authorized: the context under
 * `requestContext.authorizer.lambda`), around the real authorizer and the real handler.
 */
describe("API keys (DynamoDB Local)", () => {
  let table: TableHandle;
  let connection: TableConnection;
  let loopback: LoopbackIssuer;

  beforeAll(async () => {
    table = await createTable();
    connection = connectTable(table.client, table.tableName);
    loopback = await startLoopbackIssuer();
  });
  afterAll(() => loopback.stop());

  const handlerOptions = () => ({
    assistants: { chat: streamingChatGraph() },
    tableName: table.tableName,
    dynamodbClient: table.client,
    logger: quietLogger,
    metrics: false as const,
  });

  /** What API Gateway does around a Lambda REQUEST authorizer with simple responses (stand-in, see above). */
  async function viaApiGatewayStandIn(
    authorize: (event: { headers: Record<string, string> }) => Promise<AuthorizerResult>,
    handler: ApiHandler,
    headers: Record<string, string>,
    method: string,
    path: string,
    body?: unknown,
  ) {
    const event = apiEvent(method, path, {
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    event.headers = { ...headers, "content-type": "application/json" };
    const verdict = await authorize({ headers: event.headers as Record<string, string> });
    if (!verdict.isAuthorized) return { statusCode: 403, body: '{"message":"Forbidden"}' };
    (event.requestContext as unknown as { authorizer: unknown }).authorizer = {
      lambda: verdict.context,
    };
    return handler(event as HttpEvent);
  }

  async function scanTable(): Promise<Record<string, unknown>[]> {
    const { Items = [] } = await table.client.send(
      new ScanCommand({ TableName: table.tableName, ConsistentRead: true }),
    );
    return Items.map((item) => unmarshall(item));
  }

  it("creates a key shown once, stores only its SHA-256, and lists it by a Query", async () => {
    const created = await createApiKey(connection, {
      tenantId: "tenant-store",
      subject: "billing-app",
      expiresInMs: 90 * DAY,
    });
    expect(created.key).toMatch(/^mt_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    expect(created.key).toContain(created.keyId);
    const items = (await scanTable()).filter((item) =>
      JSON.stringify(item).includes(created.keyId),
    );
    expect(items.map((item) => item.pk).sort()).toEqual(
      [`#api-key#${created.keyId}`, "tenant-store##api-keys"].sort(),
    );
    const secret = created.key.slice(`mt_${created.keyId}_`.length);
    for (const item of items) {
      expect(JSON.stringify(item)).not.toContain(secret);
      expect(JSON.stringify(item)).not.toContain(created.key);
    }
    const lookup = items.find((item) => String(item.pk).startsWith("#api-key#"))!;
    expect(lookup).toMatchObject({
      h: hashApiKey(created.key),
      t: "tenant-store",
      s: "billing-app",
    });
    // The listing item carries no hash.
    expect(items.find((item) => item.pk === "tenant-store##api-keys")).not.toHaveProperty("h");

    const before = { ...connection.counters.byOperation };
    const listed = await listTenantApiKeys(connection, "tenant-store");
    expect(listed).toEqual([
      {
        keyId: created.keyId,
        tenantId: "tenant-store",
        subject: "billing-app",
        createdAt: created.createdAt,
        expiresAt: created.expiresAt,
      },
    ]);
    expect(connection.counters.byOperation.Query!.requests).toBe((before.Query?.requests ?? 0) + 1);
    expect(connection.counters.byOperation.Scan).toBeUndefined();
  });

  it("refuses bad input before any request", async () => {
    const sent = connection.counters.requests;
    await expect(createApiKey(connection, { tenantId: "a#b", expiresInMs: DAY })).rejects.toThrow(
      /tenant id/,
    );
    await expect(createApiKey(connection, { tenantId: "t", expiresInMs: 0 })).rejects.toThrow(
      /expiry/,
    );
    await expect(
      createApiKey(connection, { tenantId: "t", expiresInMs: 400 * DAY }),
    ).rejects.toThrow(/expiry/);
    await expect(revokeTenantApiKey(connection, "t", "not-an-id")).rejects.toThrow(/key id/);
    expect(connection.counters.requests).toBe(sent);
  });

  it("authorizes a key through the authorizer (API Gateway stand-in): the key's tenant only, another tenant's threads are 404", async () => {
    const handler = createHandler(handlerOptions());
    const authorize = createRequestAuthorizer({
      verifyApiKey: createApiKeyVerifier(connection, { cacheSeconds: 0 }),
      tenantClaim: "custom:tenant_id",
    });
    const keyA = await createApiKey(connection, { tenantId: "tenant-a", expiresInMs: DAY });
    const keyB = await createApiKey(connection, { tenantId: "tenant-b", expiresInMs: DAY });
    const created = await viaApiGatewayStandIn(
      authorize,
      handler,
      { "x-api-key": keyA.key },
      "POST",
      "/threads",
      { thread_id: "a-private", metadata: { owner: "a" } },
    );
    expect(created.statusCode).toBe(200);
    const ownRead = await viaApiGatewayStandIn(
      authorize,
      handler,
      { "x-api-key": keyA.key },
      "GET",
      "/threads/a-private",
    );
    expect(ownRead.statusCode).toBe(200);
    expect(JSON.parse(ownRead.body!)).toMatchObject({ thread_id: "a-private" });
    const otherRead = await viaApiGatewayStandIn(
      authorize,
      handler,
      { "x-api-key": keyB.key },
      "GET",
      "/threads/a-private",
    );
    expect(otherRead.statusCode).toBe(404);
    expect(otherRead.body).not.toContain("owner");

    // The context names the tenant and subject of the stored record, and which credential it was.
    await expect(authorize({ headers: { "x-api-key": keyB.key } })).resolves.toEqual({
      isAuthorized: true,
      context: { tenant_id: "tenant-b", subject: keyB.subject, credential: "api-key" },
    });
    // Also as a bearer token (the SDK's defaultHeaders), but never two credentials that disagree.
    await expect(
      authorize({ headers: { authorization: `Bearer ${keyA.key}` } }),
    ).resolves.toMatchObject({ isAuthorized: true });
    await expect(
      authorize({ headers: { authorization: `Bearer ${keyA.key}`, "x-api-key": keyB.key } }),
    ).resolves.toEqual({ isAuthorized: false });
  });

  it.each<[string, (key: CreatedApiKey) => string]>([
    ["a wrong secret", (key) => `${key.key.slice(0, -4)}AAAA`],
    ["an unknown key id", (key) => key.key.replace(key.keyId, "0123456789abcdef")],
    ["a malformed key", () => "mt_nope"],
  ])("refuses %s", async (_name, mangle) => {
    const key = await createApiKey(connection, { tenantId: "tenant-a", expiresInMs: DAY });
    const verify = createApiKeyVerifier(connection, { cacheSeconds: 0 });
    await expect(verify(mangle(key))).resolves.toBeUndefined();
    await expect(verify(key.key)).resolves.toMatchObject({ tenantId: "tenant-a" });
  });

  it("refuses a revoked key (after the cache period) and an expired one", async () => {
    let clock = Date.now();
    const verify = createApiKeyVerifier(connection, { cacheSeconds: 60, now: () => clock });
    const key = await createApiKey(connection, { tenantId: "tenant-a", expiresInMs: DAY });
    await expect(verify(key.key)).resolves.toMatchObject({ tenantId: "tenant-a" });
    await expect(revokeTenantApiKey(connection, "tenant-b", key.keyId)).resolves.toBe(false);
    await expect(revokeTenantApiKey(connection, "tenant-a", key.keyId)).resolves.toBe(true);
    // A warm container keeps its verdict for the cache period, then reads the revocation.
    await expect(verify(key.key)).resolves.toBeDefined();
    clock += 61_000;
    await expect(verify(key.key)).resolves.toBeUndefined();
    await expect(createApiKeyVerifier(connection, { cacheSeconds: 0 })(key.key)).resolves.toBe(
      undefined,
    );
    const listed = await listTenantApiKeys(connection, "tenant-a");
    expect(listed.find((k) => k.keyId === key.keyId)?.revokedAt).toEqual(expect.any(Number));

    const expiring = await createApiKey(connection, {
      tenantId: "tenant-a",
      expiresInMs: 60_000,
      now: clock,
    });
    await expect(verify(expiring.key)).resolves.toBeDefined();
    // Expiry is checked at every use, cached or not.
    clock += 60_000;
    await expect(verify(expiring.key)).resolves.toBeUndefined();
  });

  it("costs one GetItem per key per container per cache period, none for JWTs or malformed keys", async () => {
    const counted = connectTable(table.client, table.tableName);
    let clock = Date.now();
    const authorize = createRequestAuthorizer({
      verifyApiKey: createApiKeyVerifier(counted, { cacheSeconds: 60, now: () => clock }),
      verifyJwt: createJwtVerifier({ issuer: loopback.url, audiences: ["web-client"] }),
      tenantClaim: "custom:tenant_id",
    });
    const key = await createApiKey(connection, { tenantId: "tenant-a", expiresInMs: DAY });
    const jwt = await new SignJWT({ "custom:tenant_id": "tenant-a", aud: "web-client", sub: "u1" })
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer(loopback.url)
      .setExpirationTime("5m")
      .sign(loopback.privateKey);
    const getItems = () => counted.counters.byOperation.GetItem?.requests ?? 0;

    await authorize({ headers: { "x-api-key": key.key } });
    expect(getItems()).toBe(1); // cold
    for (let i = 0; i < 5; i++) await authorize({ headers: { "x-api-key": key.key } });
    expect(getItems()).toBe(1); // warm, within the period
    clock += 60_001;
    await authorize({ headers: { "x-api-key": key.key } });
    expect(getItems()).toBe(2); // period over: read again
    await expect(authorize({ headers: { authorization: `Bearer ${jwt}` } })).resolves.toEqual({
      isAuthorized: true,
      context: { tenant_id: "tenant-a", subject: "u1", credential: "jwt" },
    });
    await expect(authorize({ headers: { "x-api-key": jwt } })).resolves.toMatchObject({
      isAuthorized: true,
    });
    await expect(authorize({ headers: { "x-api-key": "mt_short" } })).resolves.toEqual({
      isAuthorized: false,
    });
    await expect(authorize({ headers: {} })).resolves.toEqual({ isAuthorized: false });
    expect(getItems()).toBe(2);
    expect(counted.counters.requests).toBe(2);
    // A strongly consistent read of an item under 4 KB: one read unit per cold authorization.
    expect(counted.counters.byOperation.GetItem!.capacityUnits).toBe(2);
  });

  describe("on the function URL (checked in the function; response stream stand-in)", () => {
    interface Recorder extends ResponseStream {
      metadata?: { statusCode: number; headers: Record<string, string> };
      text: string;
    }
    const recorder = (): Recorder => {
      const stream: Recorder = {
        text: "",
        write: (chunk) => {
          stream.text += String(chunk);
        },
        end: () => undefined,
        on: () => stream,
      };
      return stream;
    };

    async function call(
      serve: ReturnType<typeof createFunctionUrlHandler>,
      headers: Record<string, string>,
      method: string,
      path: string,
      body?: unknown,
    ) {
      const event = apiEvent(method, path, {
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      delete (event.requestContext as { authorizer?: unknown }).authorizer;
      event.headers = { ...headers, "content-type": "application/json" };
      const stream = recorder();
      await serve(event, stream);
      return stream;
    }

    const functionUrl = (extra: Partial<FunctionUrlOptions> = {}) =>
      createFunctionUrlHandler({
        ...handlerOptions(),
        jwt: { issuer: loopback.url, audiences: ["web-client"] },
        withHttpMetadata: (stream, metadata) => {
          (stream as Recorder).metadata = metadata;
          return stream;
        },
        ...extra,
      });

    it("serves a key's tenant from the table (default verifier), 404 for another tenant's thread", async () => {
      const serve = functionUrl();
      const keyA = await createApiKey(connection, { tenantId: "url-a", expiresInMs: DAY });
      const keyB = await createApiKey(connection, { tenantId: "url-b", expiresInMs: DAY });
      const created = await call(serve, { "x-api-key": keyA.key }, "POST", "/threads", {
        thread_id: "url-private",
      });
      expect(created.metadata?.statusCode).toBe(200);
      const own = await call(serve, { "x-api-key": keyA.key }, "GET", "/threads/url-private");
      expect(own.metadata?.statusCode).toBe(200);
      const other = await call(serve, { "x-api-key": keyB.key }, "GET", "/threads/url-private");
      expect(other.metadata?.statusCode).toBe(404);
    });

    it("answers 401 to a revoked, an expired or an unknown key", async () => {
      const serve = functionUrl({
        apiKeys: createApiKeyVerifier(connection, { cacheSeconds: 0 }),
      });
      const revoked = await createApiKey(connection, { tenantId: "url-a", expiresInMs: DAY });
      const expired = await createApiKey(connection, {
        tenantId: "url-a",
        expiresInMs: 1000,
        now: Date.now() - 2000,
      });
      expect(
        (await call(serve, { "x-api-key": revoked.key }, "GET", "/threads/x")).metadata?.statusCode,
      ).toBe(404);
      await revokeTenantApiKey(connection, "url-a", revoked.keyId);
      for (const key of [revoked.key, expired.key, revoked.key.replace(/.{4}$/, "AAAA")]) {
        const answer = await call(serve, { "x-api-key": key }, "GET", "/threads/x");
        expect(answer.metadata?.statusCode).toBe(401);
        expect(JSON.parse(answer.text)).toEqual({ message: "Unauthorized" });
      }
      // Without a verifier (no table), keys are refused, JWTs still accepted.
      const noKeys = functionUrl({ apiKeys: false });
      const key = await createApiKey(connection, { tenantId: "url-a", expiresInMs: DAY });
      expect(
        (await call(noKeys, { "x-api-key": key.key }, "GET", "/threads/x")).metadata?.statusCode,
      ).toBe(401);
    });
  });

  it("the api-key command creates (printing the key once), lists and revokes", () => {
    const run = (...args: string[]) =>
      spawnSync(
        process.execPath,
        [join(REPO, "node_modules/tsx/dist/cli.mjs"), "scripts/api-key.ts", ...args],
        {
          cwd: REPO,
          encoding: "utf8",
          env: {
            ...process.env,
            AWS_REGION: "us-east-1",
            AWS_ACCESS_KEY_ID: "local",
            AWS_SECRET_ACCESS_KEY: "local",
          },
        },
      );
    const common = [
      "--table",
      table.tableName,
      "--tenant",
      "cli-tenant",
      "--endpoint",
      localEndpoint(),
    ];
    const created = run("create", ...common, "--subject", "ops", "--expires-in", "30d");
    expect(created.stderr).toMatch(/shown once/);
    expect(created.status).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^mt_[0-9a-f]{16}_/);
    const keyId = key.split("_")[1]!;
    expect(created.stderr).not.toContain(key.slice(20));

    const listed = run("list", ...common);
    expect(listed.status).toBe(0);
    expect(listed.stdout).toContain(`${keyId}\tops\t`);
    expect(listed.stdout).toMatch(/\tactive\n/);
    expect(listed.stdout).not.toContain(key.slice(20));

    expect(run("revoke", ...common, "--key-id", keyId).stdout).toBe(`Revoked ${keyId}\n`);
    expect(run("list", ...common, "--json").stdout).toContain('"state":"revoked"');
    const again = run(
      "revoke",
      ...common.slice(0, 2),
      "--tenant",
      "someone-else",
      "--endpoint",
      localEndpoint(),
      "--key-id",
      keyId,
    );
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/nothing was revoked/);
    const bad = run("create", ...common, "--expires-in", "0d");
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/Invalid --expires-in/);
  });
});
