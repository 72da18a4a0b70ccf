/**
 * Where a V8 CPU profile (`node --cpu-prof`) spent its time: self time by package (a node_modules package, a
 * folder of this repository, Node's internals, or V8's own entries such as the garbage collector) and by function.
 */
import { existsSync, readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileShare {
  name: string;
  selfMs: number;
  /** Share of the busy time (everything but `(idle)`), in percent. */
  percent: number;
}

export interface ProfileSummary {
  totalMs: number;
  busyMs: number;
  byPackage: ProfileShare[];
  byFunction: ProfileShare[];
}

export function summarizeCpuProfile(file: string, repositoryRoot: string): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const sources = new SourceMaps();
  const nodes = new Map(
    profile.nodes.map((node) => [
      node.id,
      { ...node, callFrame: sources.original(node.callFrame) },
    ]),
  );
  const selfUs = new Map<number, number>();
  // Each sample's time is the delta to the next sample.
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index + 1] ?? 0;
    selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
  });
  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let totalUs = 0;
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const frame = nodes.get(id)!.callFrame;
    totalUs += us;
    if (frame.functionName === "(idle)") {
      idleUs += us;
      continue;
    }
    const where = origin(frame.url, repositoryRoot);
    byPackage.set(where, (byPackage.get(where) ?? 0) + us);
    const name = `${frame.functionName || "(anonymous)"} ${shortLocation(frame, repositoryRoot)}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
  }
  const busyUs = totalUs - idleUs;
  const shares = (map: Map<string, number>): ProfileShare[] =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([name, us]) => ({
        name,
        selfMs: Math.round(us / 100) / 10,
        percent: Math.round((us / busyUs) * 1000) / 10,
      }));
  return {
    totalMs: Math.round(totalUs / 1000),
    busyMs: Math.round(busyUs / 1000),
    byPackage: shares(byPackage),
    byFunction: shares(byFunction),
  };
}

/** `node_modules/<package>`, the repository folder, `node:internal`, or V8's own entry (`(garbage collector)`). */
function origin(url: string, repositoryRoot: string): string {
  if (url === "") return "(V8: program, GC, native)";
  if (url.startsWith("node:")) return "node:internal";
  const path = url.startsWith("file://") ? fileURLToPath(url) : url;
  const packageMatch = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (packageMatch) return packageMatch[1]!;
  const inRepository = relative(repositoryRoot, path);
  if (!inRepository.startsWith("..")) return inRepository.split("/").slice(0, 2).join("/");
  return path;
}

/**
 * Frames of a bundle with a source map (the compiled dev server) are reported at their TypeScript source, so
 * the profile says which module of this repository spent the time.
 */
class SourceMaps {
  private readonly maps = new Map<string, SourceMap | undefined>();

  original(frame: CallFrame): CallFrame {
    if (!frame.url) return frame;
    const path = frame.url.startsWith("file://") ? fileURLToPath(frame.url) : frame.url;
    if (!this.maps.has(path)) {
      const mapFile = `${path}.map`;
      this.maps.set(
        path,
        existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, "utf8"))) : undefined,
      );
    }
    const map = this.maps.get(path);
    if (!map) return frame;
    const entry = map.findEntry(frame.lineNumber, frame.columnNumber) as {
      originalSource?: string;
      originalLine?: number;
    };
    if (!entry.originalSource) return frame;
    const source = entry.originalSource.startsWith("file://")
      ? fileURLToPath(entry.originalSource)
      : resolve(dirname(path), entry.originalSource);
    return { ...frame, url: source, lineNumber: entry.originalLine ?? frame.lineNumber };
  }
}

function shortLocation(frame: CallFrame, repositoryRoot: string): string {
  if (frame.url === "") return "";
  const path = frame.url.startsWith("file://") ? fileURLToPath(frame.url) : frame.url;
  const shown = path.includes("node_modules/")
    ? path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length)
    : relative(repositoryRoot, path);
  return `${shown}:${frame.lineNumber + 1}`;
}
