import { parentPort, workerData } from "node:worker_threads";
import type { GraphSource } from "./graph-source-schemas";
import { readSourceSchemasCached } from "./source-schema-cache";

/**
 * The dev server's graph schemas read off its main thread (started by graph-schemas-at-start.ts): the compiler
 * takes seconds of CPU on a first start after a graph edit, and the server answers requests meanwhile.
 */
export interface SchemasWorkerInput {
  sources: GraphSource[];
  cacheFile: string;
}

const input = workerData as SchemasWorkerInput;
try {
  parentPort!.postMessage({ read: readSourceSchemasCached(input.sources, input.cacheFile) });
} catch (error) {
  parentPort!.postMessage({
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
}
