/**
 * The image's ENTRYPOINT. aws-lambda-ric 4.x reads the handler only from `_HANDLER`, which AWS's base images set
 * from the container command in their own entry script; this image has no such script, so this module does it:
 * `node bootstrap.mjs index.handler` runs the API handler, `... cleaner.handler` the expired-thread cleaner.
 */
import { dirname, resolve } from "node:path";
import { useShippedCompileCache } from "./compile-cache";
import { isInitError } from "./init-error";

// A variable specifier keeps the bundler from inlining the client: it must load after the environment is set.
const RIC_MODULE = "./ric/index.mjs";

const handler = process.argv[2] ?? process.env._HANDLER;
if (!handler) {
  console.error(
    "Invalid command: expected a handler such as index.handler or cleaner.handler, got nothing",
  );
  process.exit(2);
}
process.env._HANDLER = handler;
// Lambda sets the task root; outside Lambda (docker run, tests) it is the directory of this file.
process.env.LAMBDA_TASK_ROOT ??= dirname(resolve(process.argv[1] ?? "."));
// Before the client and the handler's bundles load: they are what the shipped cache holds.
useShippedCompileCache(process.env.LAMBDA_TASK_ROOT);

// The client leaves a failed init as an unhandled rejection after logging and reporting it: exit without a
// second copy of the same error. Anything else is a crash, reported as Node would.
process.on("unhandledRejection", (reason) => {
  if (isInitError(reason)) process.exit(1);
  throw reason;
});

import(RIC_MODULE).catch((error: unknown) => {
  console.error("The runtime interface client failed to start:", error);
  process.exit(1);
});
