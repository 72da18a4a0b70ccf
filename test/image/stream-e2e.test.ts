import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { generateKeyPair, SignJWT, type KeyLike } from "jose";
import { ENVIRONMENT, IMAGE_HANDLERS } from "../../src/runtime/environment";
import { DEFAULT_TENANT_CLAIM } from "../../src/shared/defaults";
import {
  createLocalClient,
  createTestTable,
  deleteTestTable,
  localEndpoint,
} from "../support/dynamodb";
import {
  STREAM_GRAPH_REPLY,
  STREAM_GRAPH_VERDICT,
  type ReviewTimes,
} from "./fixtures/stream-graph";
import { imageNodeBinary, missingImageNode, startRic, type RicProcess } from "./ric-process";
import {
  HTTP_INTEGRATION_CONTENT_TYPE,
  readHttpIntegrationResponse,
  type HttpIntegrationResponse,
} from "./http-integration-response";
import { RuntimeApiEmulator, type InvocationOutcome, type StreamedChunk } from "./runtime-api";
import { bundleGraphModule, prepareTaskRoot, type TaskRoot } from "./task-root";
import { startLoopbackIssuer, type LoopbackIssuer } from "../support/jwt-issuer";

/**
 * The image's streaming entry (CMD `stream.handler`) end to end, without Docker: the built tree run by the real
 * aws-lambda-ric on the image's Node major, against a stand-in for the Lambda Runtime API that speaks its response
 * streaming protocol and times every chunk; DynamoDB Local as the table; tokens verified by jose against a key set
 * served over loopback HTTP, as from an issuer's `/.well-known/jwks.json`.
 */
const node = imageNodeBinary();
if (!node) console.log(`SKIP: image streaming end-to-end tests: ${missingImageNode()}`);
const describeWithImageNode = node ? describe : describe.skip;

const AUDIENCE = "web-client";
const TENANT = "acme";

/** A function URL request (payload 2.0): no authorizer, the token as the client sent it. */
interface UrlRequest {
  method: "GET" | "POST" | "DELETE";
  path: string;
  body?: unknown;
  authorization?: string;
}

function functionUrlEvent(request: UrlRequest): Record<string, unknown> {
  const now = Date.now();
  return {
    version: "2.0",
    routeKey: "$default",
    rawPath: request.path,
    rawQueryString: "",
    headers: {
      "content-type": "application/json",
      accept: "text/event-stream",
      host: "abcdefghij.lambda-url.us-east-1.on.aws",
      ...(request.authorization === undefined ? {} : { authorization: request.authorization }),
    },
    requestContext: {
      accountId: "anonymous",
      apiId: "abcdefghij",
      domainName: "abcdefghij.lambda-url.us-east-1.on.aws",
      domainPrefix: "abcdefghij",
      http: {
        method: request.method,
        path: request.path,
        protocol: "HTTP/1.1",
        sourceIp: "127.0.0.1",
        userAgent: "memory-table-test",
      },
      requestId: randomUUID(),
      routeKey: "$default",
      stage: "$default",
      time: new Date(now).toUTCString(),
      timeEpoch: now,
    },
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
    isBase64Encoded: false,
  };
}

interface SseEvent {
  event: string;
  data: unknown;
  id: string | undefined;
  /** Offset of the frame's first byte in the response body. */
  offset: number;
}

/** Parses a Server-Sent Events body strictly: every frame `event:`, `data:` (JSON), optional `id:`. */
function parseSse(body: Buffer): SseEvent[] {
  const text = body.toString("utf8");
  const events: SseEvent[] = [];
  let offset = 0;
  for (const frame of text.split("\n\n")) {
    const start = offset;
    offset += Buffer.byteLength(frame, "utf8") + 2;
    // A keep-alive comment is a line of its own, before the frame that follows it.
    const lines = frame.split("\n").filter((line) => !line.startsWith(":"));
    if (lines.every((line) => line === "")) continue;
    const fields = new Map<string, string>();
    for (const line of lines) {
      const colon = line.indexOf(": ");
      if (colon === -1) throw new Error(`not an SSE field line: ${JSON.stringify(line)}`);
      fields.set(line.slice(0, colon), line.slice(colon + 2));
    }
    const event = fields.get("event");
    const data = fields.get("data");
    if (event === undefined || data === undefined) {
      throw new Error(`an SSE frame without event or data: ${JSON.stringify(frame)}`);
    }
    events.push({ event, data: JSON.parse(data) as unknown, id: fields.get("id"), offset: start });
  }
  return events;
}

