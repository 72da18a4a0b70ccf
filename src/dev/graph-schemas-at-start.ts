import { createHash } from "node:crypto";
import { dirname, join, resolve } from "node:path";
import type { Logger } from "pino";
import type { SourceSchemasByGraph } from "../runtime/graphs/graph-schemas";
import { readConfig, readGraphEntries } from "../runtime/graphs/langgraph-json";
import type { GraphSource } from "./graph-source-schemas";
import { devDirectory } from "./paths";
import { readSourceSchemasCached } from "./source-schema-cache";

/**
 * The dev server's graph schemas at start: the served graphs' TypeScript read once (a cache in `.dev/` per set of
 * graphs keeps them while no file changes), so `GET /assistants/{id}/schemas` describes Annotation graphs as
 * `langgraph dev` does. What could not be read is logged, and those schemas stay unknown.
 */
export async function readDevGraphSchemas(
  configPath: string | undefined,
  logger: Logger,
): Promise<SourceSchemasByGraph> {
  const sources = configPath
    ? await projectSources(configPath)
    : exampleGraphSources(dirname(devDirectory()));
  const key = createHash("sha256").update(JSON.stringify(sources)).digest("hex").slice(0, 16);
  const read = readSourceSchemasCached(sources, join(devDirectory(), `graph-schemas-${key}.json`));
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
