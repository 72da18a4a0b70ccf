/**
 * Section "image": the container image's cold start and size, its current layout against the previous one built
 * in the same run.
 *
 * - Cold start: every entry of IMAGE_HANDLERS run by aws-lambda-ric on the image's Node against a local Runtime
 *   API, in the shipped tree (entries sharing chunks, with the compile cache of scripts/compile-cache.ts) and in
 *   the previous one (the same tree without the cache), alternated run by run. Init = process start to the runtime's first
 *   `invocation/next` (what Lambda reports as Init Duration, plus the process spawn). The API entry also gets a
 *   first response and a first booking run, and is compared with the same handler loaded from node_modules.
 * - Size: the runtime stage's layers (bench/image-layers.ts), on a stand-in of the base, since no engine runs here.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { build, type Plugin } from "esbuild";
import { IMAGE_HANDLERS } from "../src/runtime/environment";
import { BOOTSTRAP_FILE, buildImage, REPO_ROOT, RIC_DIR } from "../scripts/build-image";
import { writeCompileCache } from "../scripts/compile-cache";
import { COMPILE_CACHE_DIR } from "../image/compile-cache";
import { createLocalClient, createTestTable, deleteTestTable } from "../test/support/dynamodb";
import { apiGatewayEvent } from "../test/image/events";
import { imageNodeBinary, missingImageNode, startRic } from "../test/image/ric-process";
import { RuntimeApiEmulator, type InvocationOutcome } from "../test/image/runtime-api";
import { median, writeResults, type BenchContext } from "./context";
import { measureLayers, treeBytes, type LayersResult } from "./image-layers";

const RUNS = 7;
const LAYOUTS = ["uncached", "cached"] as const;
type Layout = (typeof LAYOUTS)[number];
const LAYOUT_NAMES: Record<Layout, string> = {
  uncached:
    "before: entries sharing chunks/, no compile cache (the previous tree, built in this run)",
  cached:
    "after: the same tree with its compile cache (V8's compiled code of the entries and chunks)",
};
const BUNDLE_LIMIT_BYTES = 5 * 1024 * 1024;
const IMAGE_LIMIT_BYTES = 200 * 1000 * 1000;

export default async function image(context: BenchContext): Promise<void> {
  const node = imageNodeBinary();
  if (!node) {
    console.log(`SKIP: image bench: ${missingImageNode()}`);
    return;
  }
  const loadAtStart = loadavg()[0]!;
  const shared = await buildImage();
  // The other trees live inside the repository so that the unbundled one resolves from node_modules.
  const uncachedDir = join(REPO_ROOT, "dist", "image-uncached");
  rmSync(uncachedDir, { recursive: true, force: true });
  cpSync(shared.outDir, uncachedDir, { recursive: true });
  // Node keys the cache by each module's path: made for the shipped tree's own path, as the Dockerfile does.
  const compileCache = writeCompileCache(shared.outDir, node);
  const unbundledDir = join(REPO_ROOT, "dist", "image-unbundled");
  await buildUnbundled(uncachedDir, unbundledDir);
  const taskRoots: Record<Layout, string> = { uncached: uncachedDir, cached: shared.outDir };
  const bytesLoaded: Record<Layout, Record<string, number>> = {
    uncached: shared.handlerBytes,
    cached: shared.handlerBytes,
  };

  const client = createLocalClient(context.endpoint);
  const tableName = await createTestTable(client, "memory-table-bench-image");
  const api = await RuntimeApiEmulator.start();
  const env = {
    TABLE_NAME: tableName,
    DYNAMODB_ENDPOINT: context.endpoint,
    LOG_LEVEL: "warn",
    // The stream entry verifies tokens itself; its key set is fetched on the first request, not at init.
    JWT_ISSUER: "https://issuer.memory-table.invalid",
    JWT_AUDIENCE: "memory-table",
  };
  try {
    const initSamples: Record<Layout, Record<string, number[]>> = { uncached: {}, cached: {} };
    const apiSamples: Record<Layout | "unbundled", ApiColdStart[]> = {
      uncached: [],
      cached: [],
      unbundled: [],
    };
    // Alternate layouts and entries run by run, so that load from other processes hits all alike.
    for (let run = 0; run < RUNS; run++) {
      for (const handler of Object.values(IMAGE_HANDLERS)) {
        // Back to back, the first of the pair alternating: each pair is compared as a ratio.
        for (const layout of run % 2 === 0 ? LAYOUTS : [...LAYOUTS].reverse()) {
          const ms = await initOnly(node, taskRoots[layout], handler, api, env);
          (initSamples[layout][handler] ??= []).push(ms);
        }
      }
      for (const variant of ["cached", "uncached", "unbundled"] as const) {
        const taskRoot = variant === "unbundled" ? unbundledDir : taskRoots[variant];
        apiSamples[variant].push(await apiColdStart(node, taskRoot, api, env));
      }
    }

    const entries = Object.fromEntries(
      Object.values(IMAGE_HANDLERS).map((handler) => {
        const file = `${handler.split(".")[0]}.mjs`;
        const initMs = (layout: Layout) => round(median(initSamples[layout][handler]!));
        return [
          handler,
          {
            bytesLoaded: { before: bytesLoaded.uncached[file], after: bytesLoaded.cached[file] },
            initMs: { before: initMs("uncached"), after: initMs("cached") },
            initRatio: round2(
              median(
                initSamples.cached[handler]!.map(
                  (after, index) => after / initSamples.uncached[handler]![index]!,
                ),
              ),
            ),
            initSamplesMs: {
              before: initSamples.uncached[handler]!.map(round),
              after: initSamples.cached[handler]!.map(round),
            },
          },
        ];
      }),
    );
    const apiMedian = (variant: keyof typeof apiSamples, key: keyof ApiColdStart) =>
      round(median(apiSamples[variant].map((sample) => sample[key])));
    const taskRootBytes = { before: treeBytes(uncachedDir), after: treeBytes(shared.outDir) };
    const layers = await measureLayers({ before: uncachedDir, after: shared.outDir });

    const results = {
      node: nodeVersion(node),
      runs: RUNS,
      // Other processes' load makes every time longer: the ratios of back-to-back pairs are what to compare.
      loadAverage: { atStart: round(loadAtStart), atEnd: round(loadavg()[0]!) },
      layouts: { before: LAYOUT_NAMES.uncached, after: LAYOUT_NAMES.cached },
      definitions: {
        initMs: "process start to the runtime's first invocation/next request (init done), median",
        initRatio:
          "median of after/before over pairs run back to back (below 1: the compile cache starts faster)",
        bytesLoaded: "bytes of the entry module and every chunk it imports statically",
        coldStartMs: "process start to the first response (GET /assistants/booking), median",
        firstRunMs:
          "process start to the response of a first booking run that pauses (DynamoDB Local), median",
        layers: "uncompressed size of each layer: bytes of its tar stream, as a registry stores it",
      },
      entries,
      taskRootBytes,
      compileCache: {
        files: compileCache.files,
        bytes: compileCache.bytes,
        dir: COMPILE_CACHE_DIR,
      },
      api: {
        coldStartMs: {
          before: apiMedian("uncached", "firstResponseMs"),
          after: apiMedian("cached", "firstResponseMs"),
          unbundled: apiMedian("unbundled", "firstResponseMs"),
        },
        firstRunMs: {
          before: apiMedian("uncached", "firstRunMs"),
          after: apiMedian("cached", "firstRunMs"),
          unbundled: apiMedian("unbundled", "firstRunMs"),
        },
        samples: apiSamples,
      },
      layers,
    };
    printTables(results, layers);
    console.log(`wrote ${writeResults("image", results)}`);
  } finally {
    await api.stop();
    await deleteTestTable(client, tableName);
    client.destroy();
    rmSync(unbundledDir, { recursive: true, force: true });
    rmSync(uncachedDir, { recursive: true, force: true });
  }
}

function printTables(
  results: {
    loadAverage: { atStart: number; atEnd: number };
    entries: Record<
      string,
      {
        bytesLoaded: { before?: number; after?: number };
        initMs: { before: number; after: number };
        initRatio: number;
      }
    >;
    taskRootBytes: { before: number; after: number };
    api: {
      coldStartMs: { before: number; after: number; unbundled: number };
      firstRunMs: { before: number; after: number; unbundled: number };
    };
  },
  layers: LayersResult,
): void {
  const mb = (bytes: number | undefined) =>
    bytes === undefined ? "" : `${(bytes / 1000 / 1000).toFixed(2)} MB`;
  console.log(
    `cold start of each entry, before (no compile cache) and after (its compile cache), load average ${results.loadAverage.atStart} -> ${results.loadAverage.atEnd}:`,
  );
  console.table(
    Object.entries(results.entries).map(([handler, entry]) => ({
      entry: handler,
      "loaded before": mb(entry.bytesLoaded.before),
      "loaded after": mb(entry.bytesLoaded.after),
      "init before (ms)": entry.initMs.before,
      "init after (ms)": entry.initMs.after,
      "after/before": entry.initRatio,
      "loaded <= 5 MB": (entry.bytesLoaded.after ?? Infinity) <= BUNDLE_LIMIT_BYTES,
    })),
  );
  console.table([
    {
      metric: "task root (/var/task)",
      before: mb(results.taskRootBytes.before),
      after: mb(results.taskRootBytes.after),
      unbundled: "",
    },
    {
      metric: "API: first response (ms)",
      ...results.api.coldStartMs,
    },
    {
      metric: "API: first booking run (ms)",
      ...results.api.firstRunMs,
    },
  ]);
  if ("skipped" in layers) {
    console.log(`SKIP: image layers: ${layers.skipped}`);
    return;
  }
  for (const check of layers.checks) console.log(`checked: ${check}`);
  if ("skipped" in layers.buildah) {
    console.log(`SKIP: the layers built by buildah: ${layers.buildah.skipped}`);
  } else {
    console.log(
      `${layers.buildah.builder}, the slim and runtime stages on the same base: layers of ${layers.buildah.layerBytes
        .map((bytes) => mb(bytes))
        .join(" + ")}; ${layers.buildah.ranEntry}`,
    );
  }
  console.log(`runtime stage, layer by layer (${layers.base}):`);
  console.table(
    [...layers.before.layers, ...layers.after.layers].map((layer) => ({
      image: layer.image,
      layer: layer.name,
      size: mb(layer.bytes),
    })),
  );
  console.table([
    { image: "before", total: mb(layers.before.totalBytes), target: "", met: "" },
    {
      image: "after",
      total: mb(layers.after.totalBytes),
      target: "<= 200 MB",
      met: layers.after.totalBytes <= IMAGE_LIMIT_BYTES,
    },
  ]);
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

/** The API entry, with every package left to Node's resolver (node_modules), plus the same bootstrap and client. */
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
  copyRuntimeClient(bundledDir, outDir);
}

