/**
 * Bench section "memory": the bounded in-memory saver against LangGraph's own MemorySaver, in the same run, on
 * the same workload: put + putWrites + getTuple of a realistic checkpoint, N threads x 20 checkpoints, the steps
 * interleaved across threads. Reports time per operation (CPU and wall clock), the ratio (ours / MemorySaver's
 * time per op) and the memory retained per thread (JS heap plus the ArrayBuffers holding serialized payloads).
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import {
  MemorySaver,
  uuid6,
  type BaseCheckpointSaver,
  type Checkpoint,
  type CheckpointMetadata,
  type PendingWrite,
} from "@langchain/langgraph-checkpoint";
import { BoundedInMemorySaver } from "../src/checkpoint/memory";
import { nextChannelVersion } from "../src/checkpoint/versions";
import { median, writeResults, type BenchContext } from "./context";

const CHECKPOINTS_PER_THREAD = 20;
const MESSAGES_PER_CHECKPOINT = 10;
/**
 * Thread counts, and passes (each a full workload on a fresh saver) per round: sized so a round of either size
 * takes about as long. Rounds alternate sizes and savers, so load from other processes on this shared machine
 * hits all four series alike; the first round only warms up the JIT.
 */
const SIZES = [
  { threads: 10, passesPerRound: 100 },
  { threads: 1_000, passesPerRound: 1 },
];
const ROUNDS = 5;
/** Heap is sampled over at least this many threads (several savers at the small size). */
const HEAP_SAMPLE_THREADS = 1_000;
/**
 * 1,000 threads x 20 realistic checkpoints hold ~70 MB of serialized payload, more than the 64 MiB default
 * budget: raise it so the bench measures the guarded hot path, not a stream of evictions.
 */
const BENCH_CONFIG = { maxTotalBytes: 512 * 1024 * 1024 };

/** Nanoseconds per operation of one pass. */
interface Sample {
  cpu: number;
  wall: number;
}

interface Step {
  config: { configurable: { thread_id: string; checkpoint_ns: string; checkpoint_id?: string } };
  checkpoint: Checkpoint;
  metadata: CheckpointMetadata;
  newVersions: Record<string, string>;
  writes: PendingWrite[];
}

const gc = exposeGc();

