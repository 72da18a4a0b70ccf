/**
 * The Lambda handler's cost over calling the graph directly, warm, on the booking lifecycle (start, pause at the
 * approval, resume to completion): per-lifecycle time through the handler vs `graph.invoke` with the same saver
 * (in memory and on DynamoDB Local), DynamoDB requests and capacity units per lifecycle (counted by a client
 * middleware, capacity from `ReturnConsumedCapacity: TOTAL`), and the
 * handler's cold init (a fresh Node process: require the bundled handler module until `createHandler` returns).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBClient, type ConsumedCapacity } from "@aws-sdk/client-dynamodb";
import { Command } from "@langchain/langgraph";
import { build } from "esbuild";
import pino from "pino";
import { DynamoDBSaver } from "../src/checkpoint/dynamodb/saver";
import { InMemorySaver } from "../src/checkpoint/memory";
import { buildBookingGraph } from "../src/examples/booking";
import { createHandler, type ApiHandler } from "../src/runtime/handler";
import type { HttpEvent } from "../src/runtime/http/http";
import { createTestTable } from "../test/support/dynamodb";
import { LOCAL_CLIENT_CONFIG } from "../test/support/dynamodb-local";
import { median, writeResults, type BenchContext } from "./context";

const TENANT = "bench-tenant";
const TARGETS = {
  /** The handler's time over graph.invoke, in memory (median of per-round ratios). */
  overheadRatio: 1.2,
  /** DynamoDB requests of the simple face's booking lifecycle. */
  requestsPerLifecycle: 11,
};
/** The booking lifecycle before the run machinery's redesign (commit 8f581c6), measured by this section there. */
const BASELINE = { commit: "8f581c6", requestsPerLifecycle: 11, capacityUnitsPerLifecycle: 15 };
const silent = pino({ level: "silent" });

function event(body: unknown): HttpEvent {
  return {
    version: "2.0",
    routeKey: "$default",
    rawPath: "/invoke",
    rawQueryString: "",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    isBase64Encoded: false,
    requestContext: {
      http: { method: "POST", path: "/invoke" },
      requestId: "bench",
      authorizer: { jwt: { claims: { "custom:tenant_id": TENANT }, scopes: [] } },
    },
  } as unknown as HttpEvent;
}

const lambdaContext = { awsRequestId: "bench", getRemainingTimeInMillis: () => 30_000 };

async function handlerLifecycle(handler: ApiHandler, threadId: string): Promise<void> {
  const started = await handler(
    event({ thread_id: threadId, input: { request: "bench" } }),
    lambdaContext,
  );
  const resumed = await handler(
    event({ thread_id: threadId, resume: { approve: true } }),
    lambdaContext,
  );
  if (started.statusCode !== 202 || resumed.statusCode !== 200) {
    throw new Error(`unexpected statuses ${started.statusCode} ${resumed.statusCode}`);
  }
}

type Graph = ReturnType<typeof buildBookingGraph>;

async function directLifecycle(graph: Graph, threadId: string): Promise<void> {
  const config = { configurable: { thread_id: threadId } };
  await graph.invoke({ request: "bench" }, config);
  const done = await graph.invoke(new Command({ resume: { approve: true } }), config);
  if (!done.booked) throw new Error("direct lifecycle did not book");
}

/** Alternating rounds so drift (GC, JIT, DynamoDB Local) hits both sides alike; medians per lifecycle. */
async function compare(
  rounds: number,
  perRound: number,
  direct: (threadId: string) => Promise<void>,
  viaHandler: (threadId: string) => Promise<void>,
): Promise<{ directMs: number; handlerMs: number; overheadRatio: number }> {
  const directTimes: number[] = [];
  const handlerTimes: number[] = [];
  let sequence = 0;
  const time = async (work: (threadId: string) => Promise<void>): Promise<number> => {
    const started = performance.now();
    for (let index = 0; index < perRound; index += 1) await work(`thread-${(sequence += 1)}`);
    return (performance.now() - started) / perRound;
  };
  // Warm-up: JIT, caches, the handler's compiled graph.
  await time(direct);
  await time(viaHandler);
  for (let round = 0; round < rounds; round += 1) {
    // Alternate which side goes first: the first of a pair pays for the previous pair's garbage.
    if (round % 2 === 0) {
      directTimes.push(await time(direct));
      handlerTimes.push(await time(viaHandler));
    } else {
      handlerTimes.push(await time(viaHandler));
      directTimes.push(await time(direct));
    }
  }
  // The ratio is the median of per-round ratios: each pair ran back to back, so machine load cancels out.
  const ratios = handlerTimes.map((handlerMs, index) => handlerMs / directTimes[index]!);
  return {
    directMs: round3(median(directTimes)),
    handlerMs: round3(median(handlerTimes)),
    overheadRatio: round3(median(ratios)),
  };
}

