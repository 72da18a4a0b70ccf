/**
 * The image's API handler (CMD `index.handler`): the library's Lambda handler, configured from the container's
 * environment at cold start. GRAPH_MODULE plugs in the app team's graph; without it the bundled booking example
 * is served as the assistant `booking`. Secrets named by ENVIRONMENT_ARNS are read first. Any bad setting fails
 * the init, naming the variable.
 */
import { buildBookingGraph } from "../src/examples/booking";
import { readRuntimeConfig, requireTableName } from "../src/runtime/config";
import { createHandler } from "../src/runtime/handler";
import { createLogger } from "../src/runtime/observability";
import type { GraphFactory } from "../src/runtime/types";
import { atGraphColdStart } from "./environment-arns";
import { loadGraphModule } from "./graph-module";

const EXAMPLE_ASSISTANTS: Record<string, GraphFactory> = {
  booking: ({ checkpointer }) => buildBookingGraph({ checkpointer }),
};

// Top-level await: the runtime client awaits this ES module's evaluation as the function's init, so the secrets
// of ENVIRONMENT_ARNS are in the environment before the graph module loads.
// @ts-expect-error TS1309: tsc types image/ as CommonJS (package.json has no "type"); esbuild bundles it as ESM.
export const handler = await atGraphColdStart(() => {
  const config = readRuntimeConfig(process.env);
  const tableName = requireTableName(config);
  const taskRoot = process.env.LAMBDA_TASK_ROOT ?? process.cwd();
  const graphs = config.graphModule
    ? loadGraphModule(config.graphModule, taskRoot)
    : { assistants: EXAMPLE_ASSISTANTS };
  const logger = createLogger(config.logLevel);
  const apiHandler = createHandler({ ...graphs, environment: config, logger });
  logger.info(
    {
      table: tableName,
      graphModule: config.graphModule ?? "(bundled booking example)",
      assistants: graphs.assistants ? Object.keys(graphs.assistants) : ["agent"],
    },
    "memory-table image ready",
  );
  return apiHandler;
});
