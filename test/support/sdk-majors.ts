import { readFileSync, renameSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, type ClientConfig } from "@langchain/langgraph-sdk";
import type * as SdkV2 from "@langchain/langgraph-sdk-v2";
import { buildSync } from "esbuild";

/**
 * The two majors of the official `@langchain/langgraph-sdk` the server is tested with:
 *
 * - `@langchain/langgraph-sdk` (1.15.0): the registry's `latest`, the one `@langchain/langgraph` itself depends on
 *   (`~1.15.0`), what `npm install @langchain/langgraph-sdk` gives today.
 * - `@langchain/langgraph-sdk-v2` (an npm alias of 2.0.0): the only 2.x. It was released by mistake (a changeset
 *   marked `major` for one new thread field, langgraphjs #1974; re-released as 1.6.3 the same day, #1976) and is
 *   deprecated, but a project that installed it in that window has `^2.0.0` and stays on it: it is the 1.6 client,
 *   which re-sends a POST on 429 and 5xx, sends an array query parameter as one JSON string, and hands an empty
 *   event to its caller for a blank line once a stream has given an event id.
 */
export interface SdkMajor {
  /** The version, as tests name it. */
  version: string;
  /** The package it is installed as (the current major under its own name, another under an npm alias). */
  packageName: string;
  /** Whether `runs.create` sends `onCompletion` (2.0.0 sends it on `runs.wait` and `runs.stream` only). */
  createSendsOnCompletion: boolean;
  /** A client of this major; typed as the current major's (the calls the tests make exist in both). */
  createClient(config: ClientConfig): Client;
}

const v1: SdkMajor = {
  version: versionOf("@langchain/langgraph-sdk"),
  packageName: "@langchain/langgraph-sdk",
  createSendsOnCompletion: true,
  createClient: (config) => new Client(config),
};

/** The version in an installed package's package.json (both SDKs export it). */
function versionOf(name: string): string {
  const manifest = readFileSync(require.resolve(`${name}/package.json`), "utf8");
  return (JSON.parse(manifest) as { version: string }).version;
}

let v2Module: typeof SdkV2 | undefined;

/**
 * 2.0.0's CommonJS build `require`s p-retry and p-queue, which ship only as ES modules: Node 22 loads them, Jest's
 * module loader (before Node 24.9) does not. The SDK bundles them itself since 1.9.25; here esbuild does the
 * same once per worker, into a file of its own (written aside, then renamed, as two workers may race).
 */
function loadV2(): typeof SdkV2 {
  if (v2Module) return v2Module;
  const target = join(tmpdir(), `memory-table-langgraph-sdk-${v2.version}.cjs`);
  const scratch = `${target}.${process.pid}.tmp`;
  buildSync({
    entryPoints: [require.resolve("@langchain/langgraph-sdk-v2")],
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node22",
    outfile: scratch,
    logLevel: "error",
  });
  renameSync(scratch, target);
  v2Module = createRequire(__filename)(target) as typeof SdkV2;
  return v2Module;
}

const v2: SdkMajor = {
  version: versionOf("@langchain/langgraph-sdk-v2"),
  packageName: "@langchain/langgraph-sdk-v2",
  createSendsOnCompletion: false,
  createClient: (config) =>
    // The 2.0.0 client under the current major's type: tsc checks the calls against 1.15, Jest runs them on 2.0.
    new (loadV2().Client)(config as SdkV2.ClientConfig) as unknown as Client,
};

/** Both majors, the current one first: `describe.each(SDK_MAJORS)` runs a suite once with each. */
export const SDK_MAJORS: readonly SdkMajor[] = [v1, v2];

/** The current major (what `@langchain/langgraph-sdk` resolves to). */
export const CURRENT_SDK: SdkMajor = v1;

/**
 * The cases of a suite run on several backends: each backend with the current major, and the backends in
 * `everyMajorOn` with the other majors too (the majors differ in what they send, not in what a backend keeps).
 */
export function sdkMatrix<Backend extends string>(
  backends: readonly Backend[],
  everyMajorOn: readonly Backend[] = backends,
): Array<{ backend: Backend; sdk: SdkMajor }> {
  return backends.flatMap((backend) =>
    (everyMajorOn.includes(backend) ? SDK_MAJORS : [CURRENT_SDK]).map((sdk) => ({ backend, sdk })),
  );
}
