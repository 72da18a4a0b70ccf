/**
 * Section "dev-server": `npm start` as a developer runs it, measured over HTTP on the booking lifecycle through
 * the LangGraph Server face (create a thread, start a run that pauses for approval, resume it to completion):
 * 200 lifecycles one after another (latency), then 400 at concurrency 8 (throughput), on the in-memory saver.
 *
 * Reported: time from `npm start` to the banner; median and p95 lifecycle latency; lifecycles per second at
 * concurrency 8; CPU of everything `npm start` started (npm itself excluded) per lifecycle; peak RSS of the
 * process serving the port and of that whole process tree; and whether SIGTERM to npm stops it all.
 * CPU and memory come from /proc (Linux); elsewhere those columns are absent.
 *
 * MEMORY_TABLE_BENCH_PROFILE=1 also records a V8 CPU profile of the serving process (written when it exits)
 * and prints where its time went, by package and by function.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { median, writeResults } from "./context";
import { summarizeCpuProfile } from "./cpu-profile";

const REPO = join(__dirname, "..");
const SEQUENTIAL = 200;
const CONCURRENT = 400;
const CONCURRENCY = 8;
const WARM_UP = 20;
const REQUEST_TIMEOUT_MS = 30_000;
const STARTUP_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 10_000;
const TARGETS = { lifecyclesPerSecond: 100, serverPeakRssMb: 100 };
// The raw profiles are large: they stay out of the repository, only their summary goes to bench/results.
const PROFILE_DIR = join(tmpdir(), "memory-table-dev-server-profile");

interface Server {
  npm: ChildProcess;
  url: string;
  token: string;
  readyMs: number;
  output(): string;
}

export default async function devServer(): Promise<void> {
  const profile = process.env.MEMORY_TABLE_BENCH_PROFILE === "1";
  if (profile) {
    rmSync(PROFILE_DIR, { recursive: true, force: true });
    mkdirSync(PROFILE_DIR, { recursive: true });
  }
  // Throughput and latency move with the machine's load (a shared machine): it is recorded beside them.
  const loadAtStart = loadavg()[0]!;
  const server = await startNpmStart(profile);
  const tree = new ProcessTree(server.npm.pid!);
  try {
    const listener = tree.listenerOf(Number(new URL(server.url).port));
    const lifecycle = (index: number) => bookingLifecycle(server, index);

    for (let index = 0; index < WARM_UP; index += 1) await lifecycle(-index - 1);

    const sampler = tree.startRssSampler();
    const sequentialCpu = tree.cpuMs();
    const latencies: number[] = [];
    for (let index = 0; index < SEQUENTIAL; index += 1) {
      const started = performance.now();
      await lifecycle(index);
      latencies.push(performance.now() - started);
    }
    const sequentialCpuMs = subtract(tree.cpuMs(), sequentialCpu);

    const concurrentCpu = tree.cpuMs();
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < CONCURRENT) await lifecycle(SEQUENTIAL + next++);
      }),
    );
    const concurrentSeconds = (performance.now() - started) / 1000;
    const concurrentCpuMs = subtract(tree.cpuMs(), concurrentCpu);
    const treePeakRssMb = sampler.stop();
    const serverPeakRssMb = listener === undefined ? undefined : tree.peakRssMb(listener);

    const node = nodeVersionOf(listener);
    const stop = await stopWithSigterm(server, tree);
    const sorted = [...latencies].sort((a, b) => a - b);
    const results = {
      command: `npm start (${readStartScript()})`,
      node,
      readyMs: Math.round(server.readyMs),
      sequential: {
        lifecycles: SEQUENTIAL,
        medianMs: round(median(latencies)),
        p95Ms: round(sorted[Math.floor(sorted.length * 0.95)]!),
        serverCpuMsPerLifecycle: perLifecycle(sequentialCpuMs, SEQUENTIAL),
      },
      concurrent: {
        lifecycles: CONCURRENT,
        concurrency: CONCURRENCY,
        lifecyclesPerSecond: round(CONCURRENT / concurrentSeconds),
        serverCpuMsPerLifecycle: perLifecycle(concurrentCpuMs, CONCURRENT),
      },
      serverPeakRssMb,
      treePeakRssMb,
      stopsOnSigterm: stop.stopped,
      stopMs: stop.ms,
      machine: {
        cores: cpus().length,
        loadAverageAtStart: round(loadAtStart),
        loadAverageAtEnd: round(loadavg()[0]!),
      },
      targets: TARGETS,
      definitions: {
        lifecycle:
          "POST /threads, POST /threads/{id}/runs/wait (pauses at the approval), POST /threads/{id}/runs/wait with command.resume (completes)",
        serverCpuMsPerLifecycle:
          "user+system CPU of every process npm start started (npm excluded), over the phase, per lifecycle",
        serverPeakRssMb: "peak RSS (VmHWM) of the process listening on the port",
        treePeakRssMb:
          "peak of the summed RSS of every process npm start started (npm excluded), sampled every 100 ms",
        stopsOnSigterm: "SIGTERM to the npm process: every process it started is gone within 10 s",
        machine:
          "1-minute load average when npm start began and when the bench ended: lifecycles/s and latency are comparable only between runs at similar load; CPU ms per lifecycle and peak RSS move less",
      },
    };
    console.table({
      "sequential (200)": {
        "median ms": results.sequential.medianMs,
        "p95 ms": results.sequential.p95Ms,
        "lifecycles/s": "",
        "CPU ms/lifecycle": results.sequential.serverCpuMsPerLifecycle ?? "n/a",
      },
      [`concurrency ${CONCURRENCY} (400)`]: {
        "median ms": "",
        "p95 ms": "",
        "lifecycles/s": results.concurrent.lifecyclesPerSecond,
        "CPU ms/lifecycle": results.concurrent.serverCpuMsPerLifecycle ?? "n/a",
      },
    });
    console.table({
      [results.command]: {
        node: results.node,
        "ready ms": results.readyMs,
        "server peak RSS MB": serverPeakRssMb ?? "n/a",
        "tree peak RSS MB": treePeakRssMb ?? "n/a",
        "stops on SIGTERM": stop.stopped,
      },
    });
    console.log(
      `targets: >= ${TARGETS.lifecyclesPerSecond} lifecycles/s at concurrency ${CONCURRENCY}: ${
        results.concurrent.lifecyclesPerSecond >= TARGETS.lifecyclesPerSecond ? "met" : "NOT MET"
      }; <= ${TARGETS.serverPeakRssMb} MB server peak RSS: ${
        serverPeakRssMb === undefined
          ? "not measured"
          : serverPeakRssMb <= TARGETS.serverPeakRssMb
            ? "met"
            : "NOT MET"
      }`,
    );
    console.log(
      `machine: ${results.machine.cores} cores, 1-minute load average ${results.machine.loadAverageAtStart} at the start, ${results.machine.loadAverageAtEnd} at the end`,
    );
    if (profile) printProfile(listener);
    console.log(`wrote ${writeResults("dev-server", results)}`);
  } finally {
    tree.killAll();
  }
}

/** `npm start` with a free port, in the in-memory mode; resolves once the banner is printed. */
async function startNpmStart(profile: boolean): Promise<Server> {
  // As a developer runs it: default log level (one line per request), output read as a terminal would.
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: "0" };
  delete env.TABLE_NAME;
  delete env.DYNAMODB_ENDPOINT;
  if (profile) env.NODE_OPTIONS = `--cpu-prof --cpu-prof-dir=${PROFILE_DIR}`;
  const started = performance.now();
  const npm = spawn("npm", ["start"], { cwd: REPO, env, stdio: ["ignore", "pipe", "pipe"] });
  let printed = "";
  let ready = false;
  // Keep what is printed until the banner, and the last 64 KiB after it (the request log lines).
  const keep = (chunk: Buffer) => {
    printed += chunk.toString();
    if (ready && printed.length > 65_536) printed = printed.slice(-65_536);
  };
  npm.stdout!.on("data", keep);
  npm.stderr!.on("data", keep);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no banner within ${STARTUP_TIMEOUT_MS} ms:\n${printed}`)),
      STARTUP_TIMEOUT_MS,
    );
    const poll = setInterval(() => {
      if (/approvals inbox/.test(printed)) {
        ready = true;
        clearTimeout(timer);
        clearInterval(poll);
        resolve();
      }
    }, 10);
    npm.once("exit", (code) => {
      clearTimeout(timer);
      clearInterval(poll);
      if (!ready) reject(new Error(`npm start exited (${String(code)}):\n${printed}`));
    });
  });
  const readyMs = performance.now() - started;
  const url = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(printed)?.[1];
  const token = /Bearer ([\w.-]+)/.exec(printed)?.[1];
  if (!url || !token) throw new Error(`no URL or token in the banner:\n${printed}`);
  return { npm, url, token, readyMs, output: () => printed };
}

async function bookingLifecycle(server: Server, index: number): Promise<void> {
  const post = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
    const response = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${path}: ${response.status} ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  const threadId = `bench-${process.pid}-${index}`;
  await post("/threads", { thread_id: threadId });
  const paused = await post(`/threads/${threadId}/runs/wait`, {
    assistant_id: "booking",
    input: { request: "move my appointment" },
  });
  if (!Array.isArray(paused.__interrupt__))
    throw new Error(`did not pause: ${JSON.stringify(paused)}`);
  const done = await post(`/threads/${threadId}/runs/wait`, {
    assistant_id: "booking",
    command: { resume: { approve: true } },
  });
  if (done.booked !== true) throw new Error(`did not book: ${JSON.stringify(done)}`);
}

/** SIGTERM to npm, as a terminal or a process manager sends it; then waits for the whole tree to go. */
async function stopWithSigterm(
  server: Server,
  tree: ProcessTree,
): Promise<{ stopped: boolean | "unknown"; ms: number | undefined }> {
  const pids = tree.pids();
  const started = performance.now();
  server.npm.kill("SIGTERM");
  if (pids.length === 0) return { stopped: "unknown", ms: undefined };
  while (performance.now() - started < STOP_TIMEOUT_MS) {
    if (pids.every((pid) => !isAlive(pid))) {
      return { stopped: true, ms: Math.round(performance.now() - started) };
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { stopped: false, ms: undefined };
}

/**
 * The processes `npm start` started, read from /proc: every descendant of the npm process (npm excluded).
 * Pids seen once are remembered, so the tree can still be stopped after npm is gone.
 */
class ProcessTree {
  private readonly known = new Set<number>();
  private readonly ticksPerSecond = 100; // USER_HZ: 100 on every Linux architecture Node ships for

  constructor(private readonly root: number) {}

  static available(): boolean {
    return existsSync("/proc/self/stat");
  }

  pids(): number[] {
    if (!ProcessTree.available()) return [];
    const children = new Map<number, number[]>();
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = readProc(`/proc/${entry}/stat`);
      if (stat === undefined) continue;
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    }
    const found: number[] = [];
    const visit = (pid: number) => {
      for (const child of children.get(pid) ?? []) {
        found.push(child);
        visit(child);
      }
    };
    visit(this.root);
    for (const pid of found) this.known.add(pid);
    return found;
  }

  /** User+system CPU of the tree, in ms, or undefined without /proc. */
  cpuMs(): number | undefined {
    if (!ProcessTree.available()) return undefined;
    let ticks = 0;
    for (const pid of this.pids()) {
      const stat = readProc(`/proc/${pid}/stat`);
      if (stat === undefined) continue;
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    }
    return (ticks * 1000) / this.ticksPerSecond;
  }

  /** The pid of the tree's process that listens on 127.0.0.1:port. */
  listenerOf(port: number): number | undefined {
    if (!ProcessTree.available()) return undefined;
    const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
    const inodes = new Set<string>();
    for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
      for (const line of (readProc(file) ?? "").split("\n").slice(1)) {
        const fields = line.trim().split(/\s+/);
        if (fields[1]?.endsWith(`:${hexPort}`) && fields[3] === "0A") inodes.add(fields[9]!);
      }
    }
    for (const pid of this.pids()) {
      let fds: string[];
      try {
        fds = readdirSync(`/proc/${pid}/fd`);
      } catch {
        continue;
      }
      for (const fd of fds) {
        try {
          const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
          if (inodes.has(/^socket:\[(\d+)\]$/.exec(target)?.[1] ?? "")) return pid;
        } catch {
          // closed meanwhile
        }
      }
    }
    return undefined;
  }

  peakRssMb(pid: number): number | undefined {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readProc(`/proc/${pid}/status`) ?? "")?.[1];
    return kb === undefined ? undefined : Math.round(Number(kb) / 1024);
  }

  startRssSampler(): { stop(): number | undefined } {
    if (!ProcessTree.available()) return { stop: () => undefined };
    let peakKb = 0;
    const sample = () => {
      let kb = 0;
      for (const pid of this.pids()) {
        kb += Number(/VmRSS:\s+(\d+) kB/.exec(readProc(`/proc/${pid}/status`) ?? "")?.[1] ?? 0);
      }
      peakKb = Math.max(peakKb, kb);
    };
    sample();
    const timer = setInterval(sample, 100);
    return {
      stop: () => {
        clearInterval(timer);
        sample();
        return Math.round(peakKb / 1024);
      },
    };
  }

  /** Whatever is left of the tree (only the processes this bench started), SIGKILL. */
  killAll(): void {
    this.pids();
    for (const pid of this.known) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    try {
      process.kill(this.root, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

function printProfile(listener: number | undefined): void {
  const file =
    listener === undefined
      ? undefined
      : readdirSync(PROFILE_DIR).find((name) => name.includes(`.${listener}.`));
  if (!file) {
    console.log(
      `no CPU profile of the serving process in ${PROFILE_DIR} (it is written when the process exits)`,
    );
    return;
  }
  const summary = summarizeCpuProfile(join(PROFILE_DIR, file), REPO);
  console.log(`CPU profile of the serving process (${file}), self time:`);
  console.table(summary.byPackage.slice(0, 12));
  console.table(summary.byFunction.slice(0, 20));
  writeResults("dev-server-profile", summary);
}

function readStartScript(): string {
  const scripts = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")).scripts;
  return scripts.start as string;
}

function nodeVersionOf(pid: number | undefined): string {
  if (pid === undefined) return "unknown";
  try {
    const executable = readlinkSync(`/proc/${pid}/exe`);
    const version = execFileSync(executable, ["--version"], { encoding: "utf8" }).trim();
    return `${version} (${executable})`;
  } catch {
    return "unknown";
  }
}

function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  if (!ProcessTree.available()) {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
  const stat = readProc(`/proc/${pid}/stat`);
  // A zombie has exited; only its parent has not collected it yet.
  return stat !== undefined && stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
}

function subtract(end: number | undefined, start: number | undefined): number | undefined {
  return end === undefined || start === undefined ? undefined : end - start;
}

function perLifecycle(cpuMs: number | undefined, count: number): number | undefined {
  return cpuMs === undefined ? undefined : round(cpuMs / count);
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
