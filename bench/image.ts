/**
 * Section "image": the container's API entry, bundled (what the image ships) against the same handler loaded
 * from an unbundled node_modules tree, each run by aws-lambda-ric on the image's Node against a local Runtime API.
 * Cold start = process start to the first response (a request that reads no table, so DynamoDB Local's latency
 * does not blur the image's own cost); init and a first booking run (with its table round trips) are reported too.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { build, type Plugin } from "esbuild";
import { BOOTSTRAP_FILE, buildImage, REPO_ROOT, RIC_DIR } from "../scripts/build-image";
import { createLocalClient, createTestTable, deleteTestTable } from "../test/support/dynamodb";
import { apiGatewayEvent } from "../test/image/events";
import { imageNodeBinary, missingImageNode, startRic } from "../test/image/ric-process";
import { RuntimeApiEmulator, type InvocationOutcome } from "../test/image/runtime-api";
import { median, writeResults, type BenchContext } from "./context";

const RUNS = 7;
const VARIANTS = ["bundled", "unbundled"] as const;
type Variant = (typeof VARIANTS)[number];
const BUNDLE_LIMIT_BYTES = 5 * 1024 * 1024;

export default async function image(context: BenchContext): Promise<void> {
  const node = imageNodeBinary();
  if (!node) {
    console.log(`SKIP: image bench: ${missingImageNode()}`);
    return;
  }
  const bundled = await buildImage();
  // The unbundled variant lives inside the repository so that its imports resolve from node_modules.
  const unbundledDir = join(REPO_ROOT, "dist", "image-unbundled");
  await buildUnbundled(bundled.outDir, unbundledDir);

  const client = createLocalClient(context.endpoint);
  const tableName = await createTestTable(client, "memory-table-bench-image");
  const api = await RuntimeApiEmulator.start();
  try {
    const samples: Record<Variant, ColdStart[]> = { bundled: [], unbundled: [] };
    // Alternate the variants so that load from other processes on the machine hits both alike.
    for (let run = 0; run < RUNS; run++) {
      for (const variant of VARIANTS) {
        const taskRoot = variant === "bundled" ? bundled.outDir : unbundledDir;
        samples[variant].push(await coldStart(node, taskRoot, api, context.endpoint, tableName));
      }
    }
    const medians = (variant: Variant, key: keyof ColdStart) =>
      round(median(samples[variant].map((sample) => sample[key])));
    const bundleBytes = bundled.handlerBytes["index.mjs"]!;
    const results = {
      bundleBytes,
      cleanerBundleBytes: bundled.handlerBytes["cleaner.mjs"],
      coldStartMs: medians("bundled", "firstResponseMs"),
      unbundledColdStartMs: medians("unbundled", "firstResponseMs"),
      initMs: medians("bundled", "initMs"),
      unbundledInitMs: medians("unbundled", "initMs"),
      firstRunMs: medians("bundled", "firstRunMs"),
      unbundledFirstRunMs: medians("unbundled", "firstRunMs"),
      runs: RUNS,
      definitions: {
        coldStartMs: "process start to the first response (GET /assistants/booking), median",
        initMs: "process start to the runtime's first invocation/next request, median",
        firstRunMs:
          "process start to the response of a first booking run that pauses (DynamoDB Local), median",
      },
      node: nodeVersion(node),
      samples,
    };
    const ratio = results.coldStartMs / results.unbundledColdStartMs;
    const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MB`;
    console.table([
      {
        metric: "bundle (index.mjs)",
        bundled: mb(bundleBytes),
        unbundled: "",
        target: "<= 5 MB",
        met: bundleBytes <= BUNDLE_LIMIT_BYTES,
      },
      {
        metric: "init (ms)",
        bundled: results.initMs,
        unbundled: results.unbundledInitMs,
        target: "",
        met: "",
      },
      {
        metric: "cold start: first response (ms)",
        bundled: results.coldStartMs,
        unbundled: results.unbundledColdStartMs,
        target: "<= half",
        met: ratio <= 0.5,
      },
      {
        metric: "first booking run (ms)",
        bundled: results.firstRunMs,
        unbundled: results.unbundledFirstRunMs,
        target: "",
        met: "",
      },
    ]);
    console.log(`wrote ${writeResults("image", results)}`);
  } finally {
    await api.stop();
    await deleteTestTable(client, tableName);
    client.destroy();
    rmSync(unbundledDir, { recursive: true, force: true });
  }
}

/**
 * Packages stay external (Node resolves them from node_modules at init), except their JSON files: the source
 * imports `@langchain/langgraph/package.json` without `with { type: "json" }`, which esbuild's bundle inlines but
 * an external ESM import of it fails at init on Node 22 (ERR_IMPORT_ATTRIBUTE_MISSING). Inlining a JSON file
 * changes nothing the comparison measures: both variants then load every module of code the same way.
 */
