import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import type { Page } from "playwright-core";

/** The processes a UI test talks to (the dev server as `npm start` runs it, a UI's `next start`), and its steps. */

export const ROOT = resolve(__dirname, "../..");
export const FIXTURE_CONFIG = join(ROOT, "test/ui/fixture/langgraph.json");
/** Git-ignored: what each step looked like, one PNG per step (and one when a step failed). */
export const SCREENSHOT_DIR = join(ROOT, "test/ui/screenshots");

export type Backend = "memory" | "dynamodb-local";

/** Every process started here and still running, so that an interrupted run stops them (see stopAll). */
const running = new Map<ChildProcess, { graceMs: number; group: boolean }>();

function track(child: ChildProcess, graceMs: number, group = false): void {
  running.set(child, { graceMs, group });
  child.once("exit", () => running.delete(child));
}

/** Stops what is still running: the run was interrupted (SIGINT, SIGTERM) or failed half-way. */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map(([child, how]) => stopProcess(child, how.graceMs, how.group)));
}

export interface DevServer {
  url: string;
  /** The credential the UIs paste as "LangSmith API Key": the banner's dev token, for tenant "demo" (or an API key). */
  token: string;
  /** Answers arrive whole, streams included (API Gateway, which does not stream); the dev server streams. */
  buffered?: boolean;
  client: Client;
  stop(): Promise<void>;
}

/**
 * `npm start -- --config <langgraph.json>` (the UI fixture's unless `config` names another; with `--dynamodb-local`
 * for the DynamoDB backend), run from the
 * compiled dev server as `npm start` runs it, on a free port; the URL and the token are read from its banner as a
 * developer reads them.
 */
export async function startDevServer(
  backend: Backend,
  dataDir: string,
  config: string = FIXTURE_CONFIG,
): Promise<DevServer> {
  const args = ["--optimize-for-size", join(ROOT, "dist/dev/dev-server.js"), "--config", config];
  if (backend === "dynamodb-local") args.push("--dynamodb-local");
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: "0",
      LOG_LEVEL: "warn",
      DYNAMODB_LOCAL_DIR: join(dataDir, "dynamodb-local"),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  track(child, 15_000);
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const banner = await waitFor(
    () => {
      const url = /dev server on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
      const token = /^(eyJ[\w-]+\.[\w-]+\.[\w-]+)$/m.exec(output)?.[1];
      return url && token && output.includes("Stop with Ctrl-C") ? { url, token } : undefined;
    },
    child,
    120_000,
    () => `the dev server's banner (${backend}); it printed:\n${output}`,
  );
  return {
    ...banner,
    client: new Client({
      apiUrl: banner.url,
      apiKey: banner.token,
      callerOptions: { maxRetries: 0 },
    }),
    stop: () => stopProcess(child, 15_000),
  };
}

export interface NextApp {
  url: string;
  stop(): Promise<void>;
}

/** The built UI served by its own `next start` on a free loopback port: another origin than the dev server's. */
export async function startNextApp(dir: string): Promise<NextApp> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [join(dir, "node_modules/next/dist/bin/next"), "start", "-p", String(port), "-H", "127.0.0.1"],
    {
      cwd: dir,
      env: {
        ...process.env,
        NODE_ENV: "production",
        NEXT_TELEMETRY_DISABLED: "1",
        PORT: String(port),
      },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
  track(child, 10_000, true);
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  await waitFor(
    () => (/Ready in|✓ Ready/.test(output) ? true : undefined),
    child,
    60_000,
    () => `next start in ${dir}; it printed:\n${output}`,
  );
  return { url: `http://127.0.0.1:${port}`, stop: () => stopProcess(child, 10_000, true) };
}

export function javaMissing(): string | undefined {
  const java = process.env.JAVA || "java";
  const probe = spawnSync(java, ["-version"], { encoding: "utf8" });
  return probe.error || probe.status !== 0
    ? `${java} not found or not working (DynamoDB Local needs Java 17+)`
    : undefined;
}

/** Runs each step in order, timing it; after a failed step the rest of its group are not run (they depend on it). */
export class Steps {
  readonly results: Array<{
    group: string;
    step: string;
    outcome: "passed" | "failed" | "skipped";
    ms: number;
    note: string;
  }> = [];

  constructor(private readonly log: (line: string) => void) {}

  group(name: string, page: () => Page | undefined) {
    let broken: string | undefined;
    return async (step: string, run: () => Promise<string | void>): Promise<void> => {
      if (broken) {
        this.record(name, step, "skipped", 0, `not run: ${broken} failed`);
        return;
      }
      const started = Date.now();
      try {
        const note = (await run()) ?? "";
        const ms = Date.now() - started;
        await screenshot(page(), `${name}-${step}`);
        this.record(name, step, "passed", ms, note);
      } catch (error) {
        const ms = Date.now() - started;
        broken = step;
        await screenshot(page(), `${name}-${step}-FAILED`);
        this.record(
          name,
          step,
          "failed",
          ms,
          (error as Error).message.split("\n").slice(0, 6).join(" | "),
        );
      }
    };
  }

  skip(group: string, steps: readonly string[], reason: string): void {
    for (const step of steps) this.record(group, step, "skipped", 0, reason);
  }

  private record(
    group: string,
    step: string,
    outcome: "passed" | "failed" | "skipped",
    ms: number,
    note: string,
  ): void {
    this.results.push({ group, step, outcome, ms, note });
    const mark = outcome === "passed" ? "ok  " : outcome === "failed" ? "FAIL" : "SKIP";
    this.log(`${mark} ${group} ${step} (${(ms / 1000).toFixed(1)} s)${note ? `: ${note}` : ""}`);
  }
}

async function screenshot(page: Page | undefined, name: string): Promise<void> {
  if (!page || page.isClosed()) return;
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page
    .screenshot({
      path: join(SCREENSHOT_DIR, `${name.replace(/[^\w.-]+/g, "_")}.png`),
      fullPage: true,
    })
    .catch(() => undefined);
}

/** Polls `check` until it returns a value, the process exits, or `ms` pass. */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  what: () => string,
  ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((done) => setTimeout(done, 200));
  }
  throw new Error(
    `expected ${what()} within ${ms / 1000} s${last ? ` (last error: ${String(last)})` : ""}`,
  );
}

async function waitFor<T>(
  check: () => T | undefined,
  child: ChildProcess,
  ms: number,
  what: () => string,
): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = check();
    if (value !== undefined) return value;
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`exited (${child.exitCode ?? child.signalCode}) before ${what()}`);
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  child.kill("SIGKILL");
  throw new Error(`timed out waiting for ${what()}`);
}

/** SIGTERM (to the process group when `group`), then SIGKILL after `graceMs`. */
function stopProcess(child: ChildProcess, graceMs: number, group = false): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const signal = (name: NodeJS.Signals) => {
    try {
      if (group && child.pid !== undefined) process.kill(-child.pid, name);
      else child.kill(name);
    } catch {
      // already gone
    }
  };
  return new Promise((done) => {
    const timer = setTimeout(() => signal("SIGKILL"), graceMs);
    child.once("exit", () => {
      clearTimeout(timer);
      done();
    });
    signal("SIGTERM");
  });
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => done(port));
    });
  });
}
