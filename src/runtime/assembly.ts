import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { LambdaClient } from "@aws-sdk/client-lambda";
import { awaitAllCallbacks } from "@langchain/core/callbacks/promises";
import type { Logger } from "pino";
import type { AssistantStore } from "../shared/assistants";
import { DEFAULT_MAX_CRONS_PER_TENANT, type CronStore } from "../shared/crons";
import { InvalidConfigurationError } from "../shared/errors";
import { boundTenantOf } from "../shared/tenant-scope";
import type { RunStore } from "../shared/runs";
import type { ThreadStore } from "../shared/threads";
import { AssistantDirectory } from "./http/assistant-directory";
import { readRuntimeConfig, type AssistantDefaults, type RuntimeConfig } from "./config";
import { LANGGRAPH_ENVIRONMENT } from "./environment";
import { InMemoryCronStore } from "./crons/in-memory-cron-store";
import { InProcessDispatcher } from "./runs/dispatchers";
import { RunEngine, type TenantSaver } from "./graphs/engine";
import { GraphRegistry } from "./graphs/graph-registry";
import type { SourceSchemasByGraph } from "./graphs/graph-schemas";
import { InMemoryAssistantStore } from "./graphs/in-memory-assistant-store";
import { InMemoryRunEventStore } from "./runs/in-memory-run-event-store";
import { InMemoryRunStore } from "./runs/in-memory-run-store";
import { InMemoryThreadStore } from "./runs/in-memory-thread-store";
import { createLogger, RunMetrics, stdoutSink, type MetricsSink } from "./observability";
import { RunEventLog } from "./runs/run-event-log";
import { RunManager, type RunDispatcher } from "./runs/run-manager";
import { RequestScope } from "./graphs/scoped-checkpointer";
import type { TableBacking } from "./table-backing";
import type { AnySaver, CheckpointerOption, GraphFactory, StoreOption } from "./types";
import { resolveStore } from "./store-option";
import { authorizeStores, resolveAuth } from "./auth/authorized-stores";
import type { LangGraphAuth } from "./auth/langgraph-auth";
import { AllowListWebhookSender, type WebhookSender } from "./runs/webhooks";

/** A leg run in this process has a worker function's longest timeout, less a minute. */
const IN_PROCESS_LEG_MS = 14 * 60 * 1000;
/** A leg's lease lapses this long after its last renewal (a crashed worker frees the thread this soon). */
const RUN_LEASE_MS = 30_000;
/** A leg renews its lease, and looks for a request to stop, this often. */
const RUN_HEARTBEAT_MS = 5_000;

