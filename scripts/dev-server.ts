/**
 * `npm start` (and `npm run dev:dynamodb`, which adds `--dynamodb-local`): the Lambda handler on
 * http://127.0.0.1:$PORT (default 3000) with the booking assistant, or with `--config langgraph.json` a LangGraph
 * project's own graphs (as `langgraph dev --config` serves them; TypeScript graphs load through tsx). `npm start` compiles this file to
 * dist/dev/dev-server.js first and runs that with plain node: no TypeScript loader at run time, and
 * `--optimize-for-size`, which keeps the heap's headroom small (about 110 MB peak instead of 160 under
 * `npm run bench -- dev-server`, at no measurable CPU cost).
 *
 * Checkpoints live in the bounded in-memory saver; with --dynamodb-local in DynamoDB Local, started here from
 * the dev dependency and stopped with the server; with TABLE_NAME in DynamoDB (DYNAMODB_ENDPOINT for a DynamoDB
 * Local of your own). Every check (port, Java, endpoint, region, credentials, table) runs before the banner, and
 * SIGINT, SIGTERM and SIGHUP stop the server (requests under way get 5 s) and DynamoDB Local with it.
 */
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { loadDevKeys, signDevToken } from "../src/dev/auth";
import { CORS_ORIGINS_VARIABLE, readCorsOrigins } from "../src/dev/cors";
import { DEV_ASSISTANTS } from "../src/dev/assistants";
import { checkJava, startLocalDynamoDB, type LocalDynamoDB } from "../src/dev/dynamodb-local";
import { readDevGraphSchemas } from "../src/dev/graph-schemas-at-start";
import { devDirectory } from "../src/dev/paths";
import { startDevServer, type RunningDevServer } from "../src/dev/server";
import { readRuntimeConfig } from "../src/runtime/config";
import { loadLangGraphConfig } from "../src/runtime/graphs/langgraph-config";
import { loadLangGraphAuth } from "../src/runtime/graphs/langgraph-auth-config";
import { createLogger } from "../src/runtime/observability";
import { recoverRunsPeriodically, type RunRecovery } from "../src/dev/run-recovery";
import { fireCronsPeriodically, type CronTimer } from "../src/dev/cron-timer";
import type { ThreadRef } from "../src/runtime/runs/run-manager";
import type { GraphFactory } from "../src/runtime/types";
import { createHandler, type ApiHandler } from "../src/runtime/handler";
import type { HttpEvent } from "../src/runtime/http/http";
import type { HandlerContext } from "../src/runtime/types";
import { InvalidConfigurationError } from "../src/shared/errors";
import { inMemoryCheckpoints, type DevCheckpoints } from "./dev-checkpoints";
import type { DynamoDBCheckpointsOptions } from "./dev-table";

/** The table `npm run dev:dynamodb` uses unless TABLE_NAME names another. */
const LOCAL_TABLE_NAME = "memory-table-dev";
const SHUTDOWN_GRACE_MS = 5_000;
// How often stalled runs are looked for: a run's lease (30 s) lapses, then at most this long passes.
const RECOVERY_INTERVAL_MS = 15_000;
// How often due crons are looked for: a fire runs at most this late (schedules have minutes).
const CRON_INTERVAL_MS = 10_000;

const USAGE = `Usage:
  npm start                the dev server, checkpoints in memory (lost on restart)
  npm run dev:dynamodb     the dev server on DynamoDB Local, started and stopped with it (needs Java 17+)
  npm start -- --config langgraph.json
                           your LangGraph project's graphs instead of the booking example

Environment:
  PORT               port on 127.0.0.1 (default 3000; 0 picks a free one)
  TABLE_NAME         keep checkpoints in this DynamoDB table (in AWS: AWS_REGION and credentials)
  DYNAMODB_ENDPOINT  with TABLE_NAME: a DynamoDB Local you run yourself (the table is created when missing)
  LOG_LEVEL          fatal, error, warn, info (default), debug, trace or silent
  JAVA               the java binary for dev:dynamodb (default: java on PATH)
  DYNAMODB_LOCAL_DIR where dev:dynamodb keeps DynamoDB Local's data (default .dev/dynamodb-local)
  ${CORS_ORIGINS_VARIABLE} comma-separated browser origins allowed besides localhost, 127.0.0.1 and [::1]
                     (any port), like https://ui.example.com`;

