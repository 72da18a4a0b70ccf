import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import type { Client } from "@langchain/langgraph-sdk";
import { chromium, type Browser, type Page } from "playwright-core";
import { streamingChatGraph } from "../runtime/graphs";
import { backendOptions, startTestServer, type TestServer } from "../runtime/support";
import { CURRENT_SDK, SDK_MAJORS, type SdkMajor } from "../support/sdk-majors";
import { findChromium } from "./chromium";

/**
 * A browser UI as Agent Chat UI and Agent Inbox are: a page on its own origin (another port, or another host) that
 * holds the official SDK's `Client` with the dev token as `apiKey` (sent as `X-Api-Key`, the only credential those
 * UIs can send) and calls the dev server across origins, so every request depends on the dev server's CORS: the
 * preflight answered before authentication, `Access-Control-Allow-Origin` on every answer (a 401 and a stream
 * included), `Content-Location` exposed. A page of an origin neither loopback nor listed gets nothing. Each major
 * of the SDK has its page.
 */
const ROOT = resolve(__dirname, "../..");
const ESBUILD = join(ROOT, "node_modules/.bin/esbuild");
/** A host name that is not loopback by name, mapped to 127.0.0.1 inside Chromium only. */
const LISTED_HOST = "ui.memory-table.test";
const UNLISTED_HOST = "elsewhere.memory-table.test";

const chromiumLookup = findChromium();
if ("missing" in chromiumLookup) {
  console.log(
    `SKIP: chromium not installed (${chromiumLookup.missing}): the cross-origin SDK browser test`,
  );
}
const describeWithChromium = "path" in chromiumLookup ? describe : describe.skip;

/** What the page saw: its answers, or the SDK's error message. */
type Outcome<T> = { ok: true; value: T } | { ok: false; error: string };

describeWithChromium("the LangGraph SDK on a page of another origin (headless Chromium)", () => {
  let bundleDir: string;
  let pages: Server;
  let pagesPort: number;
  let api: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    bundleDir = mkdtempSync(join(tmpdir(), "memory-table-sdk-page-"));
    const bundles = new Map<string, Buffer>();
    for (const sdk of SDK_MAJORS) {
      const outfile = join(bundleDir, `sdk-${sdk.version}.js`);
      await bundleSdk(outfile, sdk);
      bundles.set(sdk.version, readFileSync(outfile));
    }
    pages = await servePages(bundles);
    pagesPort = (pages.address() as AddressInfo).port;
    api = await startTestServer(
      { assistants: { chat: streamingChatGraph() }, ...(await backendOptions("memory")) },
      { corsOrigins: [`http://${LISTED_HOST}:${pagesPort}`] },
    );
    browser = await chromium.launch({
      executablePath: "path" in chromiumLookup ? chromiumLookup.path : undefined,
      headless: true,
      args: [`--host-resolver-rules=MAP ${LISTED_HOST} 127.0.0.1, MAP ${UNLISTED_HOST} 127.0.0.1`],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await new Promise<void>((done) => (pages ? pages.close(() => done()) : done()));
    pages?.closeAllConnections();
    if (bundleDir) rmSync(bundleDir, { recursive: true, force: true });
  });

  async function openPage(host: string, sdk: SdkMajor): Promise<Page> {
    const page = await browser.newPage();
    await page.goto(`http://${host}:${pagesPort}/?sdk=${sdk.version}`);
    await page.waitForFunction(() => "LangGraphClient" in window);
    return page;
  }

  /** A thread, a waited run and a streamed run, all from the page with `apiKey`; what each answered. */
  function runFromPage(page: Page, apiKey: string) {
    return page.evaluate(
      async ({ apiUrl, apiKey }) => {
        const Sdk = (window as unknown as { LangGraphClient: typeof Client }).LangGraphClient;
        const client = new Sdk({ apiUrl, apiKey, callerOptions: { maxRetries: 0 } });
        const input = { messages: [{ role: "human", content: "hi" }] };
        try {
          const thread = await client.threads.create({ metadata: { from: "page" } });
          const waited = (await client.runs.wait(thread.thread_id, "chat", { input })) as {
            messages: Array<{ type: string; content: string }>;
          };
          const created: string[] = [];
          const events: string[] = [];
          for await (const part of client.runs.stream(thread.thread_id, "chat", {
            input,
            streamMode: ["values", "messages-tuple"],
            // The SDK reads the run from Content-Location: exposed, or the page cannot see it.
            onRunCreated: ({ run_id }) => created.push(run_id),
          })) {
            if (!events.includes(part.event)) events.push(part.event);
          }
          const found = await client.threads.search({ metadata: { from: "page" } });
          return {
            ok: true as const,
            value: {
              threadId: thread.thread_id,
              waited: waited.messages.map((message) => `${message.type}: ${message.content}`),
              created,
              events,
              searched: found.map((each) => each.thread_id),
            },
          };
        } catch (error) {
          return { ok: false as const, error: String((error as Error).message ?? error) };
        }
      },
      { apiUrl: api.url, apiKey },
    );
  }

  describe.each(SDK_MAJORS)("with SDK $version", (sdk) => {
    it("creates a thread, waits for a run and streams another, with the dev token as apiKey, from another port", async () => {
      const page = await openPage("127.0.0.1", sdk);
      try {
        expect(new URL(page.url()).origin).not.toBe(new URL(api.url).origin);
        const outcome = await runFromPage(page, await api.token(`tenant-page-${sdk.version}`));
        expect(outcome).toMatchObject({
          ok: true,
          value: {
            waited: ["human: hi", "ai: hello there"],
            events: ["metadata", "values", "messages"],
          },
        });
        const { value } = outcome as Extract<Outcome<{ threadId: string }>, { ok: true }> & {
          value: { threadId: string; created: string[]; searched: string[] };
        };
        expect(value.created).toHaveLength(1);
        expect(value.searched).toEqual([value.threadId]);
        // The page's thread is the token's tenant's, as the SDK in node reads it.
        const client = await api.client(`tenant-page-${sdk.version}`, sdk);
        expect((await client.threads.get(value.threadId)).metadata).toMatchObject({ from: "page" });
        const runs = await client.runs.list(value.threadId);
        expect(runs.map((run) => run.run_id)).toContain(value.created[0]);
      } finally {
        await page.close();
      }
    }, 60_000);

    it("lets the page read a 401 (a wrong key), rather than a network error", async () => {
      const page = await openPage("127.0.0.1", sdk);
      try {
        const outcome = await runFromPage(page, "not-a-dev-token");
        expect(outcome).toEqual({ ok: false, error: expect.stringMatching(/^HTTP 401/) });
      } finally {
        await page.close();
      }
    }, 30_000);

    it("serves an origin listed in CORS_ALLOW_ORIGINS, and nothing to one neither listed nor loopback", async () => {
      const token = await api.token(`tenant-page-hosts-${sdk.version}`);
      const listed = await openPage(LISTED_HOST, sdk);
      const unlisted = await openPage(UNLISTED_HOST, sdk);
      try {
        expect(await runFromPage(listed, token)).toMatchObject({ ok: true });
        // The browser keeps the answer from the page: the SDK sees a failed fetch, never a status.
        const refused = await runFromPage(unlisted, token);
        expect(refused).toEqual({ ok: false, error: expect.stringMatching(/Failed to fetch/) });
        const client = await api.client(`tenant-page-hosts-${sdk.version}`, sdk);
        // The preflight was refused: the page's POST never reached the handler.
        expect(await client.threads.search({ metadata: { from: "page" } })).toHaveLength(1);
      } finally {
        await listed.close();
        await unlisted.close();
      }
    }, 60_000);
  });
});

