/**
 * Section "stream": `POST /threads/{id}/runs/stream` as a developer runs it locally, Memory Table's dev server next
 * to the reference LangGraph server (`langgraph dev` of @langchain/langgraph-cli, in memory), both serving the same
 * graph (bench/fixtures/stream-graph.ts: five small nodes, then a fake chat model streaming a 66-character reply
 * token by token) in the same bench run, both called through the official @langchain/langgraph-sdk Client.
 *
 * Per stream (a new thread each, created beforehand): time to first event (the leading `metadata` event), time to
 * the first data event, total time to the stream's end, the per-event time at the client: (last event - first
 * event) / (events - 1), and how long the stream stays open after its last event. Medians and p95 over the
 * streams, for `stream_mode` [values, updates] and messages; rounds alternate which server goes first. Per-event
 * overhead on the server: the CPU of its process tree (from /proc) over a mode's streams, per event. Ratios are
 * Memory Table / reference.
 *
 * The reference server is installed at bench time outside the repository (MEMORY_TABLE_BENCH_PEER_DIR, default
 * ~/.cache/memory-table/bench-peer) with `npm install --prefix`, pinned below, with the LangGraph and LangChain
 * versions Memory Table uses. When it cannot be installed or started, a `SKIP peer:` line says why and Memory
 * Table's numbers are still reported.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { homedir, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Client, type StreamMode } from "@langchain/langgraph-sdk";
import { build } from "esbuild";
import { median, writeResults } from "./context";
import { STREAM_REPLY } from "./fixtures/stream-graph";

const REPO = join(__dirname, "..");
const WARM_UP = 5;
/** Streams per server and mode (MEMORY_TABLE_BENCH_STREAMS for a quick look). */
const ROUNDS = Number(process.env.MEMORY_TABLE_BENCH_STREAMS ?? 40);
const STARTUP_TIMEOUT_MS = 180_000;
const STREAM_TIMEOUT_MS = 60_000;
const INSTALL_TIMEOUT_MS = 300_000;
const ASSISTANT = "stream";
const INPUT = { messages: [{ role: "human", content: "Please move my appointment." }] };
const MODES: Array<{ name: string; streamMode: StreamMode[] }> = [
  { name: "values+updates", streamMode: ["values", "updates"] },
  { name: "messages", streamMode: ["messages"] },
];
/** The reference server and the packages beside it: the versions Memory Table itself runs. */
const PEER_PACKAGES: Record<string, string> = {
  "@langchain/langgraph-api": "1.5.1",
  "@langchain/langgraph-cli": "1.5.1",
  "@langchain/core": "1.4.0",
  "@langchain/langgraph": "1.7.3",
  "@langchain/langgraph-checkpoint": "1.2.2",
  "@langchain/langgraph-sdk": "1.15.0",
  typescript: "5.9.3",
};
/** Memory Table / reference, medians: at most this. */
const TARGETS = { ttfeRatio: 1, perEventRatio: 1, totalRatio: 1, serverCpuPerEventRatio: 1 };

interface Server {
  name: "memory-table" | "reference";
  client: Client;
  process: ChildProcess;
  readyMs: number;
  command: string;
  stop(): Promise<void>;
}

interface StreamSample {
  ttfeMs: number;
  firstDataMs: number;
  totalMs: number;
  perEventMs: number;
  tailMs: number;
  events: number;
  eventNames: Record<string, number>;
}

