/**
 * Writes the task root's compile cache (image/compile-cache.ts): runs the image's Node on every handler entry of
 * `taskRoot`, with Node's compile cache on, and keeps what Node wrote in `<taskRoot>/compile-cache/`. Node keys
 * each entry by the module's absolute path: run it on the tree where the image will run it (the Dockerfile
 * builds at /var/task). Each entry's init runs as at a cold start, against nothing: settings that need no
 * network (a table name, a local endpoint that is never called, an issuer whose keys are fetched on first use).
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { COMPILE_CACHE_DIR } from "../image/compile-cache";
import { IMAGE_HANDLERS } from "../src/runtime/environment";

/** What an entry's init reads, pointing nowhere: the warm-up sends no request. */
const WARM_UP_ENVIRONMENT = {
  TABLE_NAME: "memory-table-compile-cache",
  AWS_REGION: "us-east-1",
  AWS_ACCESS_KEY_ID: "warm-up",
  AWS_SECRET_ACCESS_KEY: "warm-up",
  DYNAMODB_ENDPOINT: "http://127.0.0.1:9",
  LOG_LEVEL: "silent",
  JWT_ISSUER: "https://issuer.memory-table.invalid",
  JWT_AUDIENCE: "memory-table",
};

/**
 * Imports each entry, then flushes the cache and prints the folder Node wrote it to. The stream entry checks at
 * init for the response-streaming global that aws-lambda-ric defines: a stand-in of its shape lets that init run.
 */
const WARM_UP_SCRIPT = `
const nodeModule = await import("node:module");
globalThis.awslambda ??= { streamifyResponse: (handler) => handler, HttpResponseStream: { from: (stream) => stream } };
const failed = [];
for (const url of JSON.parse(process.argv[1])) {
  try { await import(url); } catch (error) { failed.push(url + ": " + (error?.message ?? error)); }
}
nodeModule.flushCompileCache();
process.stdout.write(JSON.stringify({ directory: nodeModule.getCompileCacheDir(), failed }));
process.exit(0);
`;

export interface CompileCacheResult {
  files: number;
  bytes: number;
  /** Entries whose init failed during the warm-up (their modules were compiled all the same). */
  failed: string[];
}

export function writeCompileCache(taskRoot: string, node = process.execPath): CompileCacheResult {
  const scratch = mkdtempSync(join(tmpdir(), "memory-table-compile-cache-"));
  try {
    const entries = Object.values(IMAGE_HANDLERS).map(
      (handler) => pathToFileURL(join(taskRoot, `${handler.split(".")[0]}.mjs`)).href,
    );
    const run = spawnSync(
      node,
      ["--input-type=module", "-e", WARM_UP_SCRIPT, JSON.stringify(entries)],
      {
        cwd: taskRoot,
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          LAMBDA_TASK_ROOT: taskRoot,
          NODE_COMPILE_CACHE: scratch,
          ...WARM_UP_ENVIRONMENT,
        },
        encoding: "utf8",
        timeout: 120_000,
      },
    );
    if (run.status !== 0) {
      throw new Error(
        `Compile cache warm-up failed (exit ${String(run.status ?? run.signal)}): ${run.stderr}`,
      );
    }
    const { directory, failed } = JSON.parse(run.stdout) as {
      directory?: string;
      failed: string[];
    };
    if (!directory)
      throw new Error(`Node ${node} has no compile cache (Node 22.1 or newer needed)`);
    const target = join(taskRoot, COMPILE_CACHE_DIR);
    rmSync(target, { recursive: true, force: true });
    cpSync(directory, target, { recursive: true });
    const files = readdirSync(target);
    if (files.length === 0) throw new Error(`Node wrote no compile cache for ${taskRoot}`);
    const bytes = files.reduce((total, file) => total + statSync(join(target, file)).size, 0);
    return { files: files.length, bytes, failed };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
