import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import type { Message } from "@langchain/langgraph-sdk";
import { chromium, type Browser, type Page } from "playwright-core";
import { buildSupportChatGraph } from "../../src/examples/support-chat";
import { backendOptions, startTestServer, type Backend, type TestServer } from "../runtime/support";
import { CURRENT_SDK, SDK_MAJORS, sdkMatrix, type SdkMajor } from "../support/sdk-majors";
import { findChromium } from "./chromium";
import { startSameOriginServer, type SameOriginServer } from "./same-origin-server";

/**
 * The official `useStream` React hook (@langchain/langgraph-sdk/react) in headless Chromium, on a page Vite
 * builds, against the dev server behind one origin: the customer's message, the reply streamed token by token,
 * the supervisor's interrupt card, Approve, the final answer, and the thread as the SDK reads it afterwards. The
 * page is built once with each major of the SDK (its hook and client): both backends with the current one, the
 * in-memory one with 2.0.0 too.
 */
const ROOT = resolve(__dirname, "../..");
const TSX = join(ROOT, "node_modules/tsx/dist/cli.mjs");
const ARTIFACTS = join(__dirname, "artifacts");
const BASE_PATH = "/app/";
/** Slow enough that a render between two words is certain, fast enough for a test. */
const TOKEN_DELAY_MS = 50;

const REQUEST = "Please refund booking BK-1042, my flight was cancelled.";
const PREAMBLE =
  "I can help with booking BK-1042. Refunds need a supervisor's approval, so I am asking one now.";
const FINAL_ANSWER =
  "Good news: your refund for booking BK-1042 is approved (reference RF-BK-1042). " +
  "The money will be back on your card within 5 business days.";

/** What the page showed at one render: the assistant's message texts, whether a run was under way, the card. */
interface Render {
  at: number;
  loading: boolean;
  approval: boolean;
  answers: string[];
}

const chromiumLookup = findChromium();
if ("missing" in chromiumLookup) {
  console.log(
    `SKIP: chromium not installed (${chromiumLookup.missing}): the useStream browser test`,
  );
}
const describeWithChromium = "path" in chromiumLookup ? describe : describe.skip;
/** Both backends with the current SDK, and the in-memory one with SDK 2.0.0 too. */
const cases = sdkMatrix<Backend>(["memory", "dynamodb"], ["memory"]);