export default async function streamBench(): Promise<void> {
  const started = loadavg()[0]!;
  const memoryTable = await startMemoryTable();
  let reference: Server | undefined;
  let skipped: string | undefined;
  try {
    try {
      reference = await startReference();
    } catch (error) {
      skipped = (error as Error).message.split("\n")[0]!;
      console.log(`SKIP peer: ${skipped}`);
    }
    const servers = reference ? [memoryTable, reference] : [memoryTable];
    const byMode: Record<string, Record<string, ModeSummary>> = {};
    for (const mode of MODES) {
      const samples = new Map<string, StreamSample[]>(servers.map((server) => [server.name, []]));
      for (const server of servers) {
        for (let index = 0; index < WARM_UP; index += 1) await streamOnce(server, mode.streamMode);
      }
      const cpuBefore = servers.map((server) => treeCpuMs(server.process.pid));
      for (let round = 0; round < ROUNDS; round += 1) {
        const order = round % 2 === 0 ? servers : [...servers].reverse();
        for (const server of order) {
          samples.get(server.name)!.push(await streamOnce(server, mode.streamMode));
        }
      }
      byMode[mode.name] = Object.fromEntries(
        servers.map((server, index) => {
          const summary = summarize(samples.get(server.name)!);
          const after = treeCpuMs(server.process.pid);
          const before = cpuBefore[index];
          const cpuMs = after === undefined || before === undefined ? undefined : after - before;
          return [
            server.name,
            {
              ...summary,
              serverCpuMsPerStream: cpuMs === undefined ? undefined : round(cpuMs / ROUNDS),
              serverCpuMsPerEvent:
                cpuMs === undefined ? undefined : round(cpuMs / ROUNDS / summary.events, 3),
            },
          ];
        }),
      );
    }
    const ratios = reference
      ? Object.fromEntries(
          MODES.map((mode) => {
            const ours = byMode[mode.name]!["memory-table"]!;
            const theirs = byMode[mode.name]!.reference!;
            return [
              mode.name,
              {
                ttfeRatio: round(ours.ttfeMs.median / theirs.ttfeMs.median),
                firstDataRatio: round(ours.firstDataMs.median / theirs.firstDataMs.median),
                perEventRatio: round(ours.perEventMs.median / theirs.perEventMs.median),
                totalRatio: round(ours.totalMs.median / theirs.totalMs.median),
                serverCpuPerEventRatio:
                  ours.serverCpuMsPerEvent === undefined || theirs.serverCpuMsPerEvent === undefined
                    ? undefined
                    : round(ours.serverCpuMsPerEvent / theirs.serverCpuMsPerEvent),
              },
            ];
          }),
        )
      : undefined;

    const rows: Record<string, Record<string, string | number>> = {};
    for (const mode of MODES) {
      for (const server of servers) {
        const summary = byMode[mode.name]![server.name]!;
        rows[`${mode.name} ${server.name}`] = {
          events: summary.events,
          "TTFE ms": summary.ttfeMs.median,
          "TTFE p95": summary.ttfeMs.p95,
          "ms/event": summary.perEventMs.median,
          "ms/event p95": summary.perEventMs.p95,
          "total ms": summary.totalMs.median,
          "total p95": summary.totalMs.p95,
          "end after last ms": summary.tailMs.median,
          "server CPU ms/event": summary.serverCpuMsPerEvent ?? "n/a",
        };
      }
      if (ratios) {
        const ratio = ratios[mode.name]!;
        rows[`${mode.name} ratio`] = {
          events: "",
          "TTFE ms": ratio.ttfeRatio,
          "TTFE p95": "",
          "ms/event": ratio.perEventRatio,
          "ms/event p95": "",
          "total ms": ratio.totalRatio,
          "total p95": "",
          "end after last ms": "",
          "server CPU ms/event": ratio.serverCpuPerEventRatio ?? "",
        };
      }
    }
    console.table(rows);
    for (const mode of MODES) {
      const counts = servers.map((server) => byMode[mode.name]![server.name]!.eventNames);
      if (counts.length === 2 && JSON.stringify(counts[0]) !== JSON.stringify(counts[1])) {
        console.log(
          `note: ${mode.name}: the servers sent different events: memory-table ${JSON.stringify(
            counts[0],
          )}, reference ${JSON.stringify(counts[1])}`,
        );
      }
    }
    const results = {
      graph:
        "bench/fixtures/stream-graph.ts: step_1..step_5, then agent (FakeListChatModel, one token per character)",
      replyCharacters: STREAM_REPLY.length,
      streams: ROUNDS,
      warmUp: WARM_UP,
      servers: Object.fromEntries(
        servers.map((server) => [
          server.name,
          { command: server.command, readyMs: round(server.readyMs) },
        ]),
      ),
      ...(skipped ? { peerSkipped: skipped } : {}),
      ratios,
      modes: byMode,
      targets: TARGETS,
      machine: {
        node: process.version,
        loadAverage1m: { start: round(started), end: round(loadavg()[0]!) },
      },
      definitions: {
        ttfeMs: "request sent (client.runs.stream called) to the first event (metadata)",
        firstDataMs: "request sent to the first event that is not metadata",
        perEventMs: "(last event - first event) / (events - 1), per stream",
        totalMs: "request sent to the end of the stream",
        tailMs: "last event to the end of the stream (the connection closed)",
        serverCpuMsPerEvent:
          "user+system CPU of the server's process tree (from /proc) over a mode's measured streams (each with its threads.create), per stream, divided by the stream's events",
        ratio: "Memory Table's median / the reference's median (below 1: Memory Table is faster)",
      },
    };
    if (ratios) {
      const verdicts = MODES.map((mode) => {
        const ratio = ratios[mode.name]!;
        const met = (value: number, target: number) => (value <= target ? "met" : "NOT MET");
        return `${mode.name}: TTFE <= ${TARGETS.ttfeRatio}x reference ${met(ratio.ttfeRatio, TARGETS.ttfeRatio)}, per event <= ${TARGETS.perEventRatio}x ${met(ratio.perEventRatio, TARGETS.perEventRatio)}, total <= ${TARGETS.totalRatio}x ${met(ratio.totalRatio, TARGETS.totalRatio)}, server CPU per event <= ${TARGETS.serverCpuPerEventRatio}x ${
          ratio.serverCpuPerEventRatio === undefined
            ? "not measured"
            : met(ratio.serverCpuPerEventRatio, TARGETS.serverCpuPerEventRatio)
        }`;
      });
      console.log(`targets: ${verdicts.join("; ")}`);
    }
    console.log(`wrote ${writeResults("stream", results)}`);
  } finally {
    await memoryTable.stop();
    await reference?.stop();
  }
}

