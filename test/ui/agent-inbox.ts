import type { Thread } from "@langchain/langgraph-sdk";
import type { Browser, Page } from "playwright-core";
import { eventually, type DevServer, type NextApp, type Steps } from "./harness";

/**
 * Agent Inbox, used as its README tells a new user: "Add Inbox" with the graph id and the dev server's URL, the
 * banner's dev token in Settings' "LangSmith API Key"; then the inbox of interrupted threads (each an email the
 * assistant drafted, waiting with Agent Inbox's HumanInterrupt), a reload, one thread opened, and its five answers:
 * accept (streamed as the UI streams it), edit, respond, ignore and mark as resolved. Each answer is checked on
 * the page and through the server's API: the thread's status, its pending interrupt, the emails sent.
 */

export const INBOX_STEPS = [
  "connect",
  "list",
  "reload",
  "interrupt",
  "accept",
  "edit",
  "respond",
  "ignore",
  "resolve",
] as const;

const GRAPH_ID = "inbox";
/** One thread per answer, each told apart by its address. */
const THREADS = ["accept", "edit", "respond", "ignore", "resolve"] as const;
type Answer = (typeof THREADS)[number];
const address = (answer: Answer) => `${answer}@example.com`;
const SUBJECT = "The launch moves to Friday";
const EDITED_SUBJECT = "Launch moved to Friday (edited in Agent Inbox)";
const FEEDBACK = "Please mention the venue is the main hall";

interface Values {
  messages: Array<{ type: string; content: unknown }>;
  sent_emails: Array<{ to: string; subject: string; body: string }>;
}