function copyRuntimeClient(fromDir: string, toDir: string): void {
  cpSync(join(fromDir, BOOTSTRAP_FILE), join(toDir, BOOTSTRAP_FILE));
  cpSync(join(fromDir, RIC_DIR), join(toDir, RIC_DIR), { recursive: true });
}

/** Process start to the runtime's first `invocation/next` (init done), in ms; the process is then killed. */
async function initOnly(
  node: string,
  taskRoot: string,
  handler: string,
  api: RuntimeApiEmulator,
  env: Record<string, string>,
): Promise<number> {
  const started = performance.now();
  const ric = startRic({ node, taskRoot, handler, runtimeApi: api.address, env });
  const died = ric.exited.then((code) => {
    throw new Error(`${handler} exited (${String(code)}) during init:\n${ric.output()}`);
  });
  try {
    await Promise.race([api.waitForIdleRuntime(), died]);
    return performance.now() - started;
  } finally {
    died.catch(() => undefined);
    await ric.kill();
  }
}

interface ApiColdStart {
  /** Process start to the runtime asking for its first event (init done). */
  initMs: number;
  /** Process start to the response of the first request (`GET /assistants/booking`: no table access). */
  firstResponseMs: number;
  /** Process start to the response of a booking run that pauses (DynamoDB Local round trips included). */
  firstRunMs: number;
}

async function apiColdStart(
  node: string,
  taskRoot: string,
  api: RuntimeApiEmulator,
  env: Record<string, string>,
): Promise<ApiColdStart> {
  const started = performance.now();
  const ric = startRic({
    node,
    taskRoot,
    handler: IMAGE_HANDLERS.api,
    runtimeApi: api.address,
    env,
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
    return {
      initMs: round(initMs),
      firstResponseMs: round(firstResponseMs),
      firstRunMs: round(firstRunMs),
    };
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

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
