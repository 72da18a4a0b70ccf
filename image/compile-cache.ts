/**
 * The compiled code of the task root's modules, shipped with the image: V8's code cache as Node's compile cache
 * writes it (`module.enableCompileCache`), made at build time (scripts/compile-cache.ts). With it a cold start
 * deserializes the bundles' compiled code instead of parsing and compiling several megabytes of JavaScript.
 */
import { cpSync, existsSync } from "node:fs";
import nodeModule from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Node's compile-cache API (Node 22; the project's @types/node describes Node 20, the library's floor). */
interface CompileCacheApi {
  enableCompileCache?(directory: string): { status: number };
  getCompileCacheDir?(): string | undefined;
  constants?: { compileCacheStatus?: { ENABLED: number; ALREADY_ENABLED: number } };
}

/** The shipped cache's folder in the task root. */
export const COMPILE_CACHE_DIR = "compile-cache";

/**
 * Turns Node's compile cache on, seeded with the cache shipped in `taskRoot`, before any bundle loads. Node reads
 * the cache from a folder named after its version, its V8 flags and the user id; Lambda runs the image as a user
 * unknown at build time, with only /tmp writable, so the shipped files are copied (about 1 MB, 1 to 2 ms) into
 * the folder Node names here. Node checks each entry against its module's path and source hash and V8's version
 * and flags, and compiles as usual when one does not match: a missing or stale cache only costs its copy.
 */
export function useShippedCompileCache(taskRoot: string): void {
  const shipped = join(taskRoot, COMPILE_CACHE_DIR);
  const api = nodeModule as unknown as CompileCacheApi;
  const statuses = api.constants?.compileCacheStatus;
  if (!existsSync(shipped) || !api.enableCompileCache || !api.getCompileCacheDir || !statuses)
    return;
  try {
    const { status } = api.enableCompileCache(join(tmpdir(), "node-compile-cache"));
    const directory = api.getCompileCacheDir();
    const enabled = status === statuses.ENABLED || status === statuses.ALREADY_ENABLED;
    if (enabled && directory) cpSync(shipped, directory, { recursive: true });
  } catch {
    // An optimisation only: without the cache, Node compiles the modules as it always does.
  }
}
