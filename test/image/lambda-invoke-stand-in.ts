import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { startRic, type RicProcess } from "./ric-process";
import { RuntimeApiEmulator, type InvocationOutcome } from "./runtime-api";

/**
 * Stand-ins for the two parts of the Lambda service that background runs go through and that have no local
 * engine: a function's execution environments (Lambda starting the image under aws-lambda-ric, one invocation
 * at a time each, a new one when all are busy, killed at the invocation's deadline), and the Invoke API the API
 * function calls to hand a job to the worker (`InvocationType: Event`: 202 at once, the event delivered later).
 */

export interface LambdaFunctionOptions {
  /** The function's name, as WORKER_FUNCTION_NAME gives it. */
  name: string;
  node: string;
  taskRoot: string;
  /** The image's CMD: `index.handler`, `worker.handler`. */
  handler: string;
  env: Record<string, string>;
  /** The function's timeout: each invocation's deadline is this long after it is delivered. */
  timeoutMs: number;
}

/** How one invocation ended: the runtime's answer, Lambda's kill at the deadline, or the runtime's death. */
export type FunctionOutcome =
  InvocationOutcome | { kind: "timeout" } | { kind: "exited"; detail: string };

export interface FunctionInvocation {
  event: unknown;
  /** The process id of the execution environment that ran it. */
  pid: number;
  started: number;
  outcome?: FunctionOutcome;
  ended?: number;
}

interface Environment {
  api?: RuntimeApiEmulator;
  ric?: RicProcess;
  busy: boolean;
  /** Resolves once the runtime finished its init (it polls for an invocation), rejects if it died first. */
  ready: Promise<void>;
}

/** A Lambda function running the image: its execution environments, started as invocations need them. */
export class LambdaFunctionStandIn {
  /** Environments that take invocations. */
  private readonly live: Environment[] = [];
  /** Every environment started, live or not (for their output and process ids). */
  private readonly started: Environment[] = [];
  /** Every invocation so far, in the order they were delivered. */
  readonly invocations: FunctionInvocation[] = [];

  constructor(readonly options: LambdaFunctionOptions) {}

  /** Process ids of the execution environments started so far. */
  get pids(): number[] {
    return this.started.flatMap(({ ric }) => (ric?.child.pid ? [ric.child.pid] : []));
  }

  /** Everything the environments wrote, one block per environment. */
  output(): string {
    return this.started
      .map(({ ric }) => `--- ${this.options.name} pid ${ric?.child.pid}\n${ric?.output() ?? ""}`)
      .join("\n");
  }

  /**
   * Runs one invocation in an idle environment, or a new one (a cold start) when every one is busy, as Lambda
   * scales a function. The deadline counts from delivery (an init has a budget of its own); an invocation still
   * running at it is ended as Lambda ends it: the environment is killed and never used again.
   */
  async invoke(event: unknown): Promise<FunctionOutcome> {
    const environment = this.live.find((candidate) => !candidate.busy) ?? this.start();
    environment.busy = true;
    try {
      await environment.ready;
      const { api, ric } = environment as Required<Environment>;
      const invocation: FunctionInvocation = { event, pid: ric.child.pid!, started: Date.now() };
      this.invocations.push(invocation);
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<FunctionOutcome>((resolve) => {
        timer = setTimeout(() => resolve({ kind: "timeout" }), this.options.timeoutMs);
      });
      const exited = ric.exited.then((code): FunctionOutcome => ({
        kind: "exited",
        detail: `exit ${String(code)}`,
      }));
      const outcome = await Promise.race([
        api.invoke(event, { timeoutMs: this.options.timeoutMs }),
        deadline,
        exited,
      ]).finally(() => clearTimeout(timer));
      invocation.outcome = outcome;
      invocation.ended = Date.now();
      if (outcome.kind === "timeout" || outcome.kind === "exited") await this.retire(environment);
      return outcome;
    } catch (error) {
      await this.retire(environment);
      throw error;
    } finally {
      environment.busy = false;
    }
  }

  async stop(): Promise<void> {
    this.live.splice(0);
    await Promise.all(this.started.map((environment) => this.shutdown(environment)));
  }