export default async function memoryBench(_context: BenchContext): Promise<void> {
  const loadAtStart = loadavg().map((value) => round(value, 2));
  const series = SIZES.map((size) => ({
    ...size,
    workload: buildWorkload(size.threads),
    ours: [] as Sample[],
    theirs: [] as Sample[],
  }));
  for (let round = 0; round <= ROUNDS; round += 1) {
    for (const size of series) {
      for (let pass = 0; pass < size.passesPerRound; pass += 1) {
        const ours = await runWorkload(
          new BoundedInMemorySaver({ config: BENCH_CONFIG }),
          size.workload,
        );
        const theirs = await runWorkload(new MemorySaver(), size.workload);
        if (round === 0) continue;
        size.ours.push(ours);
        size.theirs.push(theirs);
      }
    }
  }

  const results: Record<string, unknown> = {};
  const table: string[] = [];
  for (const { threads, workload, ours, theirs } of series) {
    const oursHeap = await retainedHeapPerThread(
      () => new BoundedInMemorySaver({ config: BENCH_CONFIG }),
      workload,
    );
    const theirsHeap = await retainedHeapPerThread(() => new MemorySaver(), workload);
    const oursNs = median(ours.map((sample) => sample.cpu));
    const theirsNs = median(theirs.map((sample) => sample.cpu));
    const oursWallNs = median(ours.map((sample) => sample.wall));
    const theirsWallNs = median(theirs.map((sample) => sample.wall));
    results[`threads_${threads}`] = {
      threads,
      checkpointsPerThread: CHECKPOINTS_PER_THREAD,
      operationsPerPass: threads * CHECKPOINTS_PER_THREAD * 3,
      passes: ours.length,
      nsPerOp: round(oursNs),
      memorySaverNsPerOp: round(theirsNs),
      opsPerSecond: Math.round(1e9 / oursNs),
      memorySaverOpsPerSecond: Math.round(1e9 / theirsNs),
      ratio: round(oursNs / theirsNs, 3),
      wallNsPerOp: round(oursWallNs),
      memorySaverWallNsPerOp: round(theirsWallNs),
      wallRatio: round(oursWallNs / theirsWallNs, 3),
      heapBytesPerThread: oursHeap?.total ?? null,
      heapBreakdown: oursHeap,
      memorySaverHeapBytesPerThread: theirsHeap?.total ?? null,
      memorySaverHeapBreakdown: theirsHeap,
    };
    table.push(
      `| ${threads} | ${micros(oursNs)} | ${micros(theirsNs)} | ${(oursNs / theirsNs).toFixed(3)} | ${micros(oursWallNs)} | ${micros(theirsWallNs)} | ${oursHeap?.total ?? "n/a"} | ${theirsHeap?.total ?? "n/a"} |`,
    );
  }
  type Row = { nsPerOp: number; memorySaverNsPerOp: number };
  const small = results[`threads_${SIZES[0]!.threads}`] as Row;
  const large = results[`threads_${SIZES[1]!.threads}`] as Row;
  const summary = {
    workload:
      "put + putWrites + getTuple per step; checkpoint with 10 chat messages (~3 KB serialized), 2 channels new per step, 2 pending writes",
    config: BENCH_CONFIG,
    timing:
      "nsPerOp, opsPerSecond and ratio use process CPU time (user + system, GC threads included) per operation, the median over passes; wall-clock figures are kept as wall*, but on a shared, loaded machine they mostly measure waiting for a core",
    loadAverageAtStart: loadAtStart,
    loadAverageAtEnd: loadavg().map((value) => round(value, 2)),
    gcExposed: gc !== undefined,
    ...results,
    largeOverSmallNsPerOp: round(large.nsPerOp / small.nsPerOp, 3),
    memorySaverLargeOverSmallNsPerOp: round(large.memorySaverNsPerOp / small.memorySaverNsPerOp, 3),
  };
  console.log(
    "| threads | ours CPU µs/op | MemorySaver CPU µs/op | ratio | ours wall µs/op | MemorySaver wall µs/op | ours B/thread | MemorySaver B/thread |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const line of table) console.log(line);
  console.log(
    `\nper-op time at ${SIZES[1]!.threads} / at ${SIZES[0]!.threads} threads: ${summary.largeOverSmallNsPerOp}`,
  );
  console.log(`written to ${writeResults("memory", summary)}`);
}

/** Nanoseconds per operation for one full pass of the workload on a fresh saver. */
/** One full pass of the workload on a fresh saver: CPU and wall nanoseconds per operation. */
async function runWorkload(saver: BaseCheckpointSaver, workload: Step[][]): Promise<Sample> {
  const operations = workload.length * CHECKPOINTS_PER_THREAD * 3;
  const cpuStart = process.cpuUsage();
  const wallStart = performance.now();
  await fill(saver, workload);
  const wall = performance.now() - wallStart;
  const cpu = process.cpuUsage(cpuStart);
  return { cpu: ((cpu.user + cpu.system) * 1e3) / operations, wall: (wall * 1e6) / operations };
}

async function fill(saver: BaseCheckpointSaver, workload: Step[][]): Promise<void> {
  for (let step = 0; step < CHECKPOINTS_PER_THREAD; step += 1) {
    for (const thread of workload) {
      const input = thread[step]!;
      const config = await saver.put(
        input.config,
        input.checkpoint,
        input.metadata,
        input.newVersions,
      );
      await saver.putWrites(config, input.writes, `task-${step}`);
      const tuple = await saver.getTuple(config);
      if (tuple === undefined) throw new Error("bench: a stored checkpoint did not come back");
    }
  }
}

/**
 * Bytes retained per thread: JS heap plus ArrayBuffer backing stores (serialized payloads live outside the JS heap).
 * Small sizes fill several savers so the total is large enough to stand out from heap noise.
 */
async function retainedHeapPerThread(
  create: () => BaseCheckpointSaver,
  workload: Step[][],
): Promise<{ total: number; jsHeap: number; arrayBuffers: number } | null> {
  if (gc === undefined) return null;
  const instances = Math.max(1, Math.ceil(HEAP_SAMPLE_THREADS / workload.length));
  const threads = instances * workload.length;
  await settle(gc);
  const before = process.memoryUsage();
  const savers: BaseCheckpointSaver[] = [];
  for (let instance = 0; instance < instances; instance += 1) {
    const saver = create();
    await fill(saver, workload);
    savers.push(saver);
  }
  await settle(gc);
  const after = process.memoryUsage();
  // Keep the savers reachable until after the measurement.
  if (savers.length !== instances) throw new Error("unreachable");
  const jsHeap = Math.round((after.heapUsed - before.heapUsed) / threads);
  const arrayBuffers = Math.round((after.arrayBuffers - before.arrayBuffers) / threads);
  return { total: jsHeap + arrayBuffers, jsHeap, arrayBuffers };
}

/** Inputs built up front, so neither saver is charged for them. */
function buildWorkload(threads: number): Step[][] {
  const workload: Step[][] = [];
  for (let thread = 0; thread < threads; thread += 1) {
    const threadId = `bench-thread-${thread}`;
    const steps: Step[] = [];
    let versions: Record<string, string> = {};
    let parentId: string | undefined;
    for (let step = 0; step < CHECKPOINTS_PER_THREAD; step += 1) {
      const id = uuid6(-1);
      const changed =
        step === 0 ? ["messages", "step", "summary", "booking"] : ["messages", "step"];
      const newVersions: Record<string, string> = {};
      for (const channel of changed) newVersions[channel] = nextChannelVersion(versions[channel]);
      versions = { ...versions, ...newVersions };
      steps.push({
        config: {
          configurable: {
            thread_id: threadId,
            checkpoint_ns: "",
            ...(parentId === undefined ? {} : { checkpoint_id: parentId }),
          },
        },
        checkpoint: {
          v: 4,
          id,
          ts: new Date(Date.UTC(2026, 0, 1, 0, 0, step)).toISOString(),
          channel_values: {
            messages: messages(thread, step),
            step,
            summary: `Customer ${thread} asked to move the appointment; agent proposed a new slot.`,
            booking: { slot: "2026-09-10T14:00", approved: null, booked: null },
          },
          channel_versions: versions,
          versions_seen: {
            __input__: {},
            __start__: { __start__: versions.messages! },
            agent: { messages: versions.messages!, step: versions.step! },
            tools: { messages: versions.messages! },
          },
        },
        metadata: { source: "loop", step, parents: {} },
        newVersions,
        writes: [
          ["messages", [message(thread, step, MESSAGES_PER_CHECKPOINT)]],
          ["step", step + 1],
        ],
      });
      parentId = id;
    }
    workload.push(steps);
  }
  return workload;
}

function messages(thread: number, step: number): unknown[] {
  return Array.from({ length: MESSAGES_PER_CHECKPOINT }, (_, index) =>
    message(thread, step, index),
  );
}

function message(thread: number, step: number, index: number): Record<string, unknown> {
  return {
    id: `msg-${thread}-${step}-${index}`,
    role: index % 2 === 0 ? "user" : "assistant",
    content: `Step ${step}, message ${index}: I would like to move my booking to next Thursday afternoon if a slot is free, otherwise Friday morning works as well.`,
    additional_kwargs: {},
  };
}

/** Full collections with pauses between, so freed ArrayBuffer backing stores are actually released. */
async function settle(collect: () => void): Promise<void> {
  for (let round = 0; round < 3; round += 1) {
    collect();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** `global.gc` without changing the npm script: V8 lets a running process expose it. */
function exposeGc(): (() => void) | undefined {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing) return existing;
  try {
    setFlagsFromString("--expose-gc");
    return runInNewContext("gc") as () => void;
  } catch {
    return undefined;
  }
}

function micros(nanoseconds: number): string {
  return (nanoseconds / 1000).toFixed(2);
}

function round(value: number, digits = 1): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