/** When the body byte at `offset` reached the Runtime API. */
function arrivalOf(chunks: StreamedChunk[], offset: number): number {
  let end = 0;
  for (const chunk of chunks) {
    end += chunk.bytes.length;
    if (offset < end) return chunk.at;
  }
  throw new Error(`no body byte at offset ${offset} (the body has ${end})`);
}

describeWithImageNode(
  "container image streaming entry (integration: ric on Node 22, Lambda Runtime API stand-in, DynamoDB Local, JWKS over loopback)",
  () => {
    let buildDir: string;
    let taskRoot: TaskRoot;
    let client: DynamoDBClient;
    let tableName: string;
    let loopback: LoopbackIssuer;
    let issuer: string;
    let privateKey: KeyLike;
    let otherKey: KeyLike;
    interface Runtime {
      api: RuntimeApiEmulator;
      ric: RicProcess;
    }
    const running: Runtime[] = [];

    beforeAll(async () => {
      // A build directory of its own: other image tests build into the default one concurrently.
      buildDir = mkdtempSync(join(tmpdir(), "memory-table-stream-build-"));
      taskRoot = await prepareTaskRoot(join(buildDir, "image"));
      await bundleGraphModule(
        join(__dirname, "fixtures", "stream-graph.ts"),
        taskRoot.dir,
        "graphs/stream-graph.mjs",
      );
      client = createLocalClient();
      tableName = await createTestTable(client, "memory-table-stream");

      loopback = await startLoopbackIssuer();
      issuer = loopback.url;
      privateKey = loopback.privateKey;
      otherKey = (await generateKeyPair("RS256")).privateKey;
    }, 60_000);

    afterEach(async () => {
      await Promise.all(
        running.splice(0).map(async ({ ric, api }) => {
          await ric.kill();
          await api.stop();
        }),
      );
    });

    afterAll(async () => {
      await loopback?.stop();
      if (tableName) await deleteTestTable(client, tableName);
      client?.destroy();
      taskRoot?.remove();
      if (buildDir) rmSync(buildDir, { recursive: true, force: true });
    });

    const token = (options: { key?: KeyLike; exp?: string } = {}) =>
      new SignJWT({ [DEFAULT_TENANT_CLAIM]: TENANT, aud: AUDIENCE, sub: "user-1" })
        .setProtectedHeader({ alg: "RS256", kid: "k1" })
        .setIssuer(issuer)
        .setIssuedAt()
        .setExpirationTime(options.exp ?? "5m")
        .sign(options.key ?? privateKey);

    /** The function's environment: the stream graph, the table, and the loopback issuer. */
    const environment = (env: Record<string, string> = {}): Record<string, string> => ({
      TABLE_NAME: tableName,
      DYNAMODB_ENDPOINT: localEndpoint(),
      GRAPH_MODULE: "graphs/stream-graph.mjs",
      [ENVIRONMENT.jwtIssuer]: issuer,
      [ENVIRONMENT.jwtAudience]: AUDIENCE,
      LOG_LEVEL: "warn",
      ...env,
    });

    /** A container stopped after the test. */
    async function start(env: Record<string, string> = {}) {
      const runtime = await startStream(environment(env));
      running.push(runtime);
      return runtime;
    }

    /** One execution environment: its own Runtime API stand-in and the runtime client polling it. */
    async function startStream(env: Record<string, string>) {
      const api = await RuntimeApiEmulator.start();
      const ric = startRic({
        node: node!,
        taskRoot: taskRoot.dir,
        handler: IMAGE_HANDLERS.stream,
        runtimeApi: api.address,
        env,
      });
      return { api, ric };
    }

    type Streamed = Extract<InvocationOutcome, { kind: "streamed" }>;

    /** One request through the function URL: the streamed response as the Runtime API stand-in got it. */
    async function request(
      { api, ric }: Runtime,
      urlRequest: UrlRequest,
    ): Promise<{ outcome: Streamed; response: HttpIntegrationResponse; json: () => unknown }> {
      const died = ric.exited.then((code) => {
        throw new Error(`runtime exited (${String(code)}) before answering:\n${ric.output()}`);
      });
      const outcome = await Promise.race([
        api.invoke(functionUrlEvent(urlRequest), { timeoutMs: 60_000 }),
        died,
      ]);
      if (outcome.kind !== "streamed") {
        throw new Error(
          `expected a streamed response, got ${JSON.stringify(outcome)}:\n${ric.output()}`,
        );
      }
      const response = readHttpIntegrationResponse(outcome);
      return {
        outcome,
        response,
        json: () => JSON.parse(response.body.toString("utf8")) as unknown,
      };
    }

    async function createThread(runtime: Runtime, authorization: string): Promise<string> {
      const threadId = randomUUID();
      const created = await request(runtime, {
        method: "POST",
        path: "/threads",
        authorization,
        body: { thread_id: threadId },
      });
      expect(created.response.prelude.statusCode).toBe(200);
      return threadId;
    }

    it("streams a run's first SSE event to the Runtime API before the invocation ends, then serves the thread's state", async () => {
      const runtime = await start();
      const authorization = `Bearer ${await token()}`;
      const threadId = await createThread(runtime, authorization);

      const { outcome, response } = await request(runtime, {
        method: "POST",
        path: `/threads/${threadId}/runs/stream`,
        authorization,
        body: {
          assistant_id: "agent",
          input: { messages: [{ role: "human", content: "stream please" }] },
          stream_mode: ["values", "updates", "messages"],
        },
      });

      // The runtime client's streaming protocol, as Lambda reads it for a function URL.
      expect(outcome.headers["lambda-runtime-function-response-mode"]).toBe("streaming");
      expect(outcome.headers["transfer-encoding"]).toBe("chunked");
      expect(outcome.headers["content-type"]).toBe(HTTP_INTEGRATION_CONTENT_TYPE);
      expect(outcome.trailers).toEqual({ errorType: undefined, errorBody: undefined });
      expect(response.prelude).toEqual({
        statusCode: 200,
        headers: expect.objectContaining({
          "content-type": "text/event-stream",
          "cache-control": "no-cache",
        }) as Record<string, string>,
      });

      const events = parseSse(response.body);
      expect(events[0]).toMatchObject({
        event: "metadata",
        data: { run_id: expect.any(String) as string },
      });
      // Every event carries an id, increasing: what a reconnecting client sends back as Last-Event-ID.
      const ids = events.map((event) => Number(event.id));
      expect(ids.every(Number.isInteger)).toBe(true);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(new Set(ids).size).toBe(ids.length);
      const kinds = new Set(events.map((event) => event.event.split("/")[0]));
      expect([...kinds]).toEqual(
        expect.arrayContaining(["metadata", "values", "updates", "messages"]),
      );
      const updates = events.filter((event) => event.event === "updates");
      expect(updates.map((event) => Object.keys(event.data as object))).toEqual([
        ["reply"],
        ["review"],
      ]);
      const tokens = events.filter((event) => event.event.startsWith("messages"));
      expect(tokens.length).toBeGreaterThan(1);
      expect(JSON.stringify(tokens)).toContain("streamed");
      expect(JSON.stringify(events.at(-1))).toContain(STREAM_GRAPH_VERDICT);

      // Streamed, not buffered: timed against the graph's own clock, the first event and the reply's update
      // reached the Runtime API before the graph finished its pause, which is before the run (and so the
      // invocation) could end. Causal, not a latency budget: it holds on a loaded machine too.
      const reviewUpdate = updates[1]!.data as {
        review: { messages: Array<{ additional_kwargs: { review: ReviewTimes } }> };
      };
      const review = reviewUpdate.review.messages[0]!.additional_kwargs.review;
      const firstEventAt = arrivalOf(response.bodyChunks, events[0]!.offset);
      const replyUpdateAt = arrivalOf(response.bodyChunks, updates[0]!.offset);
      expect(firstEventAt).toBeLessThan(review.finished_at);
      expect(replyUpdateAt).toBeLessThan(review.finished_at);
      expect(review.finished_at).toBeLessThanOrEqual(outcome.endedAt);
      expect(new Set(response.bodyChunks.map((chunk) => chunk.at)).size).toBeGreaterThan(1);
      const since = (at: number) => at - outcome.deliveredAt;
      console.log(
        `stream timing (ms after the event was delivered): first event ${since(firstEventAt)}, reply update ` +
          `${since(replyUpdateAt)}, review paused ${since(review.started_at)}-${since(review.finished_at)}, ` +
          `invocation ended ${since(outcome.endedAt)}; ${events.length} events in ${response.bodyChunks.length} chunks`,
      );

      // The run is durable: its state and record are read back through the same function URL.
      const state = await request(runtime, {
        method: "GET",
        path: `/threads/${threadId}/state`,
        authorization,
      });
      expect(state.response.prelude.statusCode).toBe(200);
      const values = (state.json() as { values: { messages: Array<{ content: unknown }> } }).values;
      expect(values.messages.map((message) => message.content)).toEqual([
        "stream please",
        STREAM_GRAPH_REPLY,
        STREAM_GRAPH_VERDICT,
      ]);
      const runs = await request(runtime, {
        method: "GET",
        path: `/threads/${threadId}/runs`,
        authorization,
      });
      expect(runs.json()).toEqual([
        expect.objectContaining({
          run_id: (events[0]!.data as { run_id: string }).run_id,
          status: "success",
        }),
      ]);
    });

    describe("refusing a request", () => {
      // One container for every case: a refusal must leave it as able to serve as before.
      let runtime: Runtime;
      beforeAll(async () => {
        runtime = await startStream(environment());
      });
      afterAll(async () => {
        await runtime?.ric.kill();
        await runtime?.api.stop();
      });

      it.each([
        ["no token", async () => undefined],
        ["a token signed by another key", async () => `Bearer ${await token({ key: otherKey })}`],
        ["an expired token", async () => `Bearer ${await token({ exp: "-1m" })}`],
        ["a token that is not a JWT", async () => "Bearer not-a-jwt"],
      ])("answers 401 with a JSON body to %s, and runs nothing", async (_name, authorization) => {
        const valid = `Bearer ${await token()}`;
        const threadId = await createThread(runtime, valid);

        const refused = await request(runtime, {
          method: "POST",
          path: `/threads/${threadId}/runs/stream`,
          authorization: await authorization(),
          body: {
            assistant_id: "agent",
            input: { messages: [{ role: "human", content: "let me in" }] },
            stream_mode: ["values"],
          },
        });
        expect(refused.response.prelude).toEqual({
          statusCode: 401,
          headers: {
            "content-type": "application/json",
            "www-authenticate": 'Bearer error="invalid_token"',
          },
        });
        expect(refused.json()).toEqual({ message: "Unauthorized" });

        const runs = await request(runtime, {
          method: "GET",
          path: `/threads/${threadId}/runs`,
          authorization: valid,
        });
        expect(runs.response.prelude.statusCode).toBe(200);
        expect(runs.json()).toEqual([]);
        const state = await request(runtime, {
          method: "GET",
          path: `/threads/${threadId}/state`,
          authorization: valid,
        });
        expect((state.json() as { values: unknown }).values).toEqual({});
      });
    });

    it("sends the prelude of an answer without a body (204) too", async () => {
      const runtime = await start();
      const authorization = `Bearer ${await token()}`;
      const threadId = await createThread(runtime, authorization);
      // The runtime client writes the prelude only before a first write: ending the stream without one would
      // leave Lambda no status code to answer with.
      const deleted = await request(runtime, {
        method: "DELETE",
        path: `/threads/${threadId}`,
        authorization,
      });
      expect(deleted.outcome.headers["content-type"]).toBe(HTTP_INTEGRATION_CONTENT_TYPE);
      expect(deleted.response.prelude).toMatchObject({ statusCode: 204 });
      expect(deleted.response.body).toHaveLength(0);
      const gone = await request(runtime, {
        method: "GET",
        path: `/threads/${threadId}`,
        authorization,
      });
      expect(gone.response.prelude.statusCode).toBe(404);
    });

    it("fetches the issuer's key set itself, once for the container's requests", async () => {
      const before = loopback.keySetRequests;
      const runtime = await start();
      const authorization = `Bearer ${await token()}`;
      await createThread(runtime, authorization);
      await createThread(runtime, authorization);
      expect(loopback.keySetRequests - before).toBe(1);
    });

    it.each([
      [
        "without the runtime's awslambda global",
        { AWS_LAMBDA_NODEJS_NO_GLOBAL_AWSLAMBDA: "1" },
        "awslambda",
        /response streaming.*got no awslambda global \(AWS_LAMBDA_NODEJS_NO_GLOBAL_AWSLAMBDA is set\)/,
      ],
      [
        "without an issuer",
        { [ENVIRONMENT.jwtIssuer]: "", [ENVIRONMENT.jwtAudience]: "" },
        "JWT_ISSUER",
        /a function URL has no authorizer/,
      ],
    ])("fails its init %s, naming what is missing", async (_name, env, name, detail) => {
      const { api, ric } = await start(env);
      const initError = await Promise.race([
        api.nextInitError(),
        ric.exited.then((code) => {
          throw new Error(`exited (${String(code)}) without an init error:\n${ric.output()}`);
        }),
      ]);
      expect(initError.errorType).toBe("InvalidConfigurationError");
      expect(initError.body.errorMessage).toMatch(new RegExp(`^Invalid ${name}: `));
      expect(initError.body.errorMessage).toMatch(detail);
      expect(await ric.exited).toBe(1);
    });
  },
);