interface Arguments {
  dynamodbLocal: boolean;
  help: boolean;
  /** A langgraph.json whose graphs are served instead of the booking example. */
  config?: string;
}

function parseArguments(args: string[]): Arguments {
  const parsed: Arguments = { dynamodbLocal: false, help: false };
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index]!;
    if (arg === "--dynamodb-local") parsed.dynamodbLocal = true;
    else if (arg === "--help" || arg === "-h") parsed.help = true;
    else if (arg === "--config" || arg.startsWith("--config=")) {
      const path = arg === "--config" ? args[(index += 1)] : arg.slice("--config=".length);
      if (!path) {
        throw new InvalidConfigurationError(
          "argument",
          "expected a langgraph.json path after --config",
        );
      }
      parsed.config = path;
    } else {
      throw new InvalidConfigurationError(
        "argument",
        `expected --dynamodb-local, --config <langgraph.json> or --help, got ${JSON.stringify(arg)}`,
      );
    }
  }
  return parsed;
}

function readPort(env: NodeJS.ProcessEnv): number {
  const value = env.PORT;
  if (value === undefined || value === "") return 3000;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) {
    throw new InvalidConfigurationError(
      "PORT",
      `expected an integer from 0 to 65535, got ${JSON.stringify(value)}`,
    );
  }
  return port;
}

/** Everything started so far, stopped in reverse order: by a signal, a startup error or a crash. */
class DevSession {
  server: RunningDevServer | undefined;
  local: LocalDynamoDB | undefined;
  /** DynamoDB Local's pid from its spawn on, before it answers and `local` is set. */
  localPid: number | undefined;
  checkpoints: DevCheckpoints | undefined;
  recovery: RunRecovery | undefined;
  crons: CronTimer | undefined;
  private stopping: Promise<void> | undefined;

  constructor() {
    // Whatever ends this process, DynamoDB Local (its own process group) must not outlive it.
    process.once("exit", () => {
      if (this.localPid !== undefined) kill(this.localPid, "SIGKILL");
    });
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.recovery?.stop();
      this.crons?.stop();
      await this.server?.shutdown(SHUTDOWN_GRACE_MS);
      this.checkpoints?.close();
      if (this.local) await this.local.stop(SHUTDOWN_GRACE_MS);
      else if (this.localPid !== undefined) kill(this.localPid, "SIGTERM"); // still starting
      this.localPid = undefined;
    })();
    return this.stopping;
  }

  get isStopping(): boolean {
    return this.stopping !== undefined;
  }
}

