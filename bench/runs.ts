/**
 * Section "runs": the cost of a background run's lifecycle through the API handler on DynamoDB Local, next to the
 * synchronous `runs.wait` on the same graph in the same bench run, and the worker's cold start.
 *
 * Lifecycles, each on a new thread of a three-node graph (bench/fixtures/steps-graph.ts):
 * - wait: `POST /threads`, `POST /threads/{id}/runs/wait` (today's synchronous run).
 * - background, in process: `POST /threads`, `POST /threads/{id}/runs`, `GET .../runs/{run_id}/join`, the run done
 *   by the handler's own process (the dev server's path; the join waits for it there).
 * - background, worker: the same three requests, the run done by the worker function's handler as Lambda would
 *   run it (a job handed over between the create and the join; the Lambda Invoke API has no local engine, so the
 *   stand-in dispatcher records the job and the bench invokes the worker handler with it). Requests of the API
 *   function and of the worker are metered apart.
 * - handover: a background run whose first leg runs out of time inside a node and continues in a second leg, next
 *   to the same run done in one leg (same handler, same graph; in process, with a 1.2 s leg budget).
 *
 * DynamoDB requests (by operation) are counted by a client middleware and capacity comes from
 * `ReturnConsumedCapacity: TOTAL` (RCU for reads, WCU for writes); latencies are medians and p95 over the
 * lifecycles, in alternating rounds. The worker's cold start runs the image's worker bundle (`worker.mjs` of
 * `npm run build:image`, built into a temporary folder) under aws-lambda-ric against a local Runtime API: process
 * start to init done, and to the response of its first job (a booking run on DynamoDB Local), next to the API
 * function's `index.mjs` init in the same run.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBClient, type ConsumedCapacity } from "@aws-sdk/client-dynamodb";
import pino from "pino";
import { buildBookingGraph } from "../src/examples/booking";
import { InProcessDispatcher, RUN_JOB_KIND } from "../src/runtime/runs/dispatchers";
import { createHandler, type ApiHandler } from "../src/runtime/handler";
import type { HttpEvent } from "../src/runtime/http/http";
import type { RunJob } from "../src/runtime/runs/run-manager";
import { createWorkerHandler, type WorkerHandler } from "../src/runtime/worker";
import { buildImage } from "../scripts/build-image";
import { createTestTable, deleteTestTable } from "../test/support/dynamodb";
import { LOCAL_CLIENT_CONFIG } from "../test/support/dynamodb-local";
import { imageNodeBinary, missingImageNode, startRic } from "../test/image/ric-process";
import { RuntimeApiEmulator, type InvocationOutcome } from "../test/image/runtime-api";
import { median, writeResults, type BenchContext } from "./context";
import { STEP_NODES, stepsGraph } from "./fixtures/steps-graph";

const TENANT = "bench-runs";
const ROUNDS = 10;
const PER_ROUND = 3;
const HANDOVER_SAMPLES = 5;
const COLD_SAMPLES = 9;
/** The handover variant's leg budget, and how long `work_1` takes the first time (longer: the leg stops in it). */
const HANDOVER_LEG_MS = 1_200;
const SLOW_ONCE_MS = 1_800;
/** The in-process dispatcher's leg budget (the handler's default, src/runtime/assembly.ts). */
const IN_PROCESS_LEG_MS = 14 * 60 * 1000;
const TARGETS = {
  /** A background lifecycle (worker) costs at most this many times the DynamoDB requests of a synchronous one. */
  backgroundRequestRatio: 1.5,
  /** The worker's init at most this many times the API function's init (same image, measured alternately). */
  workerInitRatio: 1.1,
  /**
   * The run machinery's cost targets: DynamoDB requests per lifecycle (the worker's included), and no more
   * capacity units (RCU + WCU) than the baseline's.
   */
  requests: { wait: 14, "background (worker)": 16 } as Record<string, number>,
};
/**
 * The lifecycles' cost before the run machinery's redesign (commit 8f581c6), measured by this section on that tree
 * (deferred work drained as below): the baseline the capacity targets hold the lifecycles to.
 */
