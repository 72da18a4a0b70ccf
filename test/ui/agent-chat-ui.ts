import type { Browser, Locator, Page } from "playwright-core";
import { eventually, type DevServer, type NextApp, type Steps } from "./harness";

/**
 * Agent Chat UI, used as its README tells a new user: its connect form filled with the dev server's URL, the graph
 * id and the banner's dev token in "LangSmith API Key"; then a chat that streams, the thread history, a reload, a
 * tool call that waits for review (LangChain's human-in-the-loop request, which this UI renders as a card) and its
 * approval. Every step is checked on the page and through the server's API.
 */

export const CHAT_STEPS = [
  "connect",
  "stream",
  "history",
  "reload",
  "interrupt",
  "resume",
] as const;

const GRAPH_ID = "chat";
const GREETING = "Hello";
/** The email assistant's scripted answer to a message without an address (src/examples/email-assistant.ts). */
const INTRO =
  "I draft emails and send them once you have reviewed them. Tell me who to write to and what to say, " +
  "for example: email ada@example.com that the launch moves to Friday.";
const REQUEST = "Email ada@example.com that the launch moves to Friday";
const SENT = 'Sent to ada@example.com: "The launch moves to Friday".';

type Message = { type: string; content: unknown };

export async function driveAgentChatUi(
  browser: Browser,
  ui: NextApp,
  api: DevServer,
  steps: Steps,
  group: string,
): Promise<void> {
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  const step = steps.group(group, () => page);
  let threadId = "";
  try {
    await step("connect", async () => {
      await page.goto(ui.url);
      await page.locator("#apiUrl").fill(api.url);
      await page.locator("#assistantId").fill(GRAPH_ID);
      await page.locator("#apiKey").fill(api.token);
      // The UI checks the server with GET /info and the key as X-Api-Key, from its own origin.
      const info = page.waitForResponse((response) => response.url() === `${api.url}/info`);
      await page.getByRole("button", { name: "Continue" }).click();
      const answer = await info;
      if (answer.status() !== 200)
        throw new Error(`expected GET /info 200, got ${answer.status()}`);
      const sent = (await answer.request().allHeaders())["x-api-key"];
      if (sent !== api.token) throw new Error("expected the dev token as X-Api-Key on GET /info");
      await page.getByPlaceholder("Type your message...").waitFor();
      return `GET /info 200 with X-Api-Key from ${ui.url}`;
    });

    await step("stream", async () => {
      const input = page.getByPlaceholder("Type your message...");
      await input.fill(GREETING);
      const watching = watchGrowth(page, INTRO);
      await input.press("Enter");
      const seen = await watching;
      const partial = seen.filter((words) => words > 0 && words < wordCount(INTRO));
      if (!seen.includes(wordCount(INTRO))) {
        throw new Error(
          `expected the whole answer on the page, saw word counts ${seen.join(", ")}`,
        );
      }
      // API Gateway does not stream (the module's stream URL does): there the whole answer arrives at once.
      if (api.buffered && partial.length > 0) {
        throw new Error(`expected the answer whole through API Gateway, saw ${seen.join(", ")}`);
      }
      if (!api.buffered && partial.length === 0) {
        throw new Error(`expected the answer to grow word by word, saw only ${seen.join(", ")}`);
      }
      threadId = await eventually(
        () => new URL(page.url()).searchParams.get("threadId") ?? undefined,
        () => "the thread id in the page's URL",
      );
      const state = await eventually(
        async () => {
          const thread = await api.client.threads.get(threadId);
          return thread.status === "idle" ? thread : undefined;
        },
        () => `thread ${threadId} idle`,
      );
      const messages = (state.values as { messages: Message[] }).messages;
      expectMessages(messages, [
        ["human", GREETING],
        ["ai", INTRO],
      ]);
      const rendered = api.buffered
        ? `the answer whole (${wordCount(INTRO)} words; API Gateway buffers the stream)`
        : `${partial.length} partial renders of ${wordCount(INTRO)} words`;
      return `${rendered}; thread ${threadId} idle with 2 messages`;
    });

    await step("history", async () => {
      // What the server lists for this graph is what the history shows.
      const listed = await api.client.threads.search({
        metadata: { graph_id: GRAPH_ID },
        limit: 100,
      });
      if (listed.length !== 1 || listed[0]!.thread_id !== threadId) {
        throw new Error(
          `expected threads.search to list ${threadId} alone, got ${listed.map((t) => t.thread_id)}`,
        );
      }
      // The header's toggle: the closed panel keeps its own one, slid off the left edge.
      await (await onScreen(page.locator("button:has(svg.lucide-panel-right-close)"))).click();
      const entry = await onScreen(page.locator("button", { hasText: GREETING }));
      // A new thread empties the chat; the history brings the old one back, read from the server.
      await page.getByRole("button", { name: "New thread" }).first().click();
      await eventually(
        async () => (new URL(page.url()).searchParams.get("threadId") === null ? true : undefined),
        () => "the URL without a thread after New thread",
      );
      await page.getByText(INTRO).waitFor({ state: "detached" });
      await entry.click();
      await page.getByText(INTRO).waitFor();
      if (new URL(page.url()).searchParams.get("threadId") !== threadId) {
        throw new Error(`expected the history entry to open ${threadId}, got ${page.url()}`);
      }
      return "the thread listed, left for a new one and reopened from the history";
    });

    await step("reload", async () => {
      await page.reload();
      await page.getByText(INTRO).waitFor();
      await page.getByText(GREETING, { exact: true }).first().waitFor();
      return "both messages rendered again from the server after a reload";
    });

    await step("interrupt", async () => {
      const input = page.getByPlaceholder("Type your message...");
      await input.fill(REQUEST);
      await input.press("Enter");
      await page.getByRole("button", { name: "Approve" }).waitFor({ timeout: 30_000 });
      const thread = await eventually(
        async () => {
          const current = await api.client.threads.get(threadId);
          return current.status === "interrupted" ? current : undefined;
        },
        () => `thread ${threadId} interrupted`,
      );
      const value = Object.values(thread.interrupts ?? {})[0]?.[0]?.value as
        { action_requests?: Array<{ name: string; args: { to?: string } }> } | undefined;
      const request = value?.action_requests?.[0];
      if (request?.name !== "send_email" || request.args.to !== "ada@example.com") {
        throw new Error(
          `expected a send_email review for ada@example.com, got ${JSON.stringify(value)}`,
        );
      }
      return "review card shown; thread interrupted on send_email";
    });

    await step("resume", async () => {
      await page.getByRole("button", { name: "Approve" }).click();
      await page.getByText(SENT).waitFor({ timeout: 30_000 });
      const state = await eventually(
        async () => {
          const thread = await api.client.threads.get(threadId);
          return thread.status === "idle" ? thread : undefined;
        },
        () => `thread ${threadId} idle after the approval`,
      );
      const sent = (state.values as { sent_emails: Array<{ to: string; subject: string }> })
        .sent_emails;
      if (
        sent.length !== 1 ||
        sent[0]!.to !== "ada@example.com" ||
        sent[0]!.subject !== "The launch moves to Friday"
      ) {
        throw new Error(`expected one email sent to ada@example.com, got ${JSON.stringify(sent)}`);
      }
      return "approved from the card; thread idle with one email sent";
    });
  } finally {
    await context.close();
  }
}

