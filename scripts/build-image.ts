/**
 * `npm run build:image`: writes `dist/image/`, exactly the tree the Dockerfile copies to the function's task root.
 * The Dockerfile runs this script and copies its output, nothing else, so testing this tree tests the image.
 *
 *   index.mjs, cleaner.mjs,  the handlers (CMD `index.handler`, `cleaner.handler`, `worker.handler`,
 *   worker.mjs, stream.mjs   `stream.handler`): one small entry module each, from `image/<file>.ts`
 *   chunks/                  the code they share, split by esbuild: each entry loads the chunks it imports (a
 *                            cold start parses only its own entry's code), the image holds each module once
 *   bootstrap.mjs            the ENTRYPOINT: hands CMD to the runtime interface client, then starts it
 *   ric/                     aws-lambda-ric: its single-file client and its native Runtime API addon
 *   graph-schemas.json       the bundled example's JSON schemas, read from its TypeScript (no compiler in Lambda)
 *   *.LEGAL.txt, ric/LICENSE licenses of everything bundled
 *
 * A new entry (say `authorizer.handler`): add it to IMAGE_HANDLERS (src/runtime/environment.ts) and write
 * `image/authorizer.ts` exporting `handler`; the build, the Dockerfile test and the image bench pick it up.
 *
 *   compile-cache/           with --compile-cache: V8's compiled code of the entries and their chunks, for
 *                            this tree's own path (scripts/compile-cache.ts; the Dockerfile builds at /var/task)
 *
 * Usage: tsx scripts/build-image.ts [--out <dir>] [--compile-cache]
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { build, type BuildOptions, type Metafile } from "esbuild";
import { IMAGE_HANDLERS } from "../src/runtime/environment";
import { exampleGraphSources } from "../src/dev/graph-schemas-at-start";
import { extractSourceSchemas } from "../src/dev/graph-source-schemas";
import { GRAPH_SCHEMAS_FILE } from "../image/graph-schemas-file";
import { writeCompileCache } from "./compile-cache";

export const REPO_ROOT = resolve(__dirname, "..");
export const DEFAULT_OUT_DIR = join(REPO_ROOT, "dist", "image");
/** Where the runtime interface client lives inside the task root. */
export const RIC_DIR = "ric";
export const BOOTSTRAP_FILE = "bootstrap.mjs";

const RIC_PACKAGE = join(REPO_ROOT, "node_modules", "aws-lambda-ric");
const RIC_FILES = ["index.mjs", "rapid-client.node", "LICENSE", "NOTICE", "THIRD-PARTY-LICENSES"];

/** The handler modules: `<file>.<export>` of IMAGE_HANDLERS, built from `image/<file>.ts`. */
export function handlerEntries(): Array<{ file: string; source: string }> {
  return Object.values(IMAGE_HANDLERS).map((handler) => {
    const file = handler.split(".")[0]!;
    return { file, source: join(REPO_ROOT, "image", `${file}.ts`) };
  });
}

// Bundled ESM needs `require` for the CommonJS dependencies (pino, the AWS SDK) that call it internally.
const ESM_REQUIRE_BANNER = [
  'import { createRequire as __createRequire } from "node:module";',
  "const require = __createRequire(import.meta.url);",
].join("\n");

/** The esbuild options of every module of the task root. */
export const IMAGE_BUNDLE_OPTIONS: BuildOptions = {
  bundle: true,
  platform: "node",
  target: "node22",
  format: "esm",
  outExtension: { ".js": ".mjs" },
  // Whitespace and syntax only: identifiers keep their names, so error classes keep `name` in logs.
  minifyWhitespace: true,
  minifySyntax: true,
  keepNames: true,
  legalComments: "external",
  banner: { js: ESM_REQUIRE_BANNER },
  logLevel: "warning",
  // The metafile's paths are relative to this: read back with resolve(REPO_ROOT, path).
  absWorkingDir: REPO_ROOT,
};

/**
 * The handlers' layout: the entries built together with code splitting, so that what two entries import lives
 * once in `chunks/` (the API, worker and stream entries share almost all of their 3.7 MB) instead of in a copy per
 * entry, and a dynamic `import()` (the Secrets Manager and SSM clients, read only with ENVIRONMENT_ARNS) becomes a
 * chunk loaded when called instead of code parsed at every cold start.
 */
const HANDLER_LAYOUT: BuildOptions = { splitting: true, chunkNames: "chunks/[name]-[hash]" };

export interface ImageBuild {
  outDir: string;
  /** Files of the tree, relative to outDir, sorted. */
  files: string[];
  /**
   * Bytes each handler's cold start loads and parses (`index.mjs` -> its entry module plus every chunk it imports
   * statically, transitively; chunks behind a dynamic `import()` are not counted).
   */
  handlerBytes: Record<string, number>;
  /** The files each handler's cold start loads (`index.mjs` -> `["chunks/chunk-….mjs", "index.mjs"]`). */
  loads: Record<string, string[]>;
  /** Names each output module exports (`index.mjs` -> `["handler"]`). */
  exports: Record<string, string[]>;
  /** Every file of this repository the build read (outside node_modules), relative to the repository root. */
  inputs: string[];
}