const BASELINE = {
  commit: "8f581c6",
  lifecycles: {
    wait: { requests: 21, rcu: 8, wcu: 14 },
    "background (in process)": { requests: 24, rcu: 11, wcu: 14 },
    "background (worker)": { requests: 24, rcu: 11, wcu: 14 },
  } as Record<string, { requests: number; rcu: number; wcu: number }>,
};
const silent = pino({ level: "silent" });
const lambdaContext = (remainingMs: number) => ({
  awsRequestId: "bench",
  getRemainingTimeInMillis: () => remainingMs,
});

// ---------------------------------------------------------------------------------------------------------------
// Metering

const READ_OPERATIONS = new Set(["GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"]);

interface Usage {
  requests: number;
  rcu: number;
  wcu: number;
  byOperation: Record<string, number>;
}

class Meter {
  usage: Usage = Meter.empty();

  static empty(): Usage {
    return { requests: 0, rcu: 0, wcu: 0, byOperation: {} };
  }

  take(): Usage {
    const taken = this.usage;
    this.usage = Meter.empty();
    return taken;
  }
}

/** A DynamoDB Local client that asks for consumed capacity on every request and meters it. */
function meteredClient(endpoint: string, meter: Meter): DynamoDBClient {
  const client = new DynamoDBClient({ ...LOCAL_CLIENT_CONFIG, endpoint });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const operation = (context.commandName ?? "unknown").replace(/Command$/, "");
      (args.input as Record<string, unknown>).ReturnConsumedCapacity = "TOTAL";
      const usage = meter.usage;
      usage.requests += 1;
      usage.byOperation[operation] = (usage.byOperation[operation] ?? 0) + 1;
      const result = await next(args);
      const consumed = (
        result.output as { ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[] }
      ).ConsumedCapacity;
      for (const entry of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) {
        if (entry.ReadCapacityUnits !== undefined || entry.WriteCapacityUnits !== undefined) {
          usage.rcu += entry.ReadCapacityUnits ?? 0;
          usage.wcu += entry.WriteCapacityUnits ?? 0;
        } else if (READ_OPERATIONS.has(operation)) usage.rcu += entry.CapacityUnits ?? 0;
        else usage.wcu += entry.CapacityUnits ?? 0;
      }
      return result;
    },
    { step: "initialize", name: "benchRunsMeter" },
  );
  return client;
}

// ---------------------------------------------------------------------------------------------------------------
// Requests

function apiEvent(method: string, path: string, body?: unknown): HttpEvent {
  return {
    version: "2.0",
    routeKey: "$default",
    rawPath: path,
    rawQueryString: "",
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    isBase64Encoded: false,
    requestContext: {
      http: { method, path },
      requestId: "bench",
      stage: "$default",
      authorizer: { jwt: { claims: { "custom:tenant_id": TENANT }, scopes: [] } },
    },
  } as unknown as HttpEvent;
}

async function call(
  handler: ApiHandler,
  method: string,
  path: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const result = await handler(apiEvent(method, path, body), lambdaContext(30_000));
  if (result.statusCode !== 200) {
    throw new Error(`${method} ${path}: ${result.statusCode} ${result.body ?? ""}`);
  }
  return JSON.parse(result.body ?? "{}") as Record<string, unknown>;
}

function expectSteps(values: Record<string, unknown>, what: string): void {
  if (JSON.stringify(values.steps) !== JSON.stringify(STEP_NODES)) {
    throw new Error(
      `${what}: expected steps ${STEP_NODES.join(",")}, got ${JSON.stringify(values)}`,
    );
  }
}

async function createThread(api: ApiHandler): Promise<string> {
  const threadId = randomUUID();
  await call(api, "POST", "/threads", { thread_id: threadId });
  return threadId;
}

const RUN_BODY = (slowOnceMs = 0) => ({
  assistant_id: "steps",
  input: { slowOnceMs },
});

