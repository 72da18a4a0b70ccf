/**
 * The image's API handler (CMD `index.handler`): the library's Lambda handler, configured from the container's
 * environment at cold start. GRAPH_MODULE plugs in the app team's graph; without it the bundled booking example
 * is served as the assistant `booking`. Secrets named by ENVIRONMENT_ARNS are read first. Any bad setting fails
 * the init, naming the variable.
 */
import { createHandler } from "../src/runtime/handler";
import { atGraphColdStart } from "./environment-arns";
import { readImageRuntime } from "./image-runtime";

// Top-level await: the runtime client awaits this ES module's evaluation as the function's init, so the secrets
// of ENVIRONMENT_ARNS are in the environment before the graph module loads.
// @ts-expect-error TS1309: tsc types image/ as CommonJS (package.json has no "type"); esbuild bundles it as ESM.
export const handler = await atGraphColdStart(() => {
  const runtime = readImageRuntime();
  const apiHandler = createHandler(runtime.options);
  runtime.options.logger?.info(
    {
      table: runtime.tableName,
      graphModule: runtime.config.graphModule ?? "(bundled booking example)",
      assistants: runtime.graphs.assistants ? Object.keys(runtime.graphs.assistants) : ["agent"],
    },
    "memory-table image ready",
  );
  return apiHandler;
});