/** One streamed run on a new thread, timed at the client as each event arrives. */
async function streamOnce(server: Server, streamMode: StreamMode[]): Promise<StreamSample> {
  const thread = await server.client.threads.create();
  const eventNames: Record<string, number> = {};
  const times: number[] = [];
  let firstData: number | undefined;
  const signal = AbortSignal.timeout(STREAM_TIMEOUT_MS);
  const started = performance.now();
  for await (const part of server.client.runs.stream(thread.thread_id, ASSISTANT, {
    input: INPUT,
    streamMode,
    signal,
  })) {
    const now = performance.now();
    times.push(now);
    if (part.event !== "metadata" && firstData === undefined) firstData = now;
    eventNames[part.event] = (eventNames[part.event] ?? 0) + 1;
    if (part.event === "error") {
      throw new Error(`${server.name}: error event ${JSON.stringify(part.data)}`);
    }
  }
  const ended = performance.now();
  if (times.length < 3 || firstData === undefined) {
    throw new Error(
      `${server.name}: expected a stream of events, got ${JSON.stringify(eventNames)}`,
    );
  }
  return {
    ttfeMs: times[0]! - started,
    firstDataMs: firstData - started,
    totalMs: ended - started,
    perEventMs: (times.at(-1)! - times[0]!) / (times.length - 1),
    tailMs: ended - times.at(-1)!,
    events: times.length,
    eventNames,
  };
}

type ModeSummary = ReturnType<typeof summarize> & {
  serverCpuMsPerStream: number | undefined;
  serverCpuMsPerEvent: number | undefined;
};