async function waitLifecycle(api: ApiHandler): Promise<void> {
  const threadId = await createThread(api);
  expectSteps(await call(api, "POST", `/threads/${threadId}/runs/wait`, RUN_BODY()), "wait");
}

/** Create a background run, then join it; `between` runs after the create (the worker's turn). */
async function backgroundLifecycle(
  api: ApiHandler,
  between?: () => Promise<void>,
  slowOnceMs = 0,
): Promise<void> {
  const threadId = await createThread(api);
  const run = await call(api, "POST", `/threads/${threadId}/runs`, RUN_BODY(slowOnceMs));
  await between?.();
  const joined = await call(api, "GET", `/threads/${threadId}/runs/${String(run.run_id)}/join`);
  expectSteps(joined, "join");
}

// ---------------------------------------------------------------------------------------------------------------
// Statistics

interface Samples {
  ms: number[];
  usages: Usage[];
}

function summarize(samples: Samples) {
  const pick = (key: "requests" | "rcu" | "wcu") => samples.usages.map((usage) => usage[key]);
  const requests = pick("requests");
  const operations = new Set(samples.usages.flatMap((usage) => Object.keys(usage.byOperation)));
  return {
    lifecycles: samples.ms.length,
    medianMs: round(median(samples.ms)),
    p95Ms: round(percentile(samples.ms, 0.95)),
    requests: median(requests),
    requestsMin: Math.min(...requests),
    requestsMax: Math.max(...requests),
    rcu: round(median(pick("rcu"))),
    wcu: round(median(pick("wcu"))),
    requestsByOperation: Object.fromEntries(
      [...operations]
        .sort()
        .map((operation) => [
          operation,
          median(samples.usages.map((usage) => usage.byOperation[operation] ?? 0)),
        ]),
    ),
  };
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * fraction) - 1)]!;
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

// ---------------------------------------------------------------------------------------------------------------
// The section

/** Counts the next legs handed to the in-process dispatcher (a job naming its run), apart from queue passes. */
class CountingDispatcher extends InProcessDispatcher {
  handovers = 0;

  override async dispatch(job: RunJob): Promise<void> {
    if (job.runId !== undefined) this.handovers += 1;
    return super.dispatch(job);
  }
}