/** The first element of `locator` inside the viewport (the UI slides hidden panels off screen). */
async function onScreen(locator: Locator): Promise<Locator> {
  return eventually(
    async () => {
      for (let index = 0; index < (await locator.count()); index += 1) {
        const box = await locator.nth(index).boundingBox();
        if (box && box.x >= 0 && box.width > 0) return locator.nth(index);
      }
      return undefined;
    },
    () => `${locator} on screen`,
  );
}

/** Word counts of `text` found on the page while it streams, until all of it is there (or 30 s pass). */
function watchGrowth(page: Page, text: string): Promise<number[]> {
  return page.evaluate(async (expected) => {
    const words = expected.split(/\s+/);
    const seen = new Set<number>();
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const body = document.body.innerText.replace(/\s+/g, " ");
      let found = 0;
      while (found < words.length && body.includes(words.slice(0, found + 1).join(" "))) found += 1;
      // A lone first word ("I") is found anywhere: count a prefix from its second word on.
      seen.add(found < 2 ? 0 : found);
      if (found === words.length) break;
      await new Promise((done) => setTimeout(done, 15));
    }
    return [...seen];
  }, text);
}

function text(content: unknown): unknown {
  if (!Array.isArray(content)) return content;
  return content
    .map((block: { type?: string; text?: string }) => (block.type === "text" ? block.text : ""))
    .join("");
}

function wordCount(text: string): number {
  return text.split(/\s+/).length;
}

/** Each message's type and text: the UI sends a human message as content blocks, the model answers a string. */
function expectMessages(messages: Message[], expected: Array<[string, string]>): void {
  const got = messages.map((message) => [message.type, text(message.content)]);
  if (JSON.stringify(got) !== JSON.stringify(expected)) {
    throw new Error(`expected messages ${JSON.stringify(expected)}, got ${JSON.stringify(got)}`);
  }
}