async function main(session: DevSession, args: Arguments): Promise<void> {
  // The project's graphs load before anything starts: a bad langgraph.json is a startup error, named. Its `env`
  // fills in process.env first, so the configuration read next (LANGGRAPH_CONFIG, PORT, ...) includes it.
  const assistants: Record<string, GraphFactory> = args.config
    ? await loadLangGraphConfig(args.config, {
        logger: createLogger(readRuntimeConfig(process.env).logLevel),
      })
    : DEV_ASSISTANTS;
  // Its `auth` (LangGraph's Auth): who each request's user is, and what they may see, inside the tenant.
  const projectAuth = args.config ? await loadLangGraphAuth(args.config) : undefined;
  const port = readPort(process.env);
  const corsOrigins = readCorsOrigins(process.env);
  const environment = readRuntimeConfig(process.env);
  if (args.dynamodbLocal) {
    if (environment.dynamodbEndpoint) {
      throw new InvalidConfigurationError(
        "DYNAMODB_ENDPOINT",
        `expected nothing with --dynamodb-local (it starts its own DynamoDB Local), got ${environment.dynamodbEndpoint}`,
      );
    }
    checkJava();
  }
  // Listen first, so that a busy port is reported before DynamoDB Local is started; until the checkpoints
  // are ready, requests get 503.
  const ready: { handler?: ApiHandler } = {};
  const keys = await loadDevKeys();
  session.server = await startDevServer({
    keys,
    port,
    corsOrigins,
    handler: Object.assign(
      (event: HttpEvent, context?: HandlerContext) =>
        ready.handler ? ready.handler(event, context) : Promise.resolve(starting()),
      {
        open: (event: HttpEvent, context?: HandlerContext) =>
          ready.handler ? ready.handler.open(event, context) : Promise.resolve(starting()),
        recoverRuns: async (threads: AsyncIterable<ThreadRef>) =>
          ready.handler ? ready.handler.recoverRuns(threads) : 0,
        fireDueCrons: async (now?: number) =>
          ready.handler ? ready.handler.fireDueCrons(now) : { fired: 0, failed: 0 },
      },
    ),
  });
  const url = session.server.url;

  let dataNote = "";
  if (args.dynamodbLocal) {
    const dbPath = resolve(
      process.env.DYNAMODB_LOCAL_DIR || join(devDirectory(), "dynamodb-local"),
    );
    session.local = await startLocalDynamoDB({
      dbPath,
      corsOrigin: url,
      onSpawn: (pid) => (session.localPid = pid),
    });
    const tableName = environment.tableName ?? LOCAL_TABLE_NAME;
    session.checkpoints = await dynamodbCheckpoints({
      tableName,
      endpoint: session.local.endpoint,
    });
    dataNote =
      `\nDynamoDB Local (pid ${session.local.pid}) keeps its data in ${dbPath}: delete it to start afresh.` +
      `\nLook inside: aws dynamodb scan --table-name ${tableName} --endpoint-url ${session.local.endpoint}` +
      " (any credentials and region)";
    void session.local.exited.then(({ code, signal, output }) => {
      if (session.isStopping) return;
      console.error(
        `DynamoDB Local exited (${code ?? signal}) while the dev server ran; stopping.\n${output.trim()}`,
      );
      void session.stop().finally(() => process.exit(1));
    });
  } else if (environment.tableName) {
    session.checkpoints = await dynamodbCheckpoints({
      tableName: environment.tableName,
      endpoint: environment.dynamodbEndpoint,
      region: process.env.AWS_REGION,
    });
  } else {
    session.checkpoints = inMemoryCheckpoints();
  }
  // What Studio renders its forms from: Annotation graphs' schemas come from their TypeScript (cached in .dev/),
  // read in a worker thread while the server answers; the schemas routes wait for them.
  const graphSchemas = readDevGraphSchemas(args.config, createLogger(environment.logLevel));
  ready.handler = createHandler({
    assistants,
    ...(projectAuth ? { auth: projectAuth } : {}),
    graphSchemas,
    metrics: false,
    environment,
    ...session.checkpoints.options,
  });
  // Runs a previous server left running on the same table go on now, and stalled ones on a schedule.
  const unsettled = session.checkpoints.unsettledThreads;
  if (unsettled) {
    session.recovery = recoverRunsPeriodically(
      ready.handler,
      unsettled,
      RECOVERY_INTERVAL_MS,
      createLogger(environment.logLevel),
    );
  }

  // Crons fire in this process, on either backend (in AWS, the worker's scheduled sweep fires them).
  session.crons = fireCronsPeriodically(
    ready.handler,
    CRON_INTERVAL_MS,
    createLogger(environment.logLevel),
  );

  const token = await signDevToken(keys, { tenantId: "demo" });
  const auth = `-H "Authorization: Bearer ${token}" -H 'content-type: application/json'`;
  const names = Object.keys(assistants).join(", ");
  console.log(`Memory Table dev server on ${url} (assistants: ${names}; checkpoints: ${session.checkpoints.description})${dataNote}
Dev token for tenant "demo" (12 h; another tenant: npm run -s token -- --tenant <id>):
${token}
${args.config ? projectHint(url) : bookingHint(url, auth)}${uiHint(url, Object.keys(assistants), corsOrigins)}
Stop with Ctrl-C.
`);
}