describeWithChromium(
  "useStream in headless Chromium (integration: Vite-built page, dev server)",
  () => {
    /** The built page of each major, by version. */
    const pageDirs = new Map<string, string>();
    let browser: Browser;

    beforeAll(async () => {
      for (const sdk of SDK_MAJORS) {
        const pageDir = mkdtempSync(join(tmpdir(), "memory-table-page-"));
        pageDirs.set(sdk.version, pageDir);
        await buildPage(pageDir, sdk);
      }
      browser = await chromium.launch({
        executablePath: "path" in chromiumLookup ? chromiumLookup.path : undefined,
        headless: true,
      });
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      for (const pageDir of pageDirs.values()) rmSync(pageDir, { recursive: true, force: true });
    });

    describe.each(cases)("with $backend and SDK $sdk.version", ({ backend, sdk }) => {
      const tenant = `tenant-browser-${backend}`;
      // One set of screenshots: the in-memory backend's with the current SDK.
      const screenshots = backend === "memory" && sdk === CURRENT_SDK;
      let api: TestServer;
      let origin: SameOriginServer;

      beforeAll(async () => {
        api = await startTestServer({
          assistants: {
            "support-chat": ({ checkpointer }) =>
              buildSupportChatGraph({ checkpointer, tokenDelayMs: TOKEN_DELAY_MS }),
          },
          ...(await backendOptions(backend)),
        });
        origin = await startSameOriginServer({
          staticDir: pageDirs.get(sdk.version)!,
          basePath: BASE_PATH,
          apiUrl: api.url,
        });
      });

      afterAll(async () => {
        await origin?.close();
        await api?.close();
      });

      it("streams the reply token by token, shows the interrupt card, and resumes on Approve", async () => {
        const context = await browser.newContext({ viewport: { width: 900, height: 760 } });
        const page = await context.newPage();
        const pageErrors: string[] = [];
        page.on("pageerror", (error) => pageErrors.push(error.message));
        page.on("console", (message) => {
          if (message.type() === "error") pageErrors.push(message.text());
        });
        try {
          const token = await api.token(tenant);
          await page.goto(
            `${origin.url}${BASE_PATH}?assistantId=support-chat#token=${encodeURIComponent(token)}`,
          );
          await page.getByRole("heading", { name: "Support chat" }).waitFor();
          await recordRenders(page);

          // The customer asks; the reply streams in, then the tool pauses for a supervisor.
          const sentAt = Date.now();
          await page.getByLabel("Message").fill(REQUEST);
          await page.getByRole("button", { name: "Send" }).click();
          const approval = page.getByTestId("approval");
          await approval.waitFor({ timeout: 20_000 });
          const cardAt = Date.now();
          await expect(approval.getByTestId("approval-question").textContent()).resolves.toBe(
            "Approve a refund for booking BK-1042?",
          );
          const firstRun = await takeRenders(page);
          const preambleGrowth = expectStreamedProgressively(firstRun, 0, PREAMBLE);
          expect(await messageTexts(page)).toEqual([
            { type: "human", text: REQUEST },
            { type: "ai", text: PREAMBLE },
          ]);
          await expect(page.getByTestId("tool-call").textContent()).resolves.toBe(
            `Calling book_refund(${JSON.stringify({ booking_id: "BK-1042", reason: REQUEST })})`,
          );
          if (screenshots) {
            console.log(`screenshot: ${await screenshot(page, "use-stream-approval.png")}`);
          }

          // The supervisor approves: the same thread resumes and the final answer streams in.
          const approvedAt = Date.now();
          await approval.getByRole("button", { name: "Approve" }).click();
          await page.getByText(FINAL_ANSWER).waitFor({ timeout: 20_000 });
          await page.locator('[data-testid="chat"][data-loading="false"]').waitFor();
          const doneAt = Date.now();
          const secondRun = await takeRenders(page);
          const answerGrowth = expectStreamedProgressively(secondRun, 1, FINAL_ANSWER);
          await expect(approval.count()).resolves.toBe(0);
          const shown = await messageTexts(page);
          expect(shown.map((message) => message.type)).toEqual(["human", "ai", "tool", "ai"]);
          expect(JSON.parse(shown[2]!.text)).toEqual({
            status: "approved",
            booking_id: "BK-1042",
            refund_reference: "RF-BK-1042",
          });
          expect(shown[3]!.text).toBe(FINAL_ANSWER);
          await expect(page.getByTestId("error").count()).resolves.toBe(0);
          if (screenshots) {
            console.log(`screenshot: ${await screenshot(page, "use-stream.png")}`);
          }
          expect(pageErrors).toEqual([]);

          // The thread as the SDK reads it: the page's thread, the tenant's, finished.
          const threadId = await page.getByTestId("chat").getAttribute("data-thread-id");
          expect(threadId).toMatch(/^[0-9a-f-]{36}$/);
          const client = await api.client(tenant, sdk);
          const state = await client.threads.getState<{ messages: Message[] }>(threadId!);
          expect(state.next).toEqual([]);
          expect(state.tasks).toEqual([]);
          expect(
            state.values.messages.map((message) => [message.type, textOf(message.content)]),
          ).toEqual([
            ["human", REQUEST],
            ["ai", PREAMBLE],
            ["tool", shown[2]!.text],
            ["ai", FINAL_ANSWER],
          ]);
          expect((await client.threads.get(threadId!)).status).toBe("idle");
          // Another tenant does not see it.
          const stranger = await api.client(`${tenant}-other`, sdk);
          await expect(stranger.threads.get(threadId!)).rejects.toThrow(/404/);

          console.log(
            `useStream (${backend}, SDK ${sdk.version}), from the click: the reply ${preambleGrowth}, ` +
              `interrupt card ${cardAt - sentAt} ms; after Approve: the answer ${answerGrowth}, ` +
              `done ${doneAt - approvedAt} ms`,
          );
        } finally {
          await context.close();
        }
      }, 60_000);
    });
  },
);