export const externalPackagesButJson: Plugin = {
  name: "external-packages-but-json",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.endsWith(".json") ? undefined : { path: args.path, external: true },
    );
  },
};

/** The same entry, with every package left to Node's resolver (node_modules), plus the same bootstrap and client. */
export async function buildUnbundled(bundledDir: string, outDir: string): Promise<void> {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: { index: join(REPO_ROOT, "image", "index.ts") },
    outdir: outDir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    plugins: [externalPackagesButJson],
    platform: "node",
    target: "node22",
    format: "esm",
    logLevel: "warning",
  });
  cpSync(join(bundledDir, BOOTSTRAP_FILE), join(outDir, BOOTSTRAP_FILE));
  cpSync(join(bundledDir, RIC_DIR), join(outDir, RIC_DIR), { recursive: true });
}

interface ColdStart {
  /** Process start to the runtime asking for its first event (init done). */
  initMs: number;
  /** Process start to the response of the first request (`GET /assistants/booking`: no table access). */
  firstResponseMs: number;
  /** Process start to the response of a booking run that pauses (DynamoDB Local round trips included). */
  firstRunMs: number;
}

async function coldStart(
  node: string,
  taskRoot: string,
  api: RuntimeApiEmulator,
  endpoint: string,
  tableName: string,
): Promise<ColdStart> {
  const started = performance.now();
  const ric = startRic({
    node,
    taskRoot,
    handler: "index.handler",
    runtimeApi: api.address,
    env: { TABLE_NAME: tableName, DYNAMODB_ENDPOINT: endpoint, LOG_LEVEL: "warn" },
  });
  const died = ric.exited.then((code) => {
    throw new Error(`runtime exited (${String(code)}):\n${ric.output()}`);
  });
  const since = () => performance.now() - started;
  try {
    await Promise.race([api.waitForIdleRuntime(), died]);
    const initMs = since();
    const first = await Promise.race([
      api.invoke(apiGatewayEvent({ method: "GET", path: "/assistants/booking", tenant: "bench" })),
      died,
    ]);
    const firstResponseMs = since();
    expectStatus(first, 200, ric.output());
    const run = await Promise.race([
      api.invoke(
        apiGatewayEvent({
          method: "POST",
          path: "/invoke",
          tenant: "bench",
          body: { thread_id: `cold-${randomUUID()}`, input: { request: "book" } },
        }),
      ),
      died,
    ]);
    const firstRunMs = since();
    expectStatus(run, 202, ric.output());
    return { initMs, firstResponseMs, firstRunMs };
  } finally {
    died.catch(() => undefined);
    await ric.kill();
  }
}

function expectStatus(outcome: InvocationOutcome, status: number, output: string): void {
  const statusCode = (outcome.body as { statusCode?: number }).statusCode;
  if (outcome.kind !== "response" || statusCode !== status) {
    throw new Error(`expected ${status}, got ${JSON.stringify(outcome)}:\n${output}`);
  }
}

function nodeVersion(node: string): string {
  return execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
