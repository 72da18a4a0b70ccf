import { randomUUID } from "node:crypto";
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import type { InitError } from "./runtime-api";

/**
 * A stand-in for the Lambda Runtime API (2018-06-01) on 127.0.0.1 that speaks its response streaming protocol,
 * as aws-lambda-ric 4.x uses it for a handler wrapped by `awslambda.streamifyResponse`:
 *
 *   POST /runtime/invocation/{id}/response
 *     Lambda-Runtime-Function-Response-Mode: streaming
 *     Transfer-Encoding: chunked
 *     Trailer: Lambda-Runtime-Function-Error-Type, Lambda-Runtime-Function-Error-Body
 *     Content-Type: application/vnd.awslambda.http-integration-response   (after HttpResponseStream.from)
 *     body: <prelude JSON {statusCode, headers}> <8 NUL bytes> <the response body, as written>
 *
 * A failure mid-stream ends the same request with the two trailers (the error body base64 JSON). Every piece of
 * the body is kept with the time it arrived, so a test can tell a streamed response from a buffered one. It also
 * serves `invocation/next`, `init/error` and buffered `response` / `error` posts, like runtime-api.ts's
 * RuntimeApiEmulator (which reads whole bodies, so it cannot time a stream's chunks).
 */
export interface StreamedChunk {
  /** Date.now() when the bytes reached this server. */
  at: number;
  bytes: Buffer;
}

export type StreamingOutcome =
  | {
      kind: "streamed";
      requestId: string;
      /** Date.now() when the event was handed to the runtime (its `invocation/next` answered). */
      deliveredAt: number;
      /** Date.now() when the response request's headers arrived. */
      startedAt: number;
      /** Date.now() when its body ended: the invocation's end as Lambda sees it. */
      endedAt: number;
      headers: IncomingHttpHeaders;
      chunks: StreamedChunk[];
      body: Buffer;
      trailers: Record<string, string | undefined>;
    }
  | { kind: "response"; requestId: string; body: unknown }
  | { kind: "error"; requestId: string; errorType: string | undefined; body: unknown };

/** A streamed body read as a function URL reads it: the prelude, then the response body with arrival times. */
export interface HttpIntegrationResponse {
  prelude: { statusCode?: number; headers?: Record<string, string>; cookies?: string[] };
  body: Buffer;
  /** The response body's bytes (after the delimiter), each run of them with its arrival time. */
  bodyChunks: StreamedChunk[];
}

export const HTTP_INTEGRATION_CONTENT_TYPE = "application/vnd.awslambda.http-integration-response";
const DELIMITER = Buffer.alloc(8);

interface PendingInvocation {
  requestId: string;
  event: unknown;
  deadlineMs: number;
  deliveredAt: number;
  settle: (outcome: StreamingOutcome) => void;
}

const PREFIX = "/2018-06-01/runtime";
const FUNCTION_ARN = "arn:aws:lambda:us-east-1:123456789012:function:memory-table-stream";

export class StreamingRuntimeApi {
  private readonly server: Server;
  private readonly queue: PendingInvocation[] = [];
  private readonly inFlight = new Map<string, PendingInvocation>();
  private readonly waitingPolls: ServerResponse[] = [];
  private readonly initErrorWaiters: Array<(error: InitError) => void> = [];
  private readonly pollWaiters: Array<() => void> = [];
  /** Init errors posted and not yet taken, oldest first. */
  readonly initErrors: InitError[] = [];

  private constructor() {
    this.server = createServer((request, response) => {
      void this.route(request, response).catch((error: unknown) => {
        response.writeHead(500).end(String(error));
      });
    });
  }

  static async start(): Promise<StreamingRuntimeApi> {
    const api = new StreamingRuntimeApi();
    await new Promise<void>((resolve, reject) => {
      api.server.once("error", reject);
      api.server.listen(0, "127.0.0.1", resolve);
    });
    return api;
  }

  /** `host:port`, the value of AWS_LAMBDA_RUNTIME_API. */
  get address(): string {
    const { port } = this.server.address() as AddressInfo;
    return `127.0.0.1:${port}`;
  }

  /** Queues one event; resolves once the runtime has posted the whole response (or an error). */
  invoke(event: unknown, options: { timeoutMs?: number } = {}): Promise<StreamingOutcome> {
    return new Promise((settle) => {
      const invocation: PendingInvocation = {
        requestId: randomUUID(),
        event,
        deadlineMs: Date.now() + (options.timeoutMs ?? 30_000),
        deliveredAt: 0,
        settle,
      };
      const poll = this.takeLivePoll();
      if (poll) this.deliver(invocation, poll);
      else this.queue.push(invocation);
    });
  }

  /** Resolves with the next init error (or one already posted and not yet taken). */
  nextInitError(): Promise<InitError> {
    const posted = this.initErrors.shift();
    if (posted) return Promise.resolve(posted);
    return new Promise((resolve) => this.initErrorWaiters.push(resolve));
  }