function summarize(samples: StreamSample[]) {
  const stat = (key: "ttfeMs" | "firstDataMs" | "totalMs" | "perEventMs" | "tailMs") => {
    const values = samples.map((sample) => sample[key]);
    return { median: round(median(values)), p95: round(percentile(values, 0.95)) };
  };
  return {
    streams: samples.length,
    events: median(samples.map((sample) => sample.events)),
    eventNames: sortKeys(samples[0]!.eventNames),
    ttfeMs: stat("ttfeMs"),
    firstDataMs: stat("firstDataMs"),
    perEventMs: stat("perEventMs"),
    totalMs: stat("totalMs"),
    tailMs: stat("tailMs"),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Memory Table's dev server

async function startMemoryTable(): Promise<Server> {
  const directory = mkdtempSync(join(tmpdir(), "memory-table-bench-stream-"));
  const bundle = join(directory, "stream-server.js");
  // Bundled as `npm run build:dev` bundles the dev server: packages stay in node_modules, found via NODE_PATH.
  await build({
    entryPoints: [join(__dirname, "fixtures", "stream-server.ts")],
    bundle: true,
    platform: "node",
    target: "node22",
    packages: "external",
    outfile: bundle,
    logLevel: "warning",
  });
  const env: NodeJS.ProcessEnv = { ...cleanEnv(), NODE_PATH: join(REPO, "node_modules") };
  const args = ["--optimize-for-size", bundle, join(directory, "keys")];
  const started = performance.now();
  const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  const output = captureOutput(child);
  const line = await waitFor(
    () => /^\{"url".*\}$/m.exec(output())?.[0],
    STARTUP_TIMEOUT_MS,
    child,
    () => `Memory Table's dev server did not start:\n${output()}`,
  );
  const { url, token } = JSON.parse(line) as { url: string; token: string };
  return {
    name: "memory-table",
    client: new Client({
      apiUrl: url,
      apiKey: null,
      defaultHeaders: { Authorization: `Bearer ${token}` },
      callerOptions: { maxRetries: 0 },
    }),
    process: child,
    readyMs: performance.now() - started,
    command: `node --optimize-for-size <bundle of bench/fixtures/stream-server.ts> (startDevServer over createHandler, in-memory saver, as npm start)`,
    stop: async () => {
      await stopProcess(child, false);
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The reference server

function peerDirectory(): string {
  return (
    process.env.MEMORY_TABLE_BENCH_PEER_DIR ??
    join(homedir(), ".cache", "memory-table", "bench-peer")
  );
}

/** Installs the pinned reference server into the peer folder unless it is there already. */
function ensurePeer(directory: string): void {
  mkdirSync(directory, { recursive: true });
  const installed = Object.entries(PEER_PACKAGES).every(([name, version]) => {
    const file = join(directory, "node_modules", name, "package.json");
    return existsSync(file) && JSON.parse(readFileSync(file, "utf8")).version === version;
  });
  if (installed) return;
  writeFileSync(
    join(directory, "package.json"),
    `${JSON.stringify({ private: true, dependencies: PEER_PACKAGES }, null, 2)}\n`,
  );
  console.log(`installing the reference server into ${directory} (npm install --prefix)`);
  try {
    // No install scripts: nothing the server needs runs one (esbuild's binary comes as a package).
    execFileSync(
      "npm",
      [
        "install",
        "--prefix",
        directory,
        "--no-audit",
        "--no-fund",
        "--ignore-scripts",
        "--save-exact",
      ],
      { stdio: ["ignore", "pipe", "pipe"], timeout: INSTALL_TIMEOUT_MS },
    );
  } catch (error) {
    const stderr = String((error as { stderr?: Buffer }).stderr ?? "")
      .trim()
      .split("\n")
      .slice(-3)
      .join(" ");
    throw new Error(
      `npm install --prefix ${directory} failed: ${stderr || (error as Error).message}`,
      { cause: error },
    );
  }
}

/** `langgraph dev` (in memory, no browser, no reload) on a free port, serving the same graph file. */
async function startReference(): Promise<Server> {
  const directory = peerDirectory();
  ensurePeer(directory);
  copyFileSync(join(__dirname, "fixtures", "stream-graph.ts"), join(directory, "stream-graph.ts"));
  writeFileSync(
    join(directory, "langgraph.json"),
    `${JSON.stringify({ node_version: "22", graphs: { [ASSISTANT]: "./stream-graph.ts:graph" }, dependencies: ["."] }, null, 2)}\n`,
  );
  // A fresh in-memory server: no threads or runs left over from an earlier bench run.
  rmSync(join(directory, ".langgraph_api"), { recursive: true, force: true });
  const port = await freePort();
  const cli = join(
    directory,
    "node_modules",
    "@langchain",
    "langgraph-cli",
    "dist",
    "cli",
    "cli.mjs",
  );
  const args = [
    cli,
    "dev",
    "--port",
    String(port),
    "--host",
    "127.0.0.1",
    "--no-browser",
    "--no-reload",
  ];
  const started = performance.now();
  // Its own process group: `langgraph dev` runs the server in a child process, and stopping must take both.
  const child = spawn(process.execPath, args, {
    cwd: directory,
    env: cleanEnv(),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const output = captureOutput(child);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      async () => {
        try {
          const response = await fetch(`${url}/ok`, { signal: AbortSignal.timeout(2_000) });
          return response.ok ? true : undefined;
        } catch {
          return undefined;
        }
      },
      STARTUP_TIMEOUT_MS,
      child,
      () => `the reference server did not answer /ok within ${STARTUP_TIMEOUT_MS} ms:\n${output()}`,
    );
  } catch (error) {
    await stopProcess(child, true);
    throw error;
  }
  const version = JSON.parse(
    readFileSync(
      join(directory, "node_modules", "@langchain", "langgraph-api", "package.json"),
      "utf8",
    ),
  ).version as string;
  return {
    name: "reference",
    client: new Client({ apiUrl: url, apiKey: null, callerOptions: { maxRetries: 0 } }),
    process: child,
    readyMs: performance.now() - started,
    command: `langgraph dev --port ${port} --host 127.0.0.1 --no-browser --no-reload (@langchain/langgraph-cli ${PEER_PACKAGES["@langchain/langgraph-cli"]}, @langchain/langgraph-api ${version}, in ${directory})`,
    stop: () => stopProcess(child, true),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Processes

/** The environment without tracing or a caller's Node options: neither server sends anything anywhere. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) {
    if (/^(LANGSMITH_|LANGCHAIN_)/.test(key) || key === "NODE_OPTIONS") delete env[key];
  }
  delete env.TABLE_NAME;
  delete env.DYNAMODB_ENDPOINT;
  delete env.PORT;
  return { ...env, LANGSMITH_TRACING: "false", LANGCHAIN_TRACING_V2: "false" };
}

function captureOutput(child: ChildProcess): () => string {
  let output = "";
  const keep = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.length > 65_536) output = output.slice(-65_536);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  return () => output;
}

async function waitFor<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
  child: ChildProcess,
  describe: () => string,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (child.exitCode !== null || child.signalCode !== null || performance.now() > deadline) {
      throw new Error(describe());
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** SIGTERM (to the process group when it has its own), then SIGKILL after 5 s. */
async function stopProcess(child: ChildProcess, group: boolean): Promise<void> {
  const pid = child.pid;
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(group ? -pid : pid, name);
    } catch {
      // already gone
    }
  };
  signal("SIGTERM");
  const timer = setTimeout(() => signal("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
  // The group's other processes (the server `langgraph dev` started) go too.
  if (group) signal("SIGKILL");
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * fraction) - 1)]!;
}

function sortKeys(record: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}

function round(value: number, digits = 2): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** User+system CPU (ms) of a process and all its descendants, from /proc; undefined elsewhere. */
function treeCpuMs(root: number | undefined): number | undefined {
  if (root === undefined || !existsSync("/proc/self/stat")) return undefined;
  const children = new Map<number, number[]>();
  const ticks = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const pid = Number(entry);
    children.set(Number(fields[1]), [...(children.get(Number(fields[1])) ?? []), pid]);
    ticks.set(pid, Number(fields[11]) + Number(fields[12]));
  }
  let total = 0;
  const visit = (pid: number) => {
    total += ticks.get(pid) ?? 0;
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(root);
  // USER_HZ is 100 on every Linux architecture Node ships for.
  return total * 10;
}