/**
 * Where the handler's time goes, in memory: inside the graph's stream (from the leg's `graph.stream` call until
 * its last chunk) and around it (parsing, the run record, the thread's claim and settle, the answer), beside
 * `graph.invoke` in alternating rounds as in `compare`. A handler of its own has its stream timed, apart from the
 * ratio's, so the timing wrapper costs the ratio nothing. Medians per lifecycle.
 */
async function handlerSplit(
  rounds: number,
  perRound: number,
  direct: (threadId: string) => Promise<void>,
): Promise<{ directMs: number; graphMs: number; aroundGraphMs: number }> {
  let inGraphMs = 0;
  const handler = createHandler({
    assistants: {
      booking: ({ checkpointer }) => {
        const graph = buildBookingGraph({ checkpointer });
        const stream = graph.stream.bind(graph);
        graph.stream = (async (input: unknown, options: unknown) => {
          const started = performance.now();
          const chunks = await stream(input as never, options as never);
          return (async function* () {
            try {
              yield* chunks;
            } finally {
              inGraphMs += performance.now() - started;
            }
          })();
        }) as unknown as typeof graph.stream;
        return graph;
      },
    },
    checkpointer: new InMemorySaver(),
    logger: silent,
    metrics: false,
  });
  let sequence = 0;
  const time = async (work: (threadId: string) => Promise<void>): Promise<number> => {
    const started = performance.now();
    for (let index = 0; index < perRound; index += 1) await work(`split-${(sequence += 1)}`);
    return (performance.now() - started) / perRound;
  };
  const viaHandler = (threadId: string) => handlerLifecycle(handler, threadId);
  await time(direct);
  await time(viaHandler);
  const directTimes: number[] = [];
  const graphTimes: number[] = [];
  const aroundTimes: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    directTimes.push(await time(direct));
    inGraphMs = 0;
    const handlerMs = await time(viaHandler);
    graphTimes.push(inGraphMs / perRound);
    aroundTimes.push(handlerMs - inGraphMs / perRound);
  }
  return {
    directMs: round3(median(directTimes)),
    graphMs: round3(median(graphTimes)),
    aroundGraphMs: round3(median(aroundTimes)),
  };
}