  private start(): Environment {
    const environment: Environment = { busy: false, ready: Promise.resolve() };
    environment.ready = RuntimeApiEmulator.start().then(async (api) => {
      const ric = startRic({
        node: this.options.node,
        taskRoot: this.options.taskRoot,
        handler: this.options.handler,
        runtimeApi: api.address,
        env: { AWS_LAMBDA_FUNCTION_NAME: this.options.name, ...this.options.env },
      });
      environment.api = api;
      environment.ric = ric;
      // Usable once its runtime polls for an invocation; a runtime that exits first (an init error) fails the
      // invocation given to it, with its output.
      await Promise.race([
        api.waitForIdleRuntime(),
        ric.exited.then((code) => {
          throw new Error(
            `${this.options.name} (${this.options.handler}) exited (${String(code)}) during its init:\n${ric.output()}`,
          );
        }),
      ]);
    });
    this.live.push(environment);
    this.started.push(environment);
    return environment;
  }

  /** Takes an environment out of service: Lambda does not reuse one it killed or whose runtime died. */
  private async retire(environment: Environment): Promise<void> {
    const index = this.live.indexOf(environment);
    if (index !== -1) this.live.splice(index, 1);
    await environment.ric?.kill();
  }

  private async shutdown(environment: Environment): Promise<void> {
    await environment.ready.catch(() => undefined);
    await environment.ric?.kill();
    await environment.api?.stop().catch(() => undefined);
  }
}

/** One request to the Invoke API, as received. */
export interface InvokeRequest {
  functionName: string;
  invocationType: string;
  payload: unknown;
  /** How the asynchronous invocation it started ended (once it has). */
  outcome?: FunctionOutcome;
}

/**
 * The Lambda Invoke API (`POST /2015-03-31/functions/{name}/invocations`) on 127.0.0.1, for the functions it is
 * given. An `Event` invocation is answered 202 at once and its payload delivered to the function afterwards, as
 * Lambda's internal queue does; the AWS SDK in the image reaches it through AWS_ENDPOINT_URL_LAMBDA.
 */
export class LambdaInvokeApiStandIn {
  private readonly server: Server;
  private readonly underway = new Set<Promise<unknown>>();
  /** Every request so far, in order. */
  readonly requests: InvokeRequest[] = [];

  private readonly functions = new Map<string, LambdaFunctionStandIn>();

  private constructor() {
    this.server = createServer((request, response) => {
      void this.route(request, response).catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(500).end(String(error));
      });
    });
  }

  static async start(): Promise<LambdaInvokeApiStandIn> {
    const standIn = new LambdaInvokeApiStandIn();
    await new Promise<void>((resolve, reject) => {
      standIn.server.once("error", reject);
      standIn.server.listen(0, "127.0.0.1", resolve);
    });
    return standIn;
  }

  /** Makes a function invocable by its name (a function given its endpoint can be served after the start). */
  serve(fn: LambdaFunctionStandIn): void {
    this.functions.set(fn.options.name, fn);
  }

  /** The value of AWS_ENDPOINT_URL_LAMBDA. */
  get endpoint(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** Resolves once every asynchronous invocation started so far (and those they started) has ended. */
  async drain(): Promise<void> {
    while (this.underway.size > 0) await Promise.all([...this.underway]);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await readBody(request);
    const match = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec(
      new URL(request.url ?? "/", "http://localhost").pathname,
    );
    if (request.method !== "POST" || !match) {
      return error(response, 404, "UnrecognizedClientException", `no route ${request.url}`);
    }
    const functionName = decodeURIComponent(match[1]!);
    const fn = this.functions.get(functionName);
    if (!fn) {
      return error(
        response,
        404,
        "ResourceNotFoundException",
        `Function not found: arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
      );
    }
    const invocationType = headerOf(request, "x-amz-invocation-type") ?? "RequestResponse";
    if (invocationType !== "Event") {
      // The image only ever invokes asynchronously; anything else here is a bug worth seeing.
      return error(
        response,
        400,
        "InvalidParameterValueException",
        `this stand-in serves InvocationType Event only, got ${invocationType}`,
      );
    }
    const record: InvokeRequest = { functionName, invocationType, payload: JSON.parse(body) };
    this.requests.push(record);
    response.writeHead(202, { "x-amzn-requestid": `invoke-${this.requests.length}` }).end();
    const delivered = fn.invoke(record.payload).then(
      (outcome) => (record.outcome = outcome),
      (failure: unknown) => (record.outcome = { kind: "exited", detail: String(failure) }),
    );
    this.underway.add(delivered);
    void delivered.finally(() => this.underway.delete(delivered));
  }
}

function error(response: ServerResponse, status: number, type: string, message: string): void {
  response
    .writeHead(status, { "content-type": "application/json", "x-amzn-errortype": type })
    .end(JSON.stringify({ Type: "User", message }));
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

function headerOf(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
