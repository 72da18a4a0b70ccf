import { buildBookingGraph } from "../src/examples/booking";
import type { HandlerOptions } from "../src/runtime/assembly";
import { readRuntimeConfig, requireTableName, type RuntimeConfig } from "../src/runtime/config";
import { createLogger } from "../src/runtime/observability";
import type { GraphFactory } from "../src/runtime/types";
import { loadGraphModule, type GraphModuleExports } from "./graph-module";
import { readGraphSchemasFile } from "./graph-schemas-file";

/** The bundled example, served as the assistant `booking` when no GRAPH_MODULE is set. */
const EXAMPLE_ASSISTANTS: Record<string, GraphFactory> = {
  booking: ({ checkpointer }) => buildBookingGraph({ checkpointer }),
};

/** What every graph-running entry of the image (API, worker) builds its handler from, read once at cold start. */
export interface ImageRuntime {
  config: RuntimeConfig;
  tableName: string;
  graphs: GraphModuleExports;
  options: HandlerOptions;
}

/** Reads the container's environment and loads its graphs; any bad setting throws, naming the variable. */
export function readImageRuntime(env: NodeJS.ProcessEnv = process.env): ImageRuntime {
  const config = readRuntimeConfig(env);
  const tableName = requireTableName(config);
  const taskRoot = env.LAMBDA_TASK_ROOT ?? process.cwd();
  const graphs: GraphModuleExports = config.graphModule
    ? loadGraphModule(config.graphModule, taskRoot)
    : { assistants: EXAMPLE_ASSISTANTS };
  // The schemas the build read from the example's TypeScript describe the example only.
  const graphSchemas = config.graphModule ? undefined : readGraphSchemasFile(taskRoot);
  const logger = createLogger(config.logLevel);
  return {
    config,
    tableName,
    graphs,
    options: { ...graphs, ...(graphSchemas ? { graphSchemas } : {}), environment: config, logger },
  };
}