export async function driveAgentInbox(
  browser: Browser,
  ui: NextApp,
  api: DevServer,
  steps: Steps,
  group: string,
): Promise<void> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  const step = steps.group(group, () => page);
  const threads = new Map<Answer, string>();
  let inboxId = "";
  try {
    await step("connect", async () => {
      // What an app does before anyone opens the inbox: runs that stop for a review.
      for (const answer of THREADS) {
        const thread = await api.client.threads.create();
        await api.client.runs.wait(thread.thread_id, GRAPH_ID, {
          input: {
            messages: [
              { role: "user", content: `Email ${address(answer)} that the launch moves to Friday` },
            ],
          },
        });
        threads.set(answer, thread.thread_id);
      }
      await page.goto(ui.url);
      await settle(page);
      const welcome = page.getByRole("dialog").filter({ hasText: "Welcome to the Agent Inbox!" });
      await welcome.waitFor();
      await welcome.locator("#graph-id").fill(GRAPH_ID);
      await welcome.locator("#deployment-url").fill(api.url);
      await welcome.locator("#name").fill("Memory Table");
      await welcome.getByRole("button", { name: "Add Inbox" }).click();
      inboxId = await eventually(
        async () => {
          const saved = await page.evaluate(() => localStorage.getItem("inbox:agent_inboxes"));
          const inboxes = JSON.parse(saved ?? "[]") as Array<{ id: string; graphId: string }>;
          return inboxes.find((inbox) => inbox.graphId === GRAPH_ID)?.id;
        },
        () => "the inbox saved in the page's localStorage",
      );
      // The UI reloads the page once the inbox is saved; that reload may keep ?no_inboxes_found=true (its router
      // has not dropped it yet), and its own updates of the query (inbox, tab, page) can overwrite each other for
      // a while. The inbox's own address, the one a click on it in the sidebar leads to, is opened instead.
      // The UI's own reload (once, when the inbox lists nothing yet) may cut that navigation short: go again.
      const inboxAddress = `${ui.url}/?agent_inbox=${inboxId}&inbox=interrupted&offset=0&limit=10`;
      for (let attempt = 1; ; attempt += 1) {
        await settle(page);
        await page.goto(inboxAddress).catch((error: Error) => {
          if (!/interrupted by another navigation/.test(error.message) || attempt >= 4) throw error;
        });
        await settle(page);
        const query = new URL(page.url()).searchParams;
        if (query.get("agent_inbox") === inboxId && !query.has("no_inboxes_found")) break;
        if (attempt >= 4)
          throw new Error(`expected the inbox's address to stay open, got ${page.url()}`);
      }
      await page.getByText("Memory Table").first().waitFor();
      await page.getByRole("button", { name: "Settings" }).click();
      const search = page.waitForResponse(
        (response) => response.url() === `${api.url}/threads/search`,
      );
      await page.locator("#langchain-api-key").fill(api.token);
      await page.keyboard.press("Escape");
      const answer = await search;
      if (answer.status() !== 200)
        throw new Error(`expected POST /threads/search 200, got ${answer.status()}`);
      if ((await answer.request().allHeaders())["x-api-key"] !== api.token) {
        throw new Error("expected the dev token as X-Api-Key on POST /threads/search");
      }
      return `5 interrupted threads made with the SDK; inbox added; POST /threads/search 200 with X-Api-Key`;
    });

    await step("list", async () => {
      for (const answer of THREADS) await page.getByText(address(answer)).first().waitFor();
      const listed = await api.client.threads.search({
        metadata: { graph_id: GRAPH_ID },
        status: "interrupted",
        limit: 100,
      });
      if (listed.length !== THREADS.length) {
        throw new Error(
          `expected ${THREADS.length} interrupted threads from the API, got ${listed.length}`,
        );
      }
      return "the 5 interrupted threads listed, as threads.search lists them";
    });

    await step("reload", async () => {
      await page.reload();
      await settle(page);
      for (const answer of THREADS) await page.getByText(address(answer)).first().waitFor();
      return "the inbox, its key and its threads are back after a reload";
    });

    await step("interrupt", async () => {
      const how = await openThread(page, "accept", threads, ui, inboxId);
      await page.getByText("Edit/Accept").waitFor();
      await page.getByRole("button", { name: "Accept", exact: true }).waitFor();
      await page.getByRole("button", { name: "Mark as Resolved" }).waitFor();
      const thread = await api.client.threads.get(threads.get("accept")!);
      const request = humanInterrupt(thread);
      if (thread.status !== "interrupted" || request?.action_request.action !== "send_email") {
        throw new Error(
          `expected the thread interrupted on send_email, got ${thread.status} ${JSON.stringify(request)}`,
        );
      }
      return `${how}; thread view: the draft's fields, Accept, Respond, Ignore, Mark as Resolved`;
    });

    await step("accept", async () => {
      const streamed = page.waitForResponse(
        (response) => response.url() === `${api.url}/threads/${threads.get("accept")}/runs/stream`,
      );
      await page.getByRole("button", { name: "Accept", exact: true }).click();
      const stream = await streamed;
      if (
        stream.status() !== 200 ||
        !(stream.headers()["content-type"] ?? "").startsWith("text/event-stream")
      ) {
        throw new Error(
          `expected the resume streamed (200, text/event-stream), got ${stream.status()}`,
        );
      }
      const values = await settled(api, threads.get("accept")!, "idle");
      expectSent(values, [{ to: address("accept"), subject: SUBJECT }]);
      await backInInbox(page);
      return `resumed with [accept] over runs/stream (events); thread idle, the draft sent as written`;
    });

    await step("edit", async () => {
      const how = await openThread(page, "edit", threads, ui, inboxId);
      const subject = await fieldWithValue(page, SUBJECT);
      await subject.fill(EDITED_SUBJECT);
      await page.getByRole("button", { name: "Submit", exact: true }).click();
      const values = await settled(api, threads.get("edit")!, "idle");
      expectSent(values, [{ to: address("edit"), subject: EDITED_SUBJECT }]);
      await backInInbox(page);
      return `${how}; resumed with [edit]; thread idle, the edited subject sent`;
    });

    await step("respond", async () => {
      const how = await openThread(page, "respond", threads, ui, inboxId);
      await page.getByPlaceholder("Your response here...").fill(FEEDBACK);
      await page.getByRole("button", { name: "Send Response" }).click();
      // The assistant revised its draft with the note and asks again: still interrupted, on a new draft.
      const thread = await eventually(
        async () => {
          const current = await api.client.threads.get(threads.get("respond")!);
          const body = String(humanInterrupt(current)?.action_request.args.body ?? "");
          return current.status === "interrupted" && body.includes(FEEDBACK) ? current : undefined;
        },
        () => "the thread interrupted again on a draft with the note",
        30_000,
      );
      expectSent(thread.values as unknown as Values, []);
      await page.getByText(FEEDBACK).first().waitFor();
      return `${how}; resumed with [response]; the assistant revised the draft and the thread waits again (nothing sent)`;
    });

    await step("ignore", async () => {
      const how = await openThread(page, "ignore", threads, ui, inboxId);
      await page.getByRole("button", { name: "Ignore", exact: true }).click();
      const values = await settled(api, threads.get("ignore")!, "idle");
      expectSent(values, []);
      const last = values.messages.at(-1);
      if (last?.type !== "tool" || !String(last.content).includes('"ignored"')) {
        throw new Error(`expected the review's result "ignored" last, got ${JSON.stringify(last)}`);
      }
      await backInInbox(page);
      return `${how}; resumed with [ignore]; thread idle, nothing sent`;
    });

    await step("resolve", async () => {
      const id = threads.get("resolve")!;
      const runsBefore = (await api.client.runs.list(id)).length;
      const how = await openThread(page, "resolve", threads, ui, inboxId);
      await page.getByRole("button", { name: "Mark as Resolved" }).click();
      const values = await settled(api, id, "idle");
      expectSent(values, []);
      const state = await api.client.threads.getState(id);
      if (state.next.length !== 0 || state.tasks.some((task) => task.interrupts.length > 0)) {
        throw new Error(`expected nothing pending, got next ${JSON.stringify(state.next)}`);
      }
      const runsAfter = (await api.client.runs.list(id)).length;
      if (runsAfter !== runsBefore)
        throw new Error(`expected no run, got ${runsAfter - runsBefore}`);
      await backInInbox(page);
      return `${how}; state updated as __end__ (no run); thread idle, no pending interrupt, nothing sent`;
    });
  } finally {
    await context.close();
  }
}

