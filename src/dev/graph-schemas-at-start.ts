import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { Worker } from "node:worker_threads";
import type { Logger } from "pino";
import type { SourceSchemasByGraph } from "../runtime/graphs/graph-schemas";
import { readConfig, readGraphEntries } from "../runtime/graphs/langgraph-json";
import type { GraphSource } from "./graph-source-schemas";
import type { SchemasWorkerInput } from "./graph-schemas-worker";
import { devDirectory } from "./paths";
import type { CachedSourceSchemas } from "./source-schema-cache";

export interface DevGraphSchemasOptions {
  /** Where the cache of read schemas is kept (default: the repository's `.dev/`). */
  cacheDirectory?: string;
}

/**
 * The dev server's graph schemas at start: the served graphs' TypeScript read once (a cache in `.dev/` per set of
 * graphs keeps them while no file changes), so `GET /assistants/{id}/schemas` describes Annotation graphs as
 * `langgraph dev` does. The reading runs in a worker thread (a first start after a graph edit costs seconds of
 * compiler CPU), so the server answers every other route meanwhile: give the promise to the handler
 * (HandlerOptions.graphSchemas) without waiting for it. What could not be read is logged, and those schemas stay
 * unknown; the promise never rejects (a failed reading is logged and leaves every graph's schemas unknown).
 */
export async function readDevGraphSchemas(
  configPath: string | undefined,
  logger: Logger,
  options: DevGraphSchemasOptions = {},
): Promise<SourceSchemasByGraph> {
  const sources = configPath
    ? await projectSources(configPath)
    : exampleGraphSources(dirname(devDirectory()));
  const key = createHash("sha256").update(JSON.stringify(sources)).digest("hex").slice(0, 16);
  const cacheFile = join(options.cacheDirectory ?? devDirectory(), `graph-schemas-${key}.json`);
  let read: CachedSourceSchemas;
  try {
    read = await readInWorker({ sources, cacheFile });
  } catch (error) {
    logger.error(
      { err: error },
      "No JSON schemas from TypeScript for any graph: the reading failed; graphs without zod or StateSchema schemas have none in /assistants/{id}/schemas",
    );
    return {};
  }
  for (const problem of read.problems) {
    const graph = problem.graphId === "*" ? "any graph" : `graph "${problem.graphId}"`;
    logger.warn(
      { graph: problem.graphId },
      `No JSON schemas from TypeScript for ${graph}: ${problem.message}; its schemas are left out of /assistants/{id}/schemas unless it carries zod or StateSchema schemas`,
    );
  }
  logger.info(
    { graphs: Object.keys(read.schemas), ms: Math.round(read.ms), cached: read.cached },
    read.cached
      ? "graph schemas from the cache (no graph file changed)"
      : "graph schemas read from TypeScript",
  );
  return read.schemas;
}

/**
 * Runs graph-schemas-worker in a worker thread: the compiled one beside this code in the dev server's bundle
 * (dist/dev/, `npm run build:dev`), else its TypeScript source through tsx's loader (tests, `tsx`).
 */
function readInWorker(input: SchemasWorkerInput): Promise<CachedSourceSchemas> {
  const compiled = join(__dirname, "graph-schemas-worker.js");
  const worker = existsSync(compiled)
    ? new Worker(compiled, { workerData: input })
    : new Worker(
        `require(${JSON.stringify(require.resolve("tsx/cjs"))}); require(${JSON.stringify(join(__dirname, "graph-schemas-worker.ts"))});`,
        { eval: true, workerData: input },
      );
  return new Promise((resolvePromise, reject) => {
    let answered = false;
    worker.once("message", (message: { read?: CachedSourceSchemas; error?: string }) => {
      answered = true;
      if (message.read) resolvePromise(message.read);
      else reject(new Error(message.error ?? "the schemas worker answered nothing"));
    });
    worker.once("error", reject);
    worker.once("exit", (code) => {
      if (!answered) reject(new Error(`the schemas worker exited (${code}) without an answer`));
    });
  });
}

async function projectSources(configPath: string): Promise<GraphSource[]> {
  const path = resolve(configPath);
  const entries = await readGraphEntries((await readConfig(path)).graphs, dirname(path));
  return entries.map(({ id, file, exportName }) => ({ id, file, exportName }));
}

/**
 * The booking example's source in the repository at `root`: served as `booking` by `npm start` without --config
 * (src/dev/assistants.ts) and by the image without GRAPH_MODULE (image/image-runtime.ts).
 */
export function exampleGraphSources(root: string): GraphSource[] {
  return [
    {
      id: "booking",
      file: join(root, "src", "examples", "booking.ts"),
      exportName: "buildBookingGraph",
    },
  ];
}