export default async function runs(context: BenchContext): Promise<void> {
  // Latencies on a shared machine move with its load: the load is kept beside them.
  const load = loadavg()[0]!;
  const apiMeter = new Meter();
  const workerMeter = new Meter();
  const apiClient = meteredClient(context.endpoint, apiMeter);
  const workerClient = meteredClient(context.endpoint, workerMeter);
  const tableName = await createTestTable(apiClient, "memory-table-bench-runs");
  const common = {
    assistants: { steps: stepsGraph() },
    tableName,
    logger: silent,
    metrics: false as const,
  };
  try {
    // The synchronous and the in-process background lifecycles share one handler: the dev server's. Its
    // dispatcher is drained after each lifecycle, so the work a lifecycle leaves behind (the queue pass after a
    // run) is counted in it, not in the next one.
    const inProcessDispatcher = new InProcessDispatcher(IN_PROCESS_LEG_MS, silent);
    const inProcess = createHandler({
      ...common,
      dynamodbClient: apiClient,
      dispatcher: inProcessDispatcher,
    });
    // The Lambda split: the API function hands each job to the worker function.
    const jobs: RunJob[] = [];
    const lambdaApi = createHandler({
      ...common,
      dynamodbClient: apiClient,
      dispatcher: { dispatch: async (job: RunJob) => void jobs.push(job) },
    });
    const worker: WorkerHandler = createWorkerHandler({ ...common, dynamodbClient: workerClient });
    const runJobs = async () => {
      while (jobs.length > 0) {
        await worker({ kind: RUN_JOB_KIND, ...jobs.shift()! }, lambdaContext(15 * 60 * 1000));
      }
    };

    const variants: Array<{ name: string; lifecycle: () => Promise<void> }> = [
      { name: "wait", lifecycle: () => waitLifecycle(inProcess) },
      { name: "background (in process)", lifecycle: () => backgroundLifecycle(inProcess) },
      { name: "background (worker)", lifecycle: () => backgroundLifecycle(lambdaApi, runJobs) },
    ];
    const samples = new Map(variants.map((variant) => [variant.name, { ms: [], usages: [] }]));
    const workerUsages: Usage[] = [];
    const measure = async (variant: (typeof variants)[number], keep: boolean) => {
      apiMeter.take();
      workerMeter.take();
      const started = performance.now();
      await variant.lifecycle();
      const ms = performance.now() - started;
      await inProcessDispatcher.drain();
      const api = apiMeter.take();
      const work = workerMeter.take();
      if (!keep) return;
      const sample = samples.get(variant.name) as Samples;
      sample.ms.push(ms);
      sample.usages.push(addUsage(api, work));
      if (variant.name === "background (worker)") workerUsages.push(work);
    };
    for (const variant of variants) await measure(variant, false); // warm-up: graphs compiled, JIT
    for (let round = 0; round < ROUNDS; round += 1) {
      // Rotate which variant goes first, so drift (GC, DynamoDB Local) hits them alike.
      for (let index = 0; index < variants.length; index += 1) {
        const variant = variants[(index + round) % variants.length]!;
        for (let repeat = 0; repeat < PER_ROUND; repeat += 1) await measure(variant, true);
      }
    }
    const summaries = Object.fromEntries(
      variants.map((variant) => [variant.name, summarize(samples.get(variant.name) as Samples)]),
    );
    const workerSide = summarize({ ms: workerUsages.map(() => 0), usages: workerUsages });

    const handover = await measureHandover(apiMeter, tableName, apiClient);
    const cold = await workerColdStart(context, tableName, apiClient);

    const wait = summaries["wait"]!;
    const background = summaries["background (worker)"]!;
    const costTargets = Object.fromEntries(
      Object.entries(summaries).map(([name, summary]) => {
        const before = BASELINE.lifecycles[name]!;
        const maxRequests = TARGETS.requests[name];
        const capacityUnits = round(summary.rcu + summary.wcu);
        return [
          name,
          {
            requests: summary.requests,
            baselineRequests: before.requests,
            ...(maxRequests !== undefined
              ? { maxRequests, requestsMet: summary.requests <= maxRequests }
              : {}),
            capacityUnits,
            baselineCapacityUnits: before.rcu + before.wcu,
            capacityMet: capacityUnits <= before.rcu + before.wcu,
          },
        ];
      }),
    );
    const results = {
      graph: `${STEP_NODES.join(" -> ")} (bench/fixtures/steps-graph.ts), a new thread per lifecycle`,
      backgroundRequestRatio: round(background.requests / wait.requests),
      backgroundMsRatio: round(background.medianMs / wait.medianMs),
      lifecycles: summaries,
      workerShareOfBackground: {
        requests: workerSide.requests,
        rcu: workerSide.rcu,
        wcu: workerSide.wcu,
        requestsByOperation: workerSide.requestsByOperation,
        lambdaInvokesPerLeg: 1,
      },
      handover,
      workerColdStart: cold,
      targets: TARGETS,
      costTargets,
      baseline: BASELINE,
      machine: {
        node: process.version,
        cpus: cpus().length,
        loadAverage1m: { start: round(load), end: round(loadavg()[0]!) },
      },
      definitions: {
        wait: "POST /threads, POST /threads/{id}/runs/wait",
        background:
          "POST /threads, POST /threads/{id}/runs, GET /threads/{id}/runs/{run_id}/join (the join answers the run's final values)",
        "background (worker)":
          "the API handler hands the job to the worker handler (as the API function's asynchronous Invoke would), run between the create and the join; requests and capacity are the two functions' sum",
        requests:
          "DynamoDB requests per lifecycle (median; min and max beside it), the work it leaves to the in-process dispatcher (the queue pass after a run) drained and counted in it",
        costTargets:
          "requests per lifecycle against targets.requests, and capacity units (RCU + WCU) against the baseline's (the same lifecycle measured by this section on the baseline commit)",
        rcu: "read capacity units per lifecycle, from ReturnConsumedCapacity TOTAL (median)",
        wcu: "write capacity units per lifecycle, from ReturnConsumedCapacity TOTAL (median)",
        medianMs:
          "lifecycle latency on DynamoDB Local in this process (median; the worker variant includes the worker's leg)",
        handover:
          "a background run whose first leg (1.2 s budget) stops inside a node and continues in a second leg, minus the same run done in one leg",
        workerColdStart:
          "the image's worker.mjs under aws-lambda-ric against a local Runtime API: process start to its first invocation/next (init), and to the response of its first job (a booking run on DynamoDB Local); index.mjs init beside it, alternately; workerInitRatio is the median of the per-pair ratios",
      },
    };

    console.table(
      Object.fromEntries(
        Object.entries(summaries).map(([name, summary]) => [
          name,
          {
            "median ms": summary.medianMs,
            "p95 ms": summary.p95Ms,
            requests: summary.requests,
            RCU: summary.rcu,
            WCU: summary.wcu,
          },
        ]),
      ),
    );
    console.log(
      `background (worker) vs wait: ${results.backgroundRequestRatio}x requests, ${results.backgroundMsRatio}x latency; ` +
        `the worker's share: ${workerSide.requests} requests, ${workerSide.rcu} RCU, ${workerSide.wcu} WCU (+1 Lambda Invoke per leg)`,
    );
    console.table({
      "one leg": pickTable(handover.oneLeg),
      "two legs (handover)": pickTable(handover.twoLegs),
      "handover cost": {
        "median ms": "",
        "p95 ms": "",
        requests: handover.cost.requests,
        RCU: handover.cost.rcu,
        WCU: handover.cost.wcu,
      },
    });
    if ("skipped" in cold) console.log(`SKIP worker cold start: ${cold.skipped}`);
    else {
      console.table({
        "worker.mjs": {
          "init ms": cold.worker.initMs,
          "first job ms": cold.worker.firstJobMs,
          "bundle MB": cold.worker.bundleMb,
        },
        "index.mjs (API)": {
          "init ms": cold.api.initMs,
          "first job ms": "",
          "bundle MB": cold.api.bundleMb,
        },
        "worker / API (per pair)": {
          "init ms": cold.workerInitRatio,
          "first job ms": "",
          "bundle MB": "",
        },
      });
    }
    const met = (ok: boolean) => (ok ? "met" : "NOT MET");
    console.table(
      Object.fromEntries(
        Object.entries(costTargets).map(([name, cost]) => [
          name,
          {
            [`requests (${BASELINE.commit})`]: cost.baselineRequests,
            requests: cost.requests,
            "requests target": cost.maxRequests ?? "",
            [`CU (${BASELINE.commit})`]: cost.baselineCapacityUnits,
            CU: cost.capacityUnits,
          },
        ]),
      ),
    );
    console.log(
      `cost targets: ${Object.entries(costTargets)
        .map(
          ([name, cost]) =>
            `${name}${
              cost.maxRequests !== undefined
                ? ` requests <= ${cost.maxRequests}: ${met(cost.requestsMet!)},`
                : ""
            } CU <= ${cost.baselineCapacityUnits}: ${met(cost.capacityMet)}`,
        )
        .join("; ")}`,
    );
    console.log(
      `targets: background requests <= ${TARGETS.backgroundRequestRatio}x wait: ${met(
        results.backgroundRequestRatio <= TARGETS.backgroundRequestRatio,
      )}; worker init <= ${TARGETS.workerInitRatio}x the API's: ${
        "skipped" in cold ? "not measured" : met(cold.workerInitRatio <= TARGETS.workerInitRatio)
      }`,
    );
    console.log(`wrote ${writeResults("runs", results)}`);
  } finally {
    await deleteTestTable(apiClient, tableName).catch(() => undefined);
    apiClient.destroy();
    workerClient.destroy();
  }
}