export interface HandlerOptions {
  /** The graphs, by assistant id. Give this or `graph`. */
  assistants?: Record<string, GraphFactory>;
  /** A single graph, served as assistant `agent`. */
  graph?: GraphFactory;
  /**
   * JSON schemas of the graphs read from their TypeScript ahead of time, by graph id: what
   * `GET /assistants/{id}/schemas` answers for graphs built with `Annotation`, which carry none at run time (zod
   * and StateSchema graphs describe themselves). The dev server reads them at start, the image build into
   * `graph-schemas.json`. Default: none (such a graph's schemas are unknown). A promise of them lets the handler
   * serve while they are read (the dev server reads them in a worker thread): the schemas and subgraphs routes
   * wait for it, every other route does not.
   */
  graphSchemas?: SourceSchemasByGraph | Promise<SourceSchemasByGraph>;
  /**
   * A saver shared by all tenants (the handler scopes thread ids by tenant; a saver bound to one tenant, such
   * as a DynamoDBSaver, is refused here), a function building one per request for the caller's tenant (a
   * saver it returns bound to another tenant is refused), or `false` for stateless runs. Default: a DynamoDBSaver per request when
   * a table name is set (option or `TABLE_NAME`), else stateless.
   */
  checkpointer?: CheckpointerOption;
  /**
   * The graphs' long-term memory store (and the `/store` routes'): a function giving the store of one request's
   * tenant (a store it returns bound to another tenant, or one it returns for two tenants, is refused), or
   * `false` for none. Default: a DynamoDBStore per tenant on the handler's table when it has one (the default
   * checkpointing with a table name), else one BoundedInMemoryStore per container, a view per tenant.
   */
  store?: StoreOption;
  /** DynamoDB table (default `TABLE_NAME`). Used when `checkpointer` is not given. */
  tableName?: string;
  /** DynamoDB client shared by every request of the container (default: one built from the environment). */
  dynamodbClient?: DynamoDBClient;
  /** Seconds a DynamoDB thread lives after its last write (default 30 days). */
  ttlSeconds?: number;
  /** Thread records, leases and the inbox. Default: the table's, or in memory for other checkpointers. */
  threadStore?: ThreadStore;
  /** Run records. Default: the table's, or in memory for other checkpointers. */
  runStore?: RunStore;
  /**
   * Assistants created through the API. Default: the table's, or in memory for other checkpointers; none when
   * stateless (only each graph's system assistant exists, and creating one answers 400).
   */
  assistantStore?: AssistantStore;
  /** Crons. Default: the table's, or in memory for other checkpointers; none when stateless. */
  cronStore?: CronStore;
  /** Crons one tenant may have at most (default 100); creating one more answers 409. */
  maxCronsPerTenant?: number;
  /** The clock due crons are fired by (default Date.now): a test moves it rather than wait for a minute. */
  cronClock?: () => number;
  /** Fire due crons and accept new ones (default: CRONS_ENABLED, true when unset). */
  cronsEnabled?: boolean;
  /** JWT claim carrying the tenant id (default `TENANT_CLAIM` or `custom:tenant_id`). */
  tenantClaim?: string;
  /**
   * LangGraph's authorization inside each tenant (`Auth` of `@langchain/langgraph-sdk/auth`, what langgraph.json's
   * `auth.path` names): its `authenticate` names the user after the credential named the tenant, its `on` handlers
   * stamp and filter threads, runs, assistants, crons and store items. Default: `AUTH_POLICY` (`owner-only` is
   * {@link ownerOnly}), else none.
   */
  auth?: LangGraphAuth;
  /**
   * The configuration read from the environment (TABLE_NAME, TENANT_CLAIM, LOG_LEVEL, DEADLINE_MARGIN_MS,
   * DYNAMODB_ENDPOINT); default: read from `process.env` once, here. Options given in code win over it.
   */
  environment?: RuntimeConfig;
  /** Largest accepted request body in bytes (default 256 KiB). */
  maxBodyBytes?: number;
  /** A run is stopped this many ms before the Lambda deadline (default `DEADLINE_MARGIN_MS` or 3000). */
  deadlineMarginMs?: number;
  /** Time budget when the Lambda context has none (default 30 s). */
  defaultRemainingMs?: number;
  /** LangGraph durability of runs (default LangGraph's: "async"). */
  durability?: "sync" | "async" | "exit";
  logger?: Logger;
  /** Where EMF metric lines go (default stdout); `false` for none. */
  metrics?: MetricsSink | false;
  /**
   * Where background runs run: the worker function (default when `WORKER_FUNCTION_NAME` is set), or this
   * process (the default otherwise: the dev server, tests, a long-running server).
   */
  dispatcher?: RunDispatcher;
  /** Budget of one leg run in this process (default 15 minutes, a worker function's longest timeout). */
  inProcessLegMs?: number;
  /** A Lambda client for the worker dispatcher (default: one built from the environment). */
  lambdaClient?: LambdaClient;
  /**
   * A background run's lease lapses this long after its last renewal (default 30 s): how soon a run whose worker
   * died is taken over. Its leg renews it every `runHeartbeatMs` (default 5 s), and looks for a cancel then.
   */
  runLeaseMs?: number;
  runHeartbeatMs?: number;
}

/** Everything the API handler and the worker share, built once per container. */
export interface Runtime {
  environment: RuntimeConfig;
  logger: Logger;
  /** The project's LangGraph `auth` handlers; undefined: every user of a tenant sees all of it. */
  auth: LangGraphAuth | undefined;
  registry: GraphRegistry;
  /** System and stored assistants. */
  assistants: AssistantDirectory;
  engine: RunEngine;
  metrics: RunMetrics;
  runs: RunManager | undefined;
  webhooks: WebhookSender;
  /** The tenants' crons (none without a checkpointer). */
  crons: CronStore | undefined;
  /** False: no cron fires and none can be created (existing ones stay readable and deletable). */
  cronsEnabled: boolean;
  maxCronsPerTenant: number;
  cronClock: () => number;
  deadlineMarginMs: number;
}

