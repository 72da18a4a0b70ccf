/**
 * The image's background-run worker (CMD `worker.handler`): the library's worker, configured like the API
 * handler from the container's environment at cold start. The API function sends it one asynchronous invocation
 * per job; its on-failure queue feeds it the jobs Lambda gave up on, which it records as failed runs.
 */
import { createWorkerHandler } from "../src/runtime/worker";
import { readImageRuntime } from "./image-runtime";
import { atColdStart } from "./init-error";

export const handler = atColdStart(() => {
  const runtime = readImageRuntime();
  const worker = createWorkerHandler(runtime.options);
  runtime.options.logger?.info(
    {
      table: runtime.tableName,
      graphModule: runtime.config.graphModule ?? "(bundled booking example)",
    },
    "memory-table worker ready",
  );
  return worker;
});
