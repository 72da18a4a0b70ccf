import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import {
  extractSourceSchemas,
  type GraphSource,
  type SourceSchemasResult,
} from "./graph-source-schemas";

/**
 * The dev server's source schemas, read once and kept in a file (`.dev/graph-schemas.json`) for as long as no file
 * the compiler read changes: reading them costs seconds of compiler time (the compiler parses every declaration
 * file the graphs import), checking the cache a stat per file.
 */

/** Bumped whenever what the reading writes changes, so an older cache is read anew. */
const CACHE_FORMAT = 2;

interface CacheFile {
  format: number;
  sources: GraphSource[];
  /** Each input file with its modification time and size when the schemas were read. */
  inputs: Array<[file: string, mtimeMs: number, size: number]>;
  result: Omit<SourceSchemasResult, "inputs">;
}

export interface CachedSourceSchemas extends Omit<SourceSchemasResult, "inputs"> {
  /** Whether the cache answered (nothing was compiled). */
  cached: boolean;
  /** Time taken, cache check included. */
  ms: number;
}

/**
 * The schemas of `sources`, from `cacheFile` when it was written for the same sources and none of its inputs has
 * changed since, else read from the TypeScript and written there. A cache that cannot be read or written is only
 * a slower start.
 */
export function readSourceSchemasCached(
  sources: readonly GraphSource[],
  cacheFile: string,
): CachedSourceSchemas {
  const started = performance.now();
  const wanted = sources.map((source) => ({ ...source, file: resolve(source.file) }));
  const cache = readCache(cacheFile);
  if (cache && sameSources(cache.sources, wanted) && cache.inputs.every(unchanged)) {
    return { ...cache.result, cached: true, ms: performance.now() - started };
  }
  const { inputs, ...result } = extractSourceSchemas(wanted);
  writeCache(cacheFile, {
    format: CACHE_FORMAT,
    sources: wanted,
    inputs: inputs.flatMap((file) => {
      const stat = statOf(file);
      return stat ? [[file, stat.mtimeMs, stat.size] as [string, number, number]] : [];
    }),
    result,
  });
  return { ...result, cached: false, ms: performance.now() - started };
}

function readCache(cacheFile: string): CacheFile | undefined {
  try {
    const cache = JSON.parse(readFileSync(cacheFile, "utf8")) as CacheFile;
    return cache.format === CACHE_FORMAT && Array.isArray(cache.inputs) && cache.inputs.length > 0
      ? cache
      : undefined;
  } catch {
    return undefined;
  }
}

function writeCache(cacheFile: string, cache: CacheFile): void {
  try {
    mkdirSync(dirname(cacheFile), { recursive: true });
    // Written whole then renamed: two servers starting together never read half a file.
    const partial = `${cacheFile}.${process.pid}.tmp`;
    writeFileSync(partial, JSON.stringify(cache));
    renameSync(partial, cacheFile);
  } catch {
    // No cache: the next start reads the schemas again.
  }
}

function sameSources(cached: readonly GraphSource[], wanted: readonly GraphSource[]): boolean {
  return (
    cached.length === wanted.length &&
    cached.every(
      (source, index) =>
        source.id === wanted[index]!.id &&
        source.file === wanted[index]!.file &&
        source.exportName === wanted[index]!.exportName,
    )
  );
}

function unchanged([file, mtimeMs, size]: [string, number, number]): boolean {
  const stat = statOf(file);
  return stat !== undefined && stat.mtimeMs === mtimeMs && stat.size === size;
}

function statOf(file: string): { mtimeMs: number; size: number } | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}
