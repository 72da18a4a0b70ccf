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
import {
  imageDeploymentMissing,
  startImageDeployment,
  type ImageDeployment,
} from "./image-deployment";
import { buildUi, findUiSource, UIS, type UiSpec } from "./ui-build";

/** The dev server's two backends, and the image behind the API Gateway stand-in (image-deployment.ts). */
type RunBackend = Backend | "image";
const BACKENDS: readonly RunBackend[] = ["memory", "dynamodb-local", "image"];
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
      const missing =
        backend !== "memory" && javaProblem
          ? javaProblem
          : backend === "image"
            ? imageDeploymentMissing()
            : undefined;
      if (missing) {
        log(`SKIP: backend ${backend}: ${missing}`);
        for (const { spec } of present)
          steps.skip(`${spec.name}@${backend}`, DRIVERS[spec.name].steps, missing);
        if (backend === "image") steps.skip(`gateway@image`, GATEWAY_STEPS, missing);
        continue;
      }
      const serverStarted = Date.now();
      const api =
        backend === "image"
          ? await startImageDeployment(
              join(dataDir, backend),
              [...apps.values()].map((app) => app.url),
              log,
            )
          : await startDevServer(backend, join(dataDir, backend));
      log(
        `${backend === "image" ? "image behind the API Gateway stand-in" : `dev server (${backend})`} on ${api.url}, started in ${((Date.now() - serverStarted) / 1000).toFixed(1)} s`,
      );
      try {
        for (const { spec } of present) {
          const group = `${spec.name}@${backend}`;
          const groupStarted = Date.now();
          await DRIVERS[spec.name].drive(browser, apps.get(spec.name)!, api, steps, group);
          groupTimes.push(`${group}: ${((Date.now() - groupStarted) / 1000).toFixed(1)} s`);
        }
        if (backend === "image") {
          await checkGateway(api as ImageDeployment, [...apps.values()][0]!.url, steps);
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

const GATEWAY_STEPS = ["cors", "credentials"] as const;

/**
 * What the UIs relied on at the API Gateway stand-in, checked directly once they are done: the module's CORS
 * configuration answered their preflights (a UI origin allowed, another not, no function invoked), and the
 * authorizer refused a request without a key or with a wrong one (403, as API Gateway answers a refusal).
 */
async function checkGateway(deployment: ImageDeployment, uiOrigin: string, steps: Steps) {
  const step = steps.group("gateway@image", () => undefined);
  await step("cors", async () => {
    const { preflights, integrationCalls } = deployment.gateway.counts;
    if (preflights === 0) throw new Error("expected the UIs' preflights to reach the stand-in");
    const preflight = (origin: string) =>
      fetch(`${deployment.url}/threads/search`, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type,x-api-key",
        },
      });
    const allowed = await preflight(uiOrigin);
    if (allowed.headers.get("access-control-allow-origin") !== uiOrigin) {
      throw new Error(
        `expected ${uiOrigin} allowed, got ${allowed.status} with access-control-allow-origin ${allowed.headers.get("access-control-allow-origin")}`,
      );
    }
    const other = await preflight("https://elsewhere.example.com");
    if (other.headers.get("access-control-allow-origin") !== null) {
      throw new Error("expected an origin not in cors_allow_origins to get no CORS headers");
    }
    if (deployment.gateway.counts.integrationCalls !== integrationCalls) {
      throw new Error("expected preflights to be answered without invoking the API function");
    }
    return `${preflights} preflights of the UIs answered from the module's cors_configuration; another origin refused`;
  });
  await step("credentials", async () => {
    const search = (headers: Record<string, string>) =>
      fetch(`${deployment.url}/threads/search`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: "{}",
      });
    const none = await search({});
    const wrong = await search({ "x-api-key": `${deployment.token.slice(0, -4)}AAAA` });
    const right = await search({ "x-api-key": deployment.token });
    if (none.status !== 403 || wrong.status !== 403 || right.status !== 200) {
      throw new Error(
        `expected 403 without a key and with a wrong one, 200 with the key, got ${none.status}, ${wrong.status}, ${right.status}`,
      );
    }
    return `no key 403, a wrong key 403, the key 200; authorizer invoked ${deployment.gateway.counts.authorizerCalls} times`;
  });
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

function parseOptions(args: string[]): { backend?: RunBackend; ui?: UiSpec["name"] } {
  const options: { backend?: RunBackend; ui?: UiSpec["name"] } = {};
  for (let index = 0; index < args.length; index += 1) {
    const [name, value] = [args[index], args[index + 1]];
    if (name === "--backend" && BACKENDS.includes(value as RunBackend))
      options.backend = value as RunBackend;
    else if (name === "--ui" && (value === "agent-chat-ui" || value === "agent-inbox"))
      options.ui = value;
    else {
      throw new Error(
        `expected --backend memory|dynamodb-local|image or --ui agent-chat-ui|agent-inbox, got ${JSON.stringify(args.slice(index).join(" "))}`,
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
