import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { BOOTSTRAP_FILE, REPO_ROOT } from "../../scripts/build-image";

/**
 * Runs the image's ENTRYPOINT + CMD (`node bootstrap.mjs <handler>`) from a task root, on the image's Node major,
 * the way Lambda starts the container: only the Runtime API address and the function's environment are given.
 */
export const IMAGE_NODE_MAJOR = 22;

/** A Node binary of the image's major for the image tests, when the tests themselves run on another major. */
export const IMAGE_NODE_VARIABLE = "MEMORY_TABLE_IMAGE_NODE";

const RIC_ADDON = join(REPO_ROOT, "node_modules", "aws-lambda-ric", "rapid-client.node");

/**
 * The Node binary that runs the image's tree in the tests, of the Dockerfile's Node major: the one named by
 * MEMORY_TABLE_IMAGE_NODE, else the Node running the tests when it is that major (`.ci/run` sees to it), else
 * none. None either where the runtime interface client cannot run: it is Linux-only, and aws-lambda-ric's
 * install builds its native addon only there. A variable naming anything but a Node of that major is an error,
 * not a skip.
 */
export function imageNodeBinary(): string | undefined {
  if (missingRuntimeClient() !== undefined) return undefined;
  const configured = process.env[IMAGE_NODE_VARIABLE];
  if (configured) {
    const result = spawnSync(configured, ["--version"], { encoding: "utf8" });
    const version = result.stdout?.trim() ?? "";
    if (result.error || !version.startsWith(`v${IMAGE_NODE_MAJOR}.`)) {
      throw new Error(
        `Invalid ${IMAGE_NODE_VARIABLE}: expected a Node ${IMAGE_NODE_MAJOR} binary, got ${configured} (${
          result.error?.message ?? (version || "no version")
        })`,
      );
    }
    return configured;
  }
  return process.versions.node.startsWith(`${IMAGE_NODE_MAJOR}.`) ? process.execPath : undefined;
}

/** What a `SKIP:` line names when imageNodeBinary() finds none. */
export function missingImageNode(): string {
  return (
    missingRuntimeClient() ??
    `Node ${IMAGE_NODE_MAJOR} (the image's Node major): this runs on ${process.version}; run on Node ` +
      `${IMAGE_NODE_MAJOR} or set ${IMAGE_NODE_VARIABLE} to a Node ${IMAGE_NODE_MAJOR} binary ` +
      "(on Linux, scripts/node22.sh prints the folder of one)"
  );
}

/** Why the image's runtime interface client cannot run here, or undefined when it can. */
export function missingRuntimeClient(): string | undefined {
  if (process.platform !== "linux") {
    return `Linux: aws-lambda-ric (the image's runtime interface client) builds its native addon only there, and this is ${process.platform}`;
  }
  if (!existsSync(RIC_ADDON)) {
    return `aws-lambda-ric's native addon (${RIC_ADDON}): its install script did not run (npm rebuild aws-lambda-ric)`;
  }
  return undefined;
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
