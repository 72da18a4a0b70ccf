import { generateKeyPair, SignJWT, type KeyLike } from "jose";
import { InMemorySaver } from "../../src/checkpoint/memory";
import { createFunctionUrlHandler, type ResponseStream } from "../../src/runtime/function-url";
import { streamingChatGraph } from "./graphs";
import { apiEvent, quietLogger } from "./support";
import { startLoopbackIssuer, type LoopbackIssuer } from "../support/jwt-issuer";

/**
 * The function URL handler with a local issuer (a real JWKS over HTTP, verified by jose) and a stand-in for the
 * Lambda runtime's response stream (the image test runs the real one under aws-lambda-ric).
 */
describe("function URL handler (response stream stand-in)", () => {
  let loopback: LoopbackIssuer;
  let issuer: string;
  let privateKey: KeyLike;
  let otherKey: KeyLike;

  beforeAll(async () => {
    loopback = await startLoopbackIssuer();
    issuer = loopback.url;
    privateKey = loopback.privateKey;
    otherKey = (await generateKeyPair("RS256")).privateKey;
  });

  afterAll(() => loopback.stop());

  const token = (
    claims: Record<string, unknown>,
    options: { key?: KeyLike; exp?: string; issuer?: string } = {},
  ) =>
    new SignJWT({ "custom:tenant_id": "tenant-url", ...claims })
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer(options.issuer ?? issuer)
      .setIssuedAt()
      .setExpirationTime(options.exp ?? "5m")
      .sign(options.key ?? privateKey);

  function handler() {
    return createFunctionUrlHandler({
      assistants: { chat: streamingChatGraph() },
      checkpointer: new InMemorySaver(),
      jwt: { issuer, audiences: ["web-client"] },
      withHttpMetadata: (stream, metadata) => {
        (stream as Recorder).metadata = metadata;
        return stream;
      },
      logger: quietLogger,
      metrics: false,
    });
  }

  interface Recorder extends ResponseStream {
    metadata?: { statusCode: number; headers: Record<string, string> };
    chunks: Array<{ at: number; text: string }>;
    endedAt?: number;
  }
  const recorder = (): Recorder => {
    const chunks: Recorder["chunks"] = [];
    const stream: Recorder = {
      chunks,
      write: (chunk) => chunks.push({ at: Date.now(), text: String(chunk) }),
      end: () => {
        stream.endedAt = Date.now();
      },
      on: () => stream,
    };
    return stream;
  };

  function call(authorization: string | undefined, method: string, path: string, body?: unknown) {
    return callWith(authorization ? { authorization } : {}, method, path, body);
  }

  async function callWith(
    credentials: Record<string, string>,
    method: string,
    path: string,
    body?: unknown,
    serving = handler(),
  ) {
    const event = apiEvent(method, path, {
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    delete (event.requestContext as { authorizer?: unknown }).authorizer;
    event.headers = { ...credentials, "content-type": "application/json" };
    const stream = recorder();
    await serving(event, stream);
    return stream;
  }

  it.each([
    ["no token", async () => undefined],
    [
      "a token of another key",
      async () => `Bearer ${await token({ aud: "web-client" }, { key: otherKey })}`,
    ],
    ["another audience", async () => `Bearer ${await token({ aud: "someone-else" })}`],
    [
      "another issuer",
      async () =>
        `Bearer ${await token({ aud: "web-client" }, { issuer: "https://evil.example" })}`,
    ],
    [
      "an expired token",
      async () => `Bearer ${await token({ aud: "web-client" }, { exp: "-1m" })}`,
    ],
    ["not a bearer token", async () => "Basic dXNlcjpwYXNz"],
  ])("answers 401 as API Gateway's authorizer does to %s", async (_name, authorization) => {
    const answer = await call(await authorization(), "GET", "/threads/x");
    expect(answer.metadata).toEqual({
      statusCode: 401,
      headers: {
        "content-type": "application/json",
        "www-authenticate": 'Bearer error="invalid_token"',
      },
    });
    expect(JSON.parse(answer.chunks.map((chunk) => chunk.text).join(""))).toEqual({
      message: "Unauthorized",
    });
  });

  it("accepts a Cognito access token by its client_id, and applies the tenant claim rules", async () => {
    const access = await call(
      `Bearer ${await token({ client_id: "web-client" })}`,
      "POST",
      "/threads",
      {},
    );
    expect(access.metadata?.statusCode).toBe(200);
    // client_id counts only without aud, as API Gateway's authorizer decides.
    const otherAudience = await call(
      `Bearer ${await token({ aud: "another-app", client_id: "web-client" })}`,
      "POST",
      "/threads",
      {},
    );
    expect(otherAudience.metadata?.statusCode).toBe(401);
    const noTenant = await call(
      `Bearer ${await token({ aud: "web-client", "custom:tenant_id": undefined })}`,
      "POST",
      "/threads",
      {},
    );
    expect(noTenant.metadata?.statusCode).toBe(401);
  });

  it("accepts the same JWT as X-Api-Key (what browser UIs send), on a route and on a stream", async () => {
    const jwt = await token({ aud: "web-client" });
    const serving = handler();
    const created = await callWith({ "x-api-key": jwt }, "POST", "/threads", {}, serving);
    expect(created.metadata?.statusCode).toBe(200);
    const threadId = (
      JSON.parse(created.chunks.map((chunk) => chunk.text).join("")) as {
        thread_id: string;
      }
    ).thread_id;
    // Both headers with the same token: one credential, accepted; the thread is the same tenant's.
    const read = await callWith(
      { authorization: `Bearer ${jwt}`, "X-Api-Key": jwt },
      "GET",
      `/threads/${threadId}`,
      undefined,
      serving,
    );
    expect(read.metadata?.statusCode).toBe(200);
    const streamed = await callWith({ "x-api-key": jwt }, "POST", "/runs/stream", {
      assistant_id: "chat",
      input: { messages: [{ role: "human", content: "hi" }] },
      stream_mode: "messages-tuple",
    });
    expect(streamed.metadata?.statusCode).toBe(200);
    expect(streamed.metadata?.headers["content-type"]).toBe("text/event-stream");
  });

  it.each([
    [
      "a key of another signer",
      async () => ({ "x-api-key": await token({ aud: "web-client" }, { key: otherKey }) }),
    ],
    ["a key that is no JWT", async () => ({ "x-api-key": "lsv2_pt_not-a-jwt" })],
    ["an empty key", async () => ({ "x-api-key": "" })],
    [
      "a key and a bearer token that disagree",
      async () => ({
        "x-api-key": await token({ aud: "web-client" }),
        authorization: `Bearer ${await token({ aud: "web-client", sub: "someone-else" })}`,
      }),
    ],
    [
      "a valid key next to a non-bearer Authorization",
      async () => ({
        "x-api-key": await token({ aud: "web-client" }),
        authorization: "Basic dXNlcjpwYXNz",
      }),
    ],
  ])("answers 401 to %s", async (_name, credentials) => {
    const answer = await callWith(await credentials(), "POST", "/threads", {});
    expect(answer.metadata?.statusCode).toBe(401);
  });

  it("streams a run's events as they come, then ends the response", async () => {
    const answer = await call(
      `Bearer ${await token({ aud: "web-client" })}`,
      "POST",
      "/runs/stream",
      {
        assistant_id: "chat",
        input: { messages: [{ role: "human", content: "hi" }] },
        stream_mode: "messages-tuple",
      },
    );
    expect(answer.metadata?.statusCode).toBe(200);
    expect(answer.metadata?.headers["content-type"]).toBe("text/event-stream");
    const frames = answer.chunks.map((chunk) => chunk.text);
    expect(frames[0]).toMatch(/^event: metadata\n/);
    expect(frames.filter((frame) => frame.startsWith("event: messages\n")).length).toBeGreaterThan(
      3,
    );
    expect(answer.endedAt).toBeGreaterThanOrEqual(answer.chunks.at(-1)!.at);
  });
});