/** Checkpoints on DynamoDB, imported when a DynamoDB mode asks: the in-memory mode never loads the AWS SDK. */
async function dynamodbCheckpoints(options: DynamoDBCheckpointsOptions): Promise<DevCheckpoints> {
  const table = await import("./dev-table.js");
  return table.dynamodbCheckpoints(options);
}

function bookingHint(url: string, auth: string): string {
  return `
Start a booking (pauses for approval):
  curl -s ${url}/invoke ${auth} -d '{"thread_id":"t1","input":{"request":"move my appointment"}}'
Approve it:
  curl -s ${url}/invoke ${auth} -d '{"thread_id":"t1","resume":{"approve":true}}'
The approvals inbox:
  curl -s ${url}/threads/search ${auth} -d '{"status":"interrupted"}'
`;
}

function projectHint(url: string): string {
  return `
Each graph id is an assistant id for @langchain/langgraph-sdk (the token as apiKey, or as Authorization: Bearer):
  new Client({ apiUrl: "${url}", apiKey: "<the token above>" })
`;
}

/** What to type into a LangGraph UI's connect form (Agent Chat UI, Agent Inbox), and which pages may call. */
function uiHint(url: string, assistantIds: string[], corsOrigins: string[]): string {
  const listed = corsOrigins.length > 0 ? ` and ${corsOrigins.join(", ")}` : "";
  return `
Connect a LangGraph UI (Agent Chat UI, Agent Inbox) with:
  Deployment URL        ${url}
  Assistant / Graph ID  ${assistantIds.join(" or ")}
  LangSmith API Key     the dev token above (sent as X-Api-Key)
Pages on localhost, 127.0.0.1 and [::1] (any port)${listed} may call it; more origins: ${CORS_ORIGINS_VARIABLE}.
`;
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

function starting() {
  return {
    statusCode: 503,
    headers: { "content-type": "application/json", "retry-after": "1" },
    body: JSON.stringify({ message: "The dev server is starting" }),
  };
}

/** The next port from `after` on that nothing listens on, for the hint (undefined if none in ten). */
async function nextFreePort(after: number): Promise<number | undefined> {
  for (let port = after + 1; port <= Math.min(after + 10, 65535); port += 1) {
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once("error", () => resolve(false));
      probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
    });
    if (free) return port;
  }
  return undefined;
}

async function explain(error: unknown, args: Arguments): Promise<string> {
  if (!(error instanceof InvalidConfigurationError)) {
    return `Cannot start the dev server: ${(error as Error)?.stack ?? String(error)}`;
  }
  let message = `Cannot start the dev server: ${error.message}`;
  if (error.option === "PORT" && /another process/.test(error.message)) {
    const command = args.dynamodbLocal ? "npm run dev:dynamodb" : "npm start";
    const free = await nextFreePort(readPort(process.env));
    message += `\nStart it on another port: PORT=${free ?? "<port>"} ${command}`;
  }
  if (error.option === "argument") message += `\n\n${USAGE}`;
  return message;
}

const session = new DevSession();
let forced = false;
const onSignal = (signal: NodeJS.Signals) => {
  if (session.isStopping) {
    if (forced) return;
    forced = true;
    console.log(`${signal} again: stopping at once.`);
    process.exit(1); // the exit hook kills DynamoDB Local
  }
  console.log(`\n${signal}: stopping (${signal} again to stop at once)`);
  void session.stop().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error("Stopping failed:", error);
      process.exit(1);
    },
  );
};
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);
process.on("SIGHUP", onSignal);

async function run(): Promise<void> {
  let args: Arguments;
  try {
    args = parseArguments(process.argv.slice(2));
  } catch (error) {
    console.error(await explain(error, { dynamodbLocal: false, help: false }));
    process.exit(2);
  }
  if (args.help) {
    console.log(USAGE);
    return;
  }
  try {
    await main(session, args);
  } catch (error) {
    // Stopped by a signal while starting: the signal handler finishes the stop, nothing went wrong.
    if (session.isStopping) return;
    console.error(await explain(error, args));
    await session.stop().catch(() => undefined);
    process.exit(1);
  }
}

void run();
