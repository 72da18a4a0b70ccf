import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { buildImage, type ImageBuild } from "../../scripts/build-image";

/**
 * A task root like the image's /var/task: `npm run build:image`'s tree copied out of the repository, so nothing
 * can resolve from the repository's node_modules (the bundle has to be complete), plus what an app team adds.
 */
export interface TaskRoot {
  dir: string;
  build: ImageBuild;
  remove(): void;
}

export async function prepareTaskRoot(outDir?: string): Promise<TaskRoot> {
  const imageBuild = await buildImage(outDir);
  const dir = mkdtempSync(join(tmpdir(), "memory-table-task-root-"));
  cpSync(imageBuild.outDir, dir, { recursive: true });
  return { dir, build: imageBuild, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Bundles an app team's graph module into `<taskRoot>/<relativePath>` the way the README tells them to
 * (one self-contained ESM file; the image has no node_modules to resolve from).
 */
export async function bundleGraphModule(
  source: string,
  taskRoot: string,
  relativePath: string,
): Promise<void> {
  await build({
    entryPoints: [source],
    outfile: join(taskRoot, relativePath),
    bundle: true,
    platform: "node",
    target: "node22",
    format: "esm",
    banner: {
      js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
    },
    logLevel: "warning",
  });
}

/** Writes a small hand-written module (broken or wrongly shaped graphs) into the task root. */
export function writeModule(taskRoot: string, relativePath: string, text: string): void {
  const path = join(taskRoot, relativePath);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}