  /** Resolves once a runtime is blocked on `invocation/next`: it finished its init and is idle. */
  waitForIdleRuntime(): Promise<void> {
    if (this.waitingPolls.length > 0) return Promise.resolve();
    return new Promise((resolve) => this.pollWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    for (const poll of this.waitingPolls.splice(0)) poll.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = request.url ?? "";
    if (request.method === "GET" && url === `${PREFIX}/invocation/next`) {
      await readBody(request);
      const invocation = this.queue.shift();
      if (invocation) this.deliver(invocation, response);
      else {
        this.waitingPolls.push(response);
        response.on("close", () => removeItem(this.waitingPolls, response));
        for (const waiter of this.pollWaiters.splice(0)) waiter();
      }
      return;
    }
    if (request.method === "POST" && url === `${PREFIX}/init/error`) {
      const initError: InitError = {
        errorType: header(request, "lambda-runtime-function-error-type"),
        body: parseJson((await readBody(request)).toString("utf8")) as InitError["body"],
      };
      const waiter = this.initErrorWaiters.shift();
      if (waiter) waiter(initError);
      else this.initErrors.push(initError);
      accepted(response);
      return;
    }
    const match = /^\/2018-06-01\/runtime\/invocation\/([^/]+)\/(response|error)$/.exec(url);
    if (request.method === "POST" && match) {
      const requestId = decodeURIComponent(match[1]!);
      const invocation = this.inFlight.get(requestId);
      if (!invocation) {
        await readBody(request);
        response.writeHead(400).end(`unknown request id ${requestId}`);
        return;
      }
      this.inFlight.delete(requestId);
      const streaming =
        match[2] === "response" &&
        header(request, "lambda-runtime-function-response-mode") === "streaming";
      if (streaming) {
        const startedAt = Date.now();
        const chunks: StreamedChunk[] = [];
        // Timestamped as the bytes arrive, not when the request ends: this is what tells streaming apart.
        request.on("data", (bytes: Buffer) => chunks.push({ at: Date.now(), bytes }));
        await new Promise<void>((resolve, reject) => {
          request.once("end", resolve);
          request.once("error", reject);
        });
        const endedAt = Date.now();
        accepted(response);
        invocation.settle({
          kind: "streamed",
          requestId,
          deliveredAt: invocation.deliveredAt,
          startedAt,
          endedAt,
          headers: request.headers,
          chunks,
          body: Buffer.concat(chunks.map((chunk) => chunk.bytes)),
          // Sent after the last chunk: present only when the stream failed.
          trailers: {
            errorType: request.trailers["lambda-runtime-function-error-type"],
            errorBody: request.trailers["lambda-runtime-function-error-body"],
          },
        });
        return;
      }
      const body = parseJson((await readBody(request)).toString("utf8"));
      accepted(response);
      invocation.settle(
        match[2] === "response"
          ? { kind: "response", requestId, body }
          : {
              kind: "error",
              requestId,
              errorType: header(request, "lambda-runtime-function-error-type"),
              body,
            },
      );
      return;
    }
    await readBody(request);
    response.writeHead(404).end(`no route ${request.method} ${url}`);
  }

  /** A waiting `next` request whose client is still connected (a killed runtime's socket may linger). */
  private takeLivePoll(): ServerResponse | undefined {
    for (let poll = this.waitingPolls.shift(); poll; poll = this.waitingPolls.shift()) {
      if (poll.socket && !poll.socket.destroyed) return poll;
    }
    return undefined;
  }

  private deliver(invocation: PendingInvocation, response: ServerResponse): void {
    this.inFlight.set(invocation.requestId, invocation);
    invocation.deliveredAt = Date.now();
    response
      .writeHead(200, {
        "content-type": "application/json",
        "lambda-runtime-aws-request-id": invocation.requestId,
        "lambda-runtime-deadline-ms": String(invocation.deadlineMs),
        "lambda-runtime-invoked-function-arn": FUNCTION_ARN,
        "lambda-runtime-trace-id": `Root=1-${Date.now().toString(16)}-${randomUUID().replace(/-/g, "").slice(0, 24)};Sampled=0`,
      })
      .end(JSON.stringify(invocation.event));
  }
}

/**
 * Splits a streamed body as Lambda does for a function URL: with the http-integration content type, the JSON
 * prelude up to the first 8 NUL bytes, then the body; any other content type is all body, status 200.
 */
export function readHttpIntegrationResponse(
  outcome: Extract<StreamingOutcome, { kind: "streamed" }>,
): HttpIntegrationResponse {
  if (outcome.headers["content-type"] !== HTTP_INTEGRATION_CONTENT_TYPE) {
    return { prelude: {}, body: outcome.body, bodyChunks: outcome.chunks };
  }
  const split = outcome.body.indexOf(DELIMITER);
  if (split === -1) {
    throw new Error(
      `expected a prelude ended by 8 NUL bytes, got ${JSON.stringify(outcome.body.toString("utf8").slice(0, 200))}`,
    );
  }
  const prelude = JSON.parse(
    outcome.body.subarray(0, split).toString("utf8"),
  ) as HttpIntegrationResponse["prelude"];
  const bodyStart = split + DELIMITER.length;
  // Cut the arrival record at the same offset: a chunk holding the delimiter gives only what follows it.
  const bodyChunks: StreamedChunk[] = [];
  let offset = 0;
  for (const chunk of outcome.chunks) {
    const end = offset + chunk.bytes.length;
    if (end > bodyStart) {
      bodyChunks.push({
        at: chunk.at,
        bytes: chunk.bytes.subarray(Math.max(0, bodyStart - offset)),
      });
    }
    offset = end;
  }
  return { prelude, body: outcome.body.subarray(bodyStart), bodyChunks };
}

function accepted(response: ServerResponse): void {
  response.writeHead(202, { "content-type": "application/json" }).end('{"status":"OK"}');
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks)));
    request.on("error", reject);
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function removeItem<T>(list: T[], item: T): void {
  const index = list.indexOf(item);
  if (index !== -1) list.splice(index, 1);
}