/** Waits until the page has not navigated for 2 s (the UI reloads itself after some actions), then for its network. */
async function settle(page: Page): Promise<void> {
  let navigations = 0;
  const count = () => (navigations += 1);
  page.on("framenavigated", count);
  try {
    const deadline = Date.now() + 30_000;
    let seen = -1;
    while (seen !== navigations && Date.now() < deadline) {
      seen = navigations;
      await new Promise((done) => setTimeout(done, 2_000));
    }
    await page.waitForLoadState("networkidle").catch(() => undefined);
  } finally {
    page.off("framenavigated", count);
  }
}

/**
 * Opens a thread as a click on its row does: the row's click sets `view_state_thread_id` in the query. On this
 * build the click is often undone by the UI's own query updates (it reloads its list on every query change and
 * its thread view goes back when the thread is not in the list yet), so after 3 s without the thread view the
 * address the click leads to is opened instead; the returned note says which happened.
 */
async function openThread(
  page: Page,
  answer: Answer,
  threads: Map<Answer, string>,
  ui: NextApp,
  inboxId: string,
): Promise<string> {
  const id = threads.get(answer)!;
  const opened = () => new URL(page.url()).searchParams.get("view_state_thread_id") === id;
  // From a thread view (after a response the UI stays on the revised draft) there is no row to click.
  const clicked = await page
    .locator("div.grid.cursor-pointer", { hasText: address(answer) })
    .first()
    .click({ timeout: 5_000 })
    .then(() => true)
    .catch(() => false);
  const deadline = Date.now() + 3_000;
  while (!opened() && Date.now() < deadline) await page.waitForTimeout(200);
  let how = "row clicked";
  if (!opened()) {
    how = clicked
      ? "opened by its address (the row click was undone by the UI)"
      : "opened by its address (no row to click from the thread view)";
    await page.goto(
      `${ui.url}/?agent_inbox=${inboxId}&inbox=interrupted&offset=0&limit=10&view_state_thread_id=${id}`,
    );
  }
  await page.getByRole("button", { name: "Mark as Resolved" }).waitFor({ timeout: 20_000 });
  return how;
}

/** After an answer the UI goes back to the inbox, where the thread is gone from the interrupted list. */
async function backInInbox(page: Page): Promise<void> {
  await eventually(
    async () =>
      new URL(page.url()).searchParams.get("view_state_thread_id") === null ? true : undefined,
    () => "the inbox again after the answer",
    30_000,
  );
}

/** The edit field holding `value` (the fields are the draft's arguments, as textareas). */
async function fieldWithValue(page: Page, value: string) {
  return eventually(
    async () => {
      const fields = page.locator("textarea");
      for (let index = 0; index < (await fields.count()); index += 1) {
        if ((await fields.nth(index).inputValue()) === value) return fields.nth(index);
      }
      return undefined;
    },
    () => `a field holding ${JSON.stringify(value)}`,
  );
}

async function settled(
  api: DevServer,
  threadId: string,
  status: Thread["status"],
): Promise<Values> {
  const thread = await eventually(
    async () => {
      const current = await api.client.threads.get(threadId);
      return current.status === status ? current : undefined;
    },
    () => `thread ${threadId} ${status}`,
    30_000,
  );
  return thread.values as unknown as Values;
}

function humanInterrupt(thread: Thread) {
  const value = Object.values(thread.interrupts ?? {})[0]?.[0]?.value as
    Array<{ action_request: { action: string; args: Record<string, unknown> } }> | undefined;
  return value?.[0];
}

function expectSent(values: Values, expected: Array<{ to: string; subject: string }>): void {
  const got = (values.sent_emails ?? []).map(({ to, subject }) => ({ to, subject }));
  if (JSON.stringify(got) !== JSON.stringify(expected)) {
    throw new Error(`expected sent emails ${JSON.stringify(expected)}, got ${JSON.stringify(got)}`);
  }
}