/** Builds the runtime from the options (and the environment, read once). */
export function assembleRuntime(options: HandlerOptions): Runtime {
  const environment = options.environment ?? readRuntimeConfig(process.env);
  const logger = options.logger ?? createLogger(environment.logLevel);
  const factories = resolveAssistants(options);
  const deadlineMarginMs = positive(
    "deadlineMarginMs",
    options.deadlineMarginMs,
    environment.deadlineMarginMs,
    true,
  );
  const auth = resolveAuth(options.auth, environment.authPolicy);
  const { saverFor, store, runs, assistantStore, cronStore, table } = authorizeStores(
    auth,
    resolveCheckpointing(options, environment),
  );
  const storeFor = resolveStore(options.store, table);
  // One scope sets both the saver and the store of a request: graphs see one tenant's state and memories.
  const scope = saverFor || storeFor ? new RequestScope() : undefined;
  const registry = new GraphRegistry(
    factories,
    saverFor ? scope?.checkpointer : undefined,
    logger,
    storeFor ? scope?.store : undefined,
    options.graphSchemas,
  );
  const assistants = new AssistantDirectory({
    registry,
    store: assistantStore,
    defaults: systemAssistantDefaults(environment, registry, logger),
  });
  const engine = new RunEngine({
    registry,
    scope,
    store,
    saverFor,
    storeFor,
    deadlineMarginMs,
    durability: options.durability,
    logger,
  });
  const metrics = new RunMetrics(
    options.metrics === false ? undefined : (options.metrics ?? stdoutSink),
  );
  const webhooks = new AllowListWebhookSender(
    {
      allowedHosts: environment.webhookAllowedHosts,
      ...(environment.webhookSigningKey ? { signingKey: environment.webhookSigningKey } : {}),
    },
    logger,
  );
  let manager: RunManager | undefined;
  if (store && runs) {
    const dispatcher = resolveDispatcher(options, environment, logger);
    manager = new RunManager({
      engine,
      threads: store,
      runs,
      dispatcher,
      metrics,
      webhooks,
      logger,
      maxLegs: environment.maxRunLegs,
      ...runLease(options),
      durability: options.durability,
      // Stream events live where the runs do: the table's, or this process's memory.
      events: new RunEventLog(table?.runEvents ?? new InMemoryRunEventStore(), logger),
    });
    if (dispatcher instanceof InProcessDispatcher) dispatcher.attach(manager);
  }
  return {
    environment,
    logger,
    auth,
    registry,
    assistants,
    engine,
    metrics,
    runs: manager,
    webhooks,
    crons: manager ? cronStore : undefined,
    cronsEnabled: options.cronsEnabled ?? environment.cronsEnabled,
    maxCronsPerTenant: wholeNumber(
      "maxCronsPerTenant",
      options.maxCronsPerTenant,
      DEFAULT_MAX_CRONS_PER_TENANT,
    ),
    cronClock: options.cronClock ?? Date.now,
    deadlineMarginMs,
  };
}

function runLease(options: HandlerOptions): { leaseMs: number; heartbeatMs: number } {
  const leaseMs = positive("runLeaseMs", options.runLeaseMs, RUN_LEASE_MS);
  const heartbeatMs = positive("runHeartbeatMs", options.runHeartbeatMs, RUN_HEARTBEAT_MS);
  if (heartbeatMs * 2 > leaseMs) {
    // One late renewal must not lose the lease of a live leg.
    throw new InvalidConfigurationError(
      "runHeartbeatMs",
      `expected at most half of runLeaseMs (${leaseMs}), got ${heartbeatMs}`,
    );
  }
  return { leaseMs, heartbeatMs };
}

function resolveDispatcher(
  options: HandlerOptions,
  environment: RuntimeConfig,
  logger: Logger,
): RunDispatcher {
  if (options.dispatcher) return options.dispatcher;
  if (environment.workerFunctionName) {
    return loadOnDemand()
      .lambdaDispatcher()
      .openWorkerDispatcher(environment.workerFunctionName, options.lambdaClient);
  }
  return new InProcessDispatcher(
    positive("inProcessLegMs", options.inProcessLegMs, IN_PROCESS_LEG_MS),
    logger,
  );
}

export function resolveAssistants(options: HandlerOptions): Record<string, GraphFactory> {
  if (options.assistants && options.graph) {
    throw new InvalidConfigurationError("graph", "expected either assistants or graph, got both");
  }
  if (options.graph) return { agent: options.graph };
  if (options.assistants) return options.assistants;
  throw new InvalidConfigurationError(
    "assistants",
    "expected a map of GraphFactory functions, got nothing",
  );
}

