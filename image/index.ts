/**
 * The image's API handler (CMD `index.handler`): the library's Lambda handler, configured from the container's
 * environment at cold start. GRAPH_MODULE plugs in the app team's graph; without it the bundled booking example
 * is served as the assistant `booking`. Any bad setting fails the init, naming the variable.
 */
import { buildBookingGraph } from "../src/examples/booking";
import { readRuntimeConfig, requireTableName } from "../src/runtime/config";
import { createHandler } from "../src/runtime/handler";
import { createLogger } from "../src/runtime/observability";
import type { GraphFactory } from "../src/runtime/types";
import { loadGraphModule } from "./graph-module";
import { atColdStart } from "./init-error";

const EXAMPLE_ASSISTANTS: Record<string, GraphFactory> = {
  booking: ({ checkpointer }) => buildBookingGraph({ checkpointer }),
};

export const handler = atColdStart(() => {
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