export async function buildImage(outDir = DEFAULT_OUT_DIR): Promise<ImageBuild> {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(join(outDir, RIC_DIR), { recursive: true });

  const entries = handlerEntries();
  const handlers = await build({
    ...IMAGE_BUNDLE_OPTIONS,
    ...HANDLER_LAYOUT,
    entryPoints: Object.fromEntries(entries.map((entry) => [entry.file, entry.source])),
    outdir: outDir,
    metafile: true,
  });
  const bootstrap = await build({
    ...IMAGE_BUNDLE_OPTIONS,
    entryPoints: {
      [BOOTSTRAP_FILE.replace(/\.mjs$/, "")]: join(REPO_ROOT, "image", "bootstrap.ts"),
    },
    outdir: outDir,
    banner: {},
    metafile: true,
  });
  for (const file of RIC_FILES) copyFileSync(join(RIC_PACKAGE, file), join(outDir, RIC_DIR, file));
  assertNativeAddonLoads(join(outDir, RIC_DIR, "rapid-client.node"));
  writeExampleGraphSchemas(outDir);

  const outputs = { ...handlers.metafile.outputs, ...bootstrap.metafile.outputs };
  const exportsByFile = Object.fromEntries(
    Object.entries(outputs)
      .filter(([file]) => file.endsWith(".mjs"))
      .map(([file, output]) => [relative(outDir, resolve(REPO_ROOT, file)), output.exports]),
  );
  const inputs = [
    ...new Set(
      [...Object.keys(handlers.metafile.inputs), ...Object.keys(bootstrap.metafile.inputs)].filter(
        (file) => !file.includes("node_modules/"),
      ),
    ),
  ].sort();
  const loads = loadedFiles(
    handlers.metafile,
    outDir,
    entries.map((entry) => entry.source),
  );
  const handlerBytes = loadedBytes(outDir, loads);
  return { outDir, files: listFiles(outDir), handlerBytes, loads, exports: exportsByFile, inputs };
}

/**
 * The files each module of `outDir` built from one of `sources` loads: itself and the chunks it imports
 * statically, transitively (not those behind a dynamic `import()`), by file name relative to `outDir`.
 */
export function loadedFiles(
  metafile: Metafile,
  outDir: string,
  sources: string[],
): Record<string, string[]> {
  const entrySources = new Set(sources.map((source) => resolve(source)));
  const outputs = metafile.outputs;
  const loaded = (file: string, seen: Set<string>): Set<string> => {
    if (seen.has(file) || !outputs[file]) return seen;
    seen.add(file);
    for (const imported of outputs[file].imports) {
      if (imported.kind === "import-statement" && !imported.external) loaded(imported.path, seen);
    }
    return seen;
  };
  const inOutDir = (file: string) => relative(outDir, resolve(REPO_ROOT, file));
  return Object.fromEntries(
    Object.entries(outputs)
      .filter(
        ([, output]) =>
          output.entryPoint !== undefined &&
          entrySources.has(resolve(REPO_ROOT, output.entryPoint)),
      )
      .map(([file]) => [inOutDir(file), [...loaded(file, new Set())].map(inOutDir).sort()]),
  );
}

/** Bytes of the files each entry loads (see loadedFiles). */
export function loadedBytes(
  outDir: string,
  loads: Record<string, string[]>,
): Record<string, number> {
  return Object.fromEntries(
    Object.entries(loads).map(([entry, files]) => [
      entry,
      files.reduce((total, file) => total + statSync(join(outDir, file)).size, 0),
    ]),
  );
}

/** The example's schemas, read from its TypeScript here: the image cannot (src/dev/graph-source-schemas.ts). */
function writeExampleGraphSchemas(outDir: string): void {
  const read = extractSourceSchemas(exampleGraphSources(REPO_ROOT));
  if (read.problems.length > 0) {
    throw new Error(`Reading the example's graph schemas failed: ${JSON.stringify(read.problems)}`);
  }
  writeFileSync(join(outDir, GRAPH_SCHEMAS_FILE), JSON.stringify(read.schemas));
}

/**
 * The addon is a Node-API module (ABI-stable across Node majors), so one build serves Node 22 and 24. Loading it
 * here, under the Node that runs the build (the image's own Node in the Dockerfile), catches a wrong-arch or
 * missing build before the image ships. It reads AWS_LAMBDA_RUNTIME_API when loaded, and connects only on use.
 */
export function assertNativeAddonLoads(addon: string, node = process.execPath): void {
  const result = spawnSync(
    node,
    ["-e", `require(${JSON.stringify(addon)}); console.log(process.versions.napi)`],
    { env: { ...process.env, AWS_LAMBDA_RUNTIME_API: "127.0.0.1:9" }, encoding: "utf8" },
  );
  if (result.status !== 0) {
    throw new Error(
      `The runtime interface client's native addon does not load under ${node}: ${result.stderr}` +
        " (was aws-lambda-ric's install script approved and run? `npm rebuild aws-lambda-ric`)",
    );
  }
}

function listFiles(root: string, directory = root): string[] {
  return readdirSync(directory, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(directory, entry.name);
      return entry.isDirectory() ? listFiles(root, path) : [relative(root, path)];
    })
    .sort();
}

async function main(): Promise<void> {
  const outIndex = process.argv.indexOf("--out");
  const outDir = outIndex === -1 ? DEFAULT_OUT_DIR : resolve(process.argv[outIndex + 1] ?? "");
  const result = await buildImage(outDir);
  if (process.argv.includes("--compile-cache")) {
    const cache = writeCompileCache(outDir);
    for (const failure of cache.failed)
      console.warn(`warm-up init failed (cache kept): ${failure}`);
    result.files.push(...listFiles(outDir).filter((file) => !result.files.includes(file)));
  }
  for (const file of result.files) {
    console.log(`${statSync(join(outDir, file)).size.toString().padStart(10)}  ${file}`);
  }
  for (const [file, bytes] of Object.entries(result.handlerBytes)) {
    console.log(`${bytes.toString().padStart(10)}  loaded by a cold start of ${file}`);
  }
  console.log(`task root tree written to ${relative(process.cwd(), outDir) || "."}`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