/** Vite's JS API in a child process (test/browser/app/build.mts), into `outDir`, with `sdk`'s hook and client. */
async function buildPage(outDir: string, sdk: SdkMajor): Promise<void> {
  const args = [TSX, "test/browser/app/build.mts", outDir, sdk.packageName];
  try {
    await promisify(execFile)(process.execPath, args, {
      cwd: ROOT,
      timeout: 60_000,
    });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`the page did not build:\n${stdout ?? ""}${stderr ?? ""}`, { cause: error });
  }
}

/** Keeps every render of the page in `window.renders` (a MutationObserver sees each DOM change React makes). */
async function recordRenders(page: Page): Promise<void> {
  await page.evaluate(() => {
    const target = window as unknown as { renders: Render[] };
    target.renders = [];
    const snapshot = (): Render => ({
      at: performance.now(),
      loading:
        document.querySelector('[data-testid="chat"]')?.getAttribute("data-loading") === "true",
      approval: document.querySelector('[data-testid="approval"]') !== null,
      answers: Array.from(
        document.querySelectorAll(
          '[data-testid="message"][data-type="ai"] [data-testid="message-text"]',
        ),
        (element) => element.textContent ?? "",
      ),
    });
    new MutationObserver(() => {
      const next = snapshot();
      const last = target.renders.at(-1);
      if (JSON.stringify(last && { ...last, at: 0 }) !== JSON.stringify({ ...next, at: 0 })) {
        target.renders.push(next);
      }
    }).observe(document.body, {
      subtree: true,
      childList: true,
      characterData: true,
      attributes: true,
    });
  });
}

/** The renders recorded so far, and a fresh record for what follows. */
async function takeRenders(page: Page): Promise<Render[]> {
  return page.evaluate(() => {
    const target = window as unknown as { renders: Render[] };
    const renders = target.renders;
    target.renders = [];
    return renders;
  });
}

/**
 * The assistant's message `index` grew in front of the customer: at least two renders, during the run and before
 * any interrupt card, showed longer and longer beginnings of `full`, and a later render showed all of it.
 * Returns when (from the run's first render) the first and the last word showed, for the log.
 */
function expectStreamedProgressively(renders: Render[], index: number, full: string): string {
  const partial = renders.filter((render) => {
    const text = render.answers[index];
    return text !== undefined && text.length > 0 && text.length < full.length;
  });
  expect(partial.length).toBeGreaterThanOrEqual(2);
  for (const render of partial) {
    expect(render.loading).toBe(true);
    expect(render.approval).toBe(false);
    expect(full.startsWith(render.answers[index]!)).toBe(true);
  }
  const lengths = partial.map((render) => render.answers[index]!.length);
  expect(lengths).toEqual([...lengths].sort((a, b) => a - b));
  expect(new Set(lengths).size).toBeGreaterThanOrEqual(2);
  const complete = renders.find((render) => render.answers[index] === full);
  expect(renders.indexOf(complete!)).toBeGreaterThan(renders.indexOf(partial.at(-1)!));
  const start = renders.find((render) => render.loading)!.at;
  const after = (render: Render) => `${Math.round(render.at - start)} ms`;
  return (
    `first words at ${after(partial[0]!)}, ${partial.length} partial renders, ` +
    `whole at ${after(complete!)}`
  );
}

async function messageTexts(page: Page): Promise<Array<{ type: string; text: string }>> {
  const items = page.getByTestId("message");
  const shown: Array<{ type: string; text: string }> = [];
  for (let index = 0; index < (await items.count()); index += 1) {
    const item = items.nth(index);
    shown.push({
      type: (await item.getAttribute("data-type")) ?? "",
      text: (await item.getByTestId("message-text").textContent()) ?? "",
    });
  }
  return shown;
}

function textOf(content: Message["content"]): string {
  return typeof content === "string" ? content : JSON.stringify(content);
}

async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, name);
  await page.screenshot({ path, fullPage: true });
  return path;
}
