/**
 * `npm run test:ui`: Agent Chat UI and Agent Inbox, built unmodified from a fetched copy, driven in headless
 * Chromium against the dev server (`npm start -- --config test/ui/fixture/langgraph.json`) on both backends: in
 * memory and `--dynamodb-local`. Long (two Next.js builds on the first run, cached outside the clone after), so
 * not part of `npm test`. What it needs and does not find (a fetched UI, Chromium, Java) is printed as a SKIP
 * line; it never passes empty. Screenshots of every step go to test/ui/screenshots/ (git-ignored).
 *
 * Options: `--backend memory` or `--backend dynamodb-local` runs one backend; `--ui agent-chat-ui` or
 * `--ui agent-inbox` one UI. Variables: AGENT_CHAT_UI_SOURCE, AGENT_INBOX_SOURCE (a clone of each; default the
 * fetch tool's copy under UI_MIRROR_DIR, /work/.mirror), UI_BUILD_CACHE (default ~/.cache/memory-table/ui),
 * CHROME_PATH.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { findChromium } from "../browser/chromium";
import { CHAT_STEPS, driveAgentChatUi } from "./agent-chat-ui";
import { driveAgentInbox, INBOX_STEPS } from "./agent-inbox";
import {
  javaMissing,
  ROOT,
  SCREENSHOT_DIR,
  startDevServer,
  startNextApp,
  stopAll,
  Steps,
  type Backend,
  type NextApp,
} from "./harness";
import { buildUi, findUiSource, UIS, type UiSpec } from "./ui-build";

const BACKENDS: readonly Backend[] = ["memory", "dynamodb-local"];
const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

const DRIVERS = {
  "agent-chat-ui": { steps: CHAT_STEPS, drive: driveAgentChatUi },
  "agent-inbox": { steps: INBOX_STEPS, drive: driveAgentInbox },
} as const;

const log = (line: string) => console.log(line);

async function main(): Promise<number> {
  const started = Date.now();
  const only = parseOptions(process.argv.slice(2));
  const specs = UIS.filter((spec) => !only.ui || spec.name === only.ui);
  const backends = BACKENDS.filter((backend) => !only.backend || backend === only.backend);
  const steps = new Steps(log);
  const groupTimes: string[] = [];

  const browserPath = findChromium();
  const javaProblem = javaMissing();
  const present: Array<{ spec: UiSpec; source: { gitDir: string; commit: string } }> = [];
  for (const spec of specs) {
    const source = findUiSource(spec);
    if ("missing" in source) {
      log(`SKIP: ${spec.name}: ${source.missing}`);
      for (const backend of backends)
        steps.skip(`${spec.name}@${backend}`, DRIVERS[spec.name].steps, "UI missing");
    } else present.push({ spec, source });
  }
  if ("missing" in browserPath) {
    log(`SKIP: chromium not installed (${browserPath.missing}): no UI can be driven`);
    for (const { spec } of present) {
      for (const backend of backends)
        steps.skip(`${spec.name}@${backend}`, DRIVERS[spec.name].steps, "no chromium");
    }
    return summary(steps, groupTimes, started);
  }
  if (present.length === 0) return summary(steps, groupTimes, started);

  log("building the dev server (npm run build:dev)");
  const build = spawnSync("npm", ["run", "-s", "build:dev"], { cwd: ROOT, stdio: "inherit" });
  if (build.status !== 0) throw new Error(`npm run build:dev failed (${build.status})`);

  const apps = new Map<UiSpec["name"], NextApp>();
  let browser: Browser | undefined;
  const dataDir = mkdtempSync(join(tmpdir(), "memory-table-ui-"));
  try {
    for (const { spec, source } of present) {
      const built = await buildUi(spec, source, log);
      log(
        `${spec.name} ${source.commit.slice(0, 12)}: ${built.built ? "built" : "cached build"} in ${built.dir} ` +
          `(install and build took ${built.buildSeconds} s)`,
      );
      apps.set(spec.name, await startNextApp(built.dir));
    }
    browser = await chromium.launch({
      executablePath: browserPath.path,
      headless: true,
      args: CHROMIUM_FLAGS,
    });

    for (const backend of backends) {
      if (backend === "dynamodb-local" && javaProblem) {
        log(`SKIP: backend dynamodb-local: ${javaProblem}`);
        for (const { spec } of present)
          steps.skip(`${spec.name}@${backend}`, DRIVERS[spec.name].steps, "no java");
        continue;
      }
      const serverStarted = Date.now();
      const api = await startDevServer(backend, join(dataDir, backend));
      log(
        `dev server (${backend}) on ${api.url}, started in ${((Date.now() - serverStarted) / 1000).toFixed(1)} s`,
      );
      try {
        for (const { spec } of present) {
          const group = `${spec.name}@${backend}`;
          const groupStarted = Date.now();
          await DRIVERS[spec.name].drive(browser, apps.get(spec.name)!, api, steps, group);
          groupTimes.push(`${group}: ${((Date.now() - groupStarted) / 1000).toFixed(1)} s`);
        }
      } finally {
        await api.stop();
      }
    }
  } finally {
    await browser?.close();
    for (const app of apps.values()) await app.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return summary(steps, groupTimes, started);
}

function summary(steps: Steps, groupTimes: string[], started: number): number {
  const count = (outcome: string) =>
    steps.results.filter((result) => result.outcome === outcome).length;
  log("");
  for (const line of groupTimes) log(`time ${line}`);
  log(`screenshots: ${SCREENSHOT_DIR}`);
  log(`total ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const passed = count("passed");
  const failed = count("failed");
  const skipped = count("skipped");
  if (passed + failed === 0)
    log("SKIP: no UI step ran (see the SKIP lines above for what is missing)");
  log(`ui: ${passed} passed, ${failed} failed, ${skipped} skipped`);
  return failed > 0 ? 1 : 0;
}

function parseOptions(args: string[]): { backend?: Backend; ui?: UiSpec["name"] } {
  const options: { backend?: Backend; ui?: UiSpec["name"] } = {};
  for (let index = 0; index < args.length; index += 1) {
    const [name, value] = [args[index], args[index + 1]];
    if (name === "--backend" && (value === "memory" || value === "dynamodb-local"))
      options.backend = value;
    else if (name === "--ui" && (value === "agent-chat-ui" || value === "agent-inbox"))
      options.ui = value;
    else {
      throw new Error(
        `expected --backend memory|dynamodb-local or --ui agent-chat-ui|agent-inbox, got ${JSON.stringify(args.slice(index).join(" "))}`,
      );
    }
    index += 1;
  }
  return options;
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    console.log(`test:ui: ${signal}, stopping the dev server and the UIs`);
    void stopAll().finally(() => process.exit(130));
  });
}

main().then(
  (code) => process.exit(code),
  async (error) => {
    console.error(`test:ui could not run: ${(error as Error).stack ?? String(error)}`);
    await stopAll();
    process.exit(1);
  },
);
