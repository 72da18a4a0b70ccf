/**
 * The image's background-run worker (CMD `worker.handler`): the library's worker, configured like the API
 * handler from the container's environment at cold start, secrets of ENVIRONMENT_ARNS included (its graphs
 * need them as much as the API's). The API function sends it one asynchronous invocation per job; its
 * on-failure queue feeds it the jobs Lambda gave up on, which it records as failed runs.
 */
import { createWorkerHandler } from "../src/runtime/worker";
import { atGraphColdStart } from "./environment-arns";
import { readImageRuntime } from "./image-runtime";

// Top-level await, as in index.ts: the runtime client counts the secrets' reads as the function's init.
// @ts-expect-error TS1309: tsc types image/ as CommonJS (package.json has no "type"); esbuild bundles it as ESM.
export const handler = await atGraphColdStart(() => {
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