function addUsage(a: Usage, b: Usage): Usage {
  const byOperation = { ...a.byOperation };
  for (const [operation, count] of Object.entries(b.byOperation)) {
    byOperation[operation] = (byOperation[operation] ?? 0) + count;
  }
  return {
    requests: a.requests + b.requests,
    rcu: a.rcu + b.rcu,
    wcu: a.wcu + b.wcu,
    byOperation,
  };
}

function pickTable(summary: ReturnType<typeof summarize>) {
  return {
    "median ms": summary.medianMs,
    "p95 ms": summary.p95Ms,
    requests: summary.requests,
    RCU: summary.rcu,
    WCU: summary.wcu,
  };
}

/** The same background run in one leg and in two (its first leg stopped inside `work_1` by its budget). */
async function measureHandover(meter: Meter, tableName: string, client: DynamoDBClient) {
  const dispatcher = new CountingDispatcher(HANDOVER_LEG_MS, silent);
  const api = createHandler({
    assistants: { steps: stepsGraph() },
    tableName,
    dynamodbClient: client,
    dispatcher,
    logger: silent,
    metrics: false,
  });
  const oneLeg: Samples = { ms: [], usages: [] };
  const twoLegs: Samples = { ms: [], usages: [] };
  const legs: Record<string, number[]> = { oneLeg: [], twoLegs: [] };
  await backgroundLifecycle(api); // warm-up
  for (let index = 0; index < HANDOVER_SAMPLES; index += 1) {
    for (const [name, slowOnceMs, samples] of [
      ["oneLeg", 0, oneLeg],
      ["twoLegs", SLOW_ONCE_MS, twoLegs],
    ] as const) {
      meter.take();
      dispatcher.handovers = 0;
      const started = performance.now();
      await backgroundLifecycle(api, undefined, slowOnceMs);
      samples.ms.push(performance.now() - started);
      await dispatcher.drain();
      samples.usages.push(meter.take());
      legs[name]!.push(dispatcher.handovers + 1);
    }
  }
  const one = summarize(oneLeg);
  const two = summarize(twoLegs);
  if (legs.oneLeg!.some((jobs) => jobs !== 1) || legs.twoLegs!.some((jobs) => jobs !== 2)) {
    throw new Error(`expected 1 and 2 legs, got ${JSON.stringify(legs)}`);
  }
  return {
    legBudgetMs: HANDOVER_LEG_MS,
    slowOnceMs: SLOW_ONCE_MS,
    oneLeg: one,
    twoLegs: two,
    cost: {
      requests: two.requests - one.requests,
      rcu: round(two.rcu - one.rcu),
      wcu: round(two.wcu - one.wcu),
      lambdaInvokes: 1,
    },
  };
}