function resolveCheckpointing(
  options: HandlerOptions,
  environment: RuntimeConfig,
): {
  saverFor: ((tenantId: string) => TenantSaver) | undefined;
  store: ThreadStore | undefined;
  runs: RunStore | undefined;
  assistantStore: AssistantStore | undefined;
  cronStore: CronStore | undefined;
  /** What the handler keeps in its table (the default checkpointing with a table name). */
  table?: TableBacking;
} {
  const checkpointer = options.checkpointer;
  const assistantStore = options.assistantStore;
  if (checkpointer === false) {
    return {
      saverFor: undefined,
      store: undefined,
      runs: undefined,
      assistantStore,
      cronStore: undefined,
    };
  }
  if (typeof checkpointer === "function") {
    return {
      saverFor: (tenantId) => factorySaver(checkpointer(tenantId), tenantId),
      store: options.threadStore ?? new InMemoryThreadStore(),
      runs: options.runStore ?? new InMemoryRunStore(),
      assistantStore: assistantStore ?? new InMemoryAssistantStore(),
      cronStore: options.cronStore ?? new InMemoryCronStore(),
    };
  }
  if (checkpointer) {
    // One instance serves every tenant: the handler scopes thread ids by tenant. An instance bound to one
    // tenant would give that tenant unscoped ids that another tenant's scoped ids could equal.
    const boundTenant = boundTenantOf(checkpointer);
    if (boundTenant !== undefined) {
      throw new InvalidConfigurationError(
        "checkpointer",
        `expected a saver shared by all tenants or a function (tenantId) => saver, got a saver bound to tenant ${boundTenant}`,
      );
    }
    return {
      saverFor: () => ({ saver: checkpointer, bound: false }),
      store: options.threadStore ?? new InMemoryThreadStore(),
      runs: options.runStore ?? new InMemoryRunStore(),
      assistantStore: assistantStore ?? new InMemoryAssistantStore(),
      cronStore: options.cronStore ?? new InMemoryCronStore(),
    };
  }
  const tableName = options.tableName ?? environment.tableName;
  if (!tableName)
    return {
      saverFor: undefined,
      store: undefined,
      runs: undefined,
      assistantStore,
      cronStore: undefined,
    };
  // One table context per container: every request's saver and the thread store share its record cache.
  const table = loadOnDemand().tableBacking().openTableBacking({
    tableName,
    client: options.dynamodbClient,
    endpoint: environment.dynamodbEndpoint,
    ttlSeconds: options.ttlSeconds,
  });
  return {
    saverFor: table.saverFor,
    store: options.threadStore ?? table.threads,
    runs: options.runStore ?? table.runs,
    assistantStore: assistantStore ?? table.assistants,
    cronStore: options.cronStore ?? table.crons,
    table,
  };
}

/** Each registered graph's system assistant defaults (LANGGRAPH_CONFIG); an entry for no such graph is noted. */
function systemAssistantDefaults(
  environment: RuntimeConfig,
  registry: GraphRegistry,
  logger: Logger,
): Record<string, AssistantDefaults> {
  const defaults = environment.assistantDefaults ?? {};
  for (const graphId of Object.keys(defaults)) {
    if (!registry.has(graphId)) {
      logger.warn(
        { graph: graphId, variable: LANGGRAPH_ENVIRONMENT.graphConfig },
        "LANGGRAPH_CONFIG names a graph that is not registered: its entry is ignored",
      );
    }
  }
  return defaults;
}

/** A factory's saver is bound when it is bound to the requested tenant; bound to another, it is refused. */
function factorySaver(saver: AnySaver, tenantId: string): TenantSaver {
  const bound = boundTenantOf(saver);
  if (bound !== undefined && bound !== tenantId) {
    throw new InvalidConfigurationError(
      "checkpointer",
      `expected the saver for tenant ${tenantId}, got one bound to tenant ${bound}`,
    );
  }
  return { saver, bound: bound !== undefined };
}

/**
 * Waits for LangChain's callbacks still running in the background (LangSmith's trace uploads): Lambda freezes
 * the process once the handler returns. A failed callback is logged, never the invocation's failure.
 */
export async function flushCallbacks(logger: Logger): Promise<void> {
  try {
    await awaitAllCallbacks();
  } catch (error) {
    logger.warn({ err: { name: (error as Error)?.name } }, "LangChain callbacks failed");
  }
}

export function positive(
  option: string,
  value: number | undefined,
  fallback: number,
  allowZero = false,
): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new InvalidConfigurationError(option, `expected a positive number, got ${value}`);
  }
  return value;
}

/** A whole number of at least 1 (a count an operator sets). */
function wholeNumber(option: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new InvalidConfigurationError(
      option,
      `expected a whole number of at least 1, got ${value}`,
    );
  }
  return value;
}

/**
 * The parts that talk to AWS, loaded when the configuration asks for them (a table name, a worker function): a
 * handler on another checkpointer (the dev server's in-memory saver, tests) never loads the AWS SDK. Synchronous,
 * so that a bad configuration still fails when the handler is built.
 */
function loadOnDemand() {
  /* eslint-disable @typescript-eslint/no-require-imports -- on-demand loading, see above */
  return {
    tableBacking: (): typeof import("./table-backing") => require("./table-backing"),
    lambdaDispatcher: (): typeof import("./runs/lambda-dispatcher") =>
      require("./runs/lambda-dispatcher"),
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
}
