import { randomUUID } from "node:crypto";
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A Lambda Runtime API (2018-06-01) on 127.0.0.1: the part of the Lambda service that a runtime interface client
 * talks to. It serves `invocation/next`, accepts `response`, `error` and `init/error`, and lets a test queue
 * events and await their outcome, so the image's entry runs exactly as it would on Lambda.
 *
 * It also speaks the response streaming protocol aws-lambda-ric 4.x uses for a handler wrapped by
 * `awslambda.streamifyResponse`: a `response` POST with `Lambda-Runtime-Function-Response-Mode: streaming`, a
 * chunked body (for a function URL: a JSON prelude, 8 NUL bytes, then the body as written), and a failure
 * mid-stream as the two `Lambda-Runtime-Function-Error-*` trailers. Each chunk is kept with the time it
 * arrived, so a test can tell a streamed response from a buffered one (http-integration-response.ts reads it).
 */
export type InvocationOutcome =
  | { kind: "response"; requestId: string; body: unknown }
  | { kind: "error"; requestId: string; errorType: string | undefined; body: unknown }
  | StreamedOutcome;

export interface StreamedChunk {
  /** Date.now() when the bytes reached this server. */
  at: number;
  bytes: Buffer;
}

export interface StreamedOutcome {
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
  /** Sent after the last chunk: present only when the stream failed. */
  trailers: { errorType: string | undefined; errorBody: string | undefined };
}

export interface InitError {
  errorType: string | undefined;
  body: { errorType?: string; errorMessage?: string; [key: string]: unknown };
}

interface PendingInvocation {
  requestId: string;
  event: unknown;
  deadlineMs: number;
  deliveredAt: number;
  settle: (outcome: InvocationOutcome) => void;
}

export interface InvokeOptions {
  /** Milliseconds the function has for this invocation (Lambda-Runtime-Deadline-Ms = now + this). */
  timeoutMs?: number;
}

const PREFIX = "/2018-06-01/runtime";
const FUNCTION_ARN = "arn:aws:lambda:us-east-1:123456789012:function:memory-table";

export class RuntimeApiEmulator {
  private readonly server: Server;
  private readonly queue: PendingInvocation[] = [];
  private readonly inFlight = new Map<string, PendingInvocation>();
  private readonly waitingPolls: ServerResponse[] = [];
  private readonly initErrorWaiters: Array<(error: InitError) => void> = [];
  private readonly pollWaiters: Array<() => void> = [];
  /** Init errors posted so far, oldest first. */
  readonly initErrors: InitError[] = [];
  /** Number of `invocation/next` requests received (a client is ready when this grows). */
  nextPolls = 0;

  private constructor() {
    this.server = createServer((request, response) => {
      void this.route(request, response).catch((error: unknown) => {
        response.writeHead(500).end(String(error));
      });
    });
  }

  static async start(): Promise<RuntimeApiEmulator> {
    const emulator = new RuntimeApiEmulator();
    await new Promise<void>((resolve, reject) => {
      emulator.server.once("error", reject);
      emulator.server.listen(0, "127.0.0.1", resolve);
    });
    return emulator;
  }

  /** `host:port`, the value of AWS_LAMBDA_RUNTIME_API. */
  get address(): string {
    const { port } = this.server.address() as AddressInfo;
    return `127.0.0.1:${port}`;
  }

  /** Queues one event; resolves when the runtime posts its response or its error. */
  invoke(event: unknown, options: InvokeOptions = {}): Promise<InvocationOutcome> {
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

  /** Resolves once a runtime is blocked on `invocation/next`, i.e. it finished init and is idle. */
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
    const match = /^\/2018-06-01\/runtime\/invocation\/([^/]+)\/(response|error)$/.exec(url);
    if (
      request.method === "POST" &&
      match?.[2] === "response" &&
      header(request, "lambda-runtime-function-response-mode") === "streaming"
    ) {
      await this.readStream(decodeURIComponent(match[1]!), request, response);
      return;
    }
    const body = await readBody(request);
    if (request.method === "GET" && url === `${PREFIX}/invocation/next`) {
      this.nextPolls += 1;
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
        body: parseJson(body) as InitError["body"],
      };
      const waiter = this.initErrorWaiters.shift();
      if (waiter) waiter(initError);
      else this.initErrors.push(initError);
      response.writeHead(202, { "content-type": "application/json" }).end('{"status":"OK"}');
      return;
    }
    if (request.method === "POST" && match) {
      const requestId = decodeURIComponent(match[1]!);
      const invocation = this.inFlight.get(requestId);
      if (!invocation) {
        response.writeHead(400).end(`unknown request id ${requestId}`);
        return;
      }
      this.inFlight.delete(requestId);
      invocation.settle(
        match[2] === "response"
          ? { kind: "response", requestId, body: parseJson(body) }
          : {
              kind: "error",
              requestId,
              errorType: header(request, "lambda-runtime-function-error-type"),
              body: parseJson(body),
            },
      );
      response.writeHead(202, { "content-type": "application/json" }).end('{"status":"OK"}');
      return;
    }
    response.writeHead(404).end(`no route ${request.method} ${url}`);
  }

  private async readStream(
    requestId: string,
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<void> {
    const invocation = this.inFlight.get(requestId);
    if (!invocation) {
      await readBody(request);
      response.writeHead(400).end(`unknown request id ${requestId}`);
      return;
    }
    this.inFlight.delete(requestId);
    const startedAt = Date.now();
    const chunks: StreamedChunk[] = [];
    // Timestamped as the bytes arrive, not when the request ends: this is what tells streaming apart.
    request.on("data", (bytes: Buffer) => chunks.push({ at: Date.now(), bytes }));
    await new Promise<void>((resolve, reject) => {
      request.once("end", resolve);
      request.once("error", reject);
    });
    response.writeHead(202, { "content-type": "application/json" }).end('{"status":"OK"}');
    invocation.settle({
      kind: "streamed",
      requestId,
      deliveredAt: invocation.deliveredAt,
      startedAt,
      endedAt: Date.now(),
      headers: request.headers,
      chunks,
      body: Buffer.concat(chunks.map((chunk) => chunk.bytes)),
      trailers: {
        errorType: request.trailers["lambda-runtime-function-error-type"],
        errorBody: request.trailers["lambda-runtime-function-error-body"],
      },
    });
  }

  /** A waiting `next` request whose client is still connected (a killed runtime's socket may not be closed yet). */
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

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
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
