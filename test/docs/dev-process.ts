import { spawn, type ChildProcess } from "node:child_process";

/**
 * A dev server started as the docs tell a developer to start it (`npm start`, `npm run dev:dynamodb`), in its own
 * process group, so that stopping it stops everything it started (DynamoDB Local included) and nothing else.
 */
export interface DevProcess {
  url: string;
  banner: string;
  /** SIGTERM to the group, SIGKILL after `graceMs`; resolves once the npm process has exited. */
  stop(graceMs?: number): Promise<void>;
}

const BANNER_END = "Stop with Ctrl-C";
const URL_LINE = /Memory Table dev server on (http:\/\/127\.0\.0\.1:\d+)/;

export async function startDevProcess(
  root: string,
  npmArgs: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 60_000,
): Promise<DevProcess> {
  const child = spawn("npm", npmArgs, {
    cwd: root,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  let exitCode: number | string | null | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once("close", (code, signal) => {
      exitCode = code ?? signal;
      resolve();
    }),
  );
  const stop = async (graceMs = 10_000) => {
    if (exitCode !== undefined) return;
    signalGroup(child, "SIGTERM");
    const timer = setTimeout(() => signalGroup(child, "SIGKILL"), graceMs);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + timeoutMs;
  while (!output.includes(BANNER_END)) {
    if (exitCode !== undefined) {
      throw new Error(
        `npm ${npmArgs.join(" ")} exited (${exitCode}) before its banner:\n${output}`,
      );
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`npm ${npmArgs.join(" ")}: no banner within ${timeoutMs} ms:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const url = URL_LINE.exec(output)?.[1];
  if (!url) {
    await stop();
    throw new Error(`npm ${npmArgs.join(" ")}: the banner names no URL:\n${output}`);
  }
  return { url, banner: output, stop };
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}