type ColdStartResult =
  | { skipped: string }
  | {
      samples: number;
      node: string;
      workerInitRatio: number;
      worker: { initMs: number; firstJobMs: number; bundleMb: number; initSamplesMs: number[] };
      api: { initMs: number; bundleMb: number; initSamplesMs: number[] };
    };

/** The image's worker bundle, cold, under aws-lambda-ric; the API bundle's init alternates with it. */
async function workerColdStart(
  context: BenchContext,
  tableName: string,
  client: DynamoDBClient,
): Promise<ColdStartResult> {
  const node = imageNodeBinary();
  if (!node) return { skipped: missingImageNode() };
  const outDir = mkdtempSync(join(tmpdir(), "memory-table-bench-worker-"));
  const runtimeApi = await RuntimeApiEmulator.start();
  try {
    const image = await buildImage(outDir);
    // The API side creates the booking runs the cold workers take as their first job.
    const jobs: RunJob[] = [];
    const api = createHandler({
      assistants: { booking: ({ checkpointer }) => buildBookingGraph({ checkpointer }) },
      tableName,
      dynamodbClient: client,
      dispatcher: { dispatch: async (job: RunJob) => void jobs.push(job) },
      logger: silent,
      metrics: false,
    });
    const env = { TABLE_NAME: tableName, DYNAMODB_ENDPOINT: context.endpoint, LOG_LEVEL: "warn" };
    const workerInit: number[] = [];
    const workerFirstJob: number[] = [];
    const apiInit: number[] = [];
    const apiColdInit = async () => {
      const started = performance.now();
      const ric = startRic({
        node,
        taskRoot: outDir,
        handler: "index.handler",
        runtimeApi: runtimeApi.address,
        env,
      });
      try {
        await raceExit(runtimeApi.waitForIdleRuntime(), ric);
        apiInit.push(performance.now() - started);
      } finally {
        await ric.kill();
      }
    };
    const workerColdJob = async () => {
      const threadId = `cold-${randomUUID()}`;
      const created = await call(api, "POST", `/threads/${threadId}/runs`, {
        assistant_id: "booking",
        input: { request: "move my appointment" },
        if_not_exists: "create",
      });
      const job = jobs.shift()!;
      const started = performance.now();
      const ric = startRic({
        node,
        taskRoot: outDir,
        handler: "worker.handler",
        runtimeApi: runtimeApi.address,
        env,
      });
      try {
        await raceExit(runtimeApi.waitForIdleRuntime(), ric);
        workerInit.push(performance.now() - started);
        const outcome = await raceExit(
          runtimeApi.invoke({ kind: RUN_JOB_KIND, ...job }, { timeoutMs: 60_000 }),
          ric,
        );
        workerFirstJob.push(performance.now() - started);
        expectJobDone(outcome, ric.output());
      } finally {
        await ric.kill();
      }
      const run = await call(api, "GET", `/threads/${threadId}/runs/${String(created.run_id)}`);
      if (run.status !== "success" && run.status !== "interrupted") {
        throw new Error(`the cold worker's run ended ${String(run.status)}`);
      }
    };
    for (let sample = 0; sample < COLD_SAMPLES; sample += 1) {
      // Alternate which goes first, so the machine's drift hits both alike; the ratio is taken per pair.
      if (sample % 2 === 0) {
        await apiColdInit();
        await workerColdJob();
      } else {
        await workerColdJob();
        await apiColdInit();
      }
    }
    const mb = (file: string) => round((image.handlerBytes[file] ?? 0) / 1024 / 1024);
    return {
      samples: COLD_SAMPLES,
      node: process.version,
      // The median of per-pair ratios: each pair ran back to back, so the machine's load mostly cancels out.
      workerInitRatio: round(median(workerInit.map((ms, index) => ms / apiInit[index]!))),
      worker: {
        initMs: round(median(workerInit)),
        firstJobMs: round(median(workerFirstJob)),
        bundleMb: mb("worker.mjs"),
        initSamplesMs: workerInit.map(round),
      },
      api: {
        initMs: round(median(apiInit)),
        bundleMb: mb("index.mjs"),
        initSamplesMs: apiInit.map(round),
      },
    };
  } finally {
    await runtimeApi.stop();
    rmSync(outDir, { recursive: true, force: true });
  }
}

async function raceExit<T>(
  work: Promise<T>,
  ric: { exited: Promise<unknown>; output(): string },
): Promise<T> {
  const died = ric.exited.then((code) => {
    throw new Error(`runtime exited (${String(code)}):\n${ric.output()}`);
  });
  died.catch(() => undefined);
  return Promise.race([work, died]);
}

function expectJobDone(outcome: InvocationOutcome, output: string): void {
  const body = outcome.body as { jobs?: number };
  if (outcome.kind !== "response" || body.jobs !== 1) {
    throw new Error(`the worker's first job failed: ${JSON.stringify(outcome)}:\n${output}`);
  }
}