async function coldInitMs(samples: number): Promise<{ median: number; samples: number[] }> {
  const directory = mkdtempSync(join(tmpdir(), "memory-table-cold-"));
  try {
    const entry = join(directory, "entry.ts");
    writeFileSync(
      entry,
      `import { createHandler } from ${JSON.stringify(join(__dirname, "../src/runtime/handler"))};
import { buildBookingGraph } from ${JSON.stringify(join(__dirname, "../src/examples/booking"))};
export const handler = createHandler({
  assistants: { booking: ({ checkpointer }) => buildBookingGraph({ checkpointer }) },
  metrics: false,
});
`,
    );
    const bundle = join(directory, "index.js");
    // Bundled as the container image ships it: one file, no TypeScript at run time.
    await build({
      entryPoints: [entry],
      bundle: true,
      platform: "node",
      target: "node20",
      outfile: bundle,
      logLevel: "silent",
    });
    const probe = `const t0 = performance.now(); require(${JSON.stringify(bundle)}); process.stdout.write(String(performance.now() - t0));`;
    const times: number[] = [];
    for (let index = 0; index < samples; index += 1) {
      const output = execFileSync(process.execPath, ["-e", probe], {
        env: {
          ...process.env,
          TABLE_NAME: "cold-init-table",
          AWS_REGION: "us-east-1",
          LOG_LEVEL: "silent",
        },
      });
      times.push(Number(output.toString()));
    }
    return { median: round3(median(times)), samples: times.map(round3) };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

export default async function handlerBench(context: BenchContext): Promise<void> {
  // In memory: the same InMemorySaver behind the direct graph and the handler.
  const memorySaver = new InMemorySaver();
  const memoryGraph = buildBookingGraph({ checkpointer: memorySaver });
  const memoryHandler = createHandler({
    assistants: { booking: ({ checkpointer }) => buildBookingGraph({ checkpointer }) },
    checkpointer: memorySaver,
    logger: silent,
    metrics: false,
  });
  const memory = await compare(
    31,
    30,
    (threadId) => directLifecycle(memoryGraph, threadId),
    (threadId) => handlerLifecycle(memoryHandler, threadId),
  );

  const split = await handlerSplit(15, 30, (threadId) => directLifecycle(memoryGraph, threadId));

  // DynamoDB Local: a saver per lifecycle for the direct side, as each Lambda request gets.
  const client = new DynamoDBClient({ ...LOCAL_CLIENT_CONFIG, endpoint: context.endpoint });
  let requests = 0;
  let capacityUnits = 0;
  const byOperation: Record<string, number> = {};
  client.middlewareStack.add(
    (next, middlewareContext) => async (args) => {
      requests += 1;
      const operation = (middlewareContext.commandName ?? "unknown").replace(/Command$/, "");
      byOperation[operation] = (byOperation[operation] ?? 0) + 1;
      (args.input as Record<string, unknown>).ReturnConsumedCapacity = "TOTAL";
      const result = await next(args);
      const consumed = (
        result.output as { ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[] }
      ).ConsumedCapacity;
      for (const entry of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) {
        capacityUnits += entry.CapacityUnits ?? 0;
      }
      return result;
    },
    { step: "initialize", name: "benchRequestCounter" },
  );
  const tableName = await createTestTable(client, "memory-table-bench-handler");
  const dynamodbHandler = createHandler({
    assistants: { booking: ({ checkpointer }) => buildBookingGraph({ checkpointer }) },
    tableName,
    dynamodbClient: client,
    logger: silent,
    metrics: false,
  });
  const dynamodb = await compare(
    7,
    8,
    async (threadId) => {
      const saver = () => new DynamoDBSaver({ tableName, tenantId: TENANT, client });
      const config = { configurable: { thread_id: threadId } };
      await buildBookingGraph({ checkpointer: saver() }).invoke({ request: "bench" }, config);
      await buildBookingGraph({ checkpointer: saver() }).invoke(
        new Command({ resume: { approve: true } }),
        config,
      );
    },
    (threadId) => handlerLifecycle(dynamodbHandler, threadId),
  );
  requests = 0;
  capacityUnits = 0;
  for (const key of Object.keys(byOperation)) delete byOperation[key];
  await handlerLifecycle(dynamodbHandler, "counted-lifecycle");
  const requestsPerLifecycle = requests;
  const capacityUnitsPerLifecycle = capacityUnits;
  const requestsByOperation = { ...byOperation };

  const cold = await coldInitMs(5);
  const results = {
    overheadRatio: memory.overheadRatio,
    requestsPerLifecycle,
    capacityUnitsPerLifecycle,
    coldInitMs: cold.median,
    inMemory: memory,
    inMemorySplit: split,
    dynamodbLocal: dynamodb,
    requestsByOperation,
    coldInitSamplesMs: cold.samples,
    targets: TARGETS,
    baseline: BASELINE,
  };
  console.table({
    "in memory": { ...memory },
    "DynamoDB Local": { ...dynamodb },
  });
  console.log(
    `in memory, per lifecycle: graph.invoke ${split.directMs} ms; the handler ${split.graphMs} ms in the graph's stream and ${split.aroundGraphMs} ms around it`,
  );
  console.log(
    `requests per lifecycle: ${requestsPerLifecycle} ${JSON.stringify(requestsByOperation)}, ${capacityUnitsPerLifecycle} capacity units; cold init: ${cold.median} ms`,
  );
  const met = (ok: boolean) => (ok ? "met" : "NOT MET");
  console.log(
    `targets: overhead <= ${TARGETS.overheadRatio}x (in memory): ${met(memory.overheadRatio <= TARGETS.overheadRatio)}; ` +
      `requests <= ${TARGETS.requestsPerLifecycle} (${BASELINE.commit}: ${BASELINE.requestsPerLifecycle}): ${met(requestsPerLifecycle <= TARGETS.requestsPerLifecycle)}; ` +
      `capacity units <= ${BASELINE.capacityUnitsPerLifecycle} (${BASELINE.commit}'s): ${met(capacityUnitsPerLifecycle <= BASELINE.capacityUnitsPerLifecycle)}`,
  );
  console.log(`wrote ${writeResults("handler", results)}`);
}