/**
 * The SDK bundled for the browser by esbuild's command line (its JS API does not run inside Jest); another major
 * than the current one through its npm alias.
 */
async function bundleSdk(outfile: string, sdk: SdkMajor): Promise<void> {
  const alias = sdk === CURRENT_SDK ? [] : [`--alias:@langchain/langgraph-sdk=${sdk.packageName}`];
  try {
    await promisify(execFile)(
      ESBUILD,
      [
        "test/browser/sdk-page/entry.ts",
        ...alias,
        "--bundle",
        "--format=esm",
        "--platform=browser",
        "--target=chrome120",
        `--outfile=${outfile}`,
        "--log-level=warning",
      ],
      { cwd: ROOT, timeout: 60_000 },
    );
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`the SDK did not bundle:\n${stdout ?? ""}${stderr ?? ""}`, { cause: error });
  }
}

/**
 * The pages (an empty document loading one bundled SDK, `?sdk=<version>`) on a port of their own: another origin
 * than the API's.
 */
async function servePages(bundles: ReadonlyMap<string, Buffer>): Promise<Server> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://pages");
    const bundle = /^\/sdk-(.+)\.js$/.exec(url.pathname)?.[1];
    if (bundle !== undefined && bundles.has(bundle)) {
      const body = bundles.get(bundle)!;
      response.writeHead(200, { "content-type": "text/javascript; charset=utf-8" }).end(body);
      return;
    }
    const version = url.searchParams.get("sdk") ?? "";
    if (!bundles.has(version)) {
      response.writeHead(404, { "content-type": "text/plain" }).end(`no SDK ${version}`);
      return;
    }
    response
      .writeHead(200, { "content-type": "text/html; charset=utf-8" })
      .end(
        `<!doctype html><title>SDK page</title><script type="module" src="/sdk-${version}.js"></script>`,
      );
  });
  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => done());
  });
  return server;
}
