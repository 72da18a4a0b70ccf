import { Command, MemorySaver } from "@langchain/langgraph";
import {
  buildEmailAssistantGraph,
  type EmailDraft,
  type ReviewShape,
} from "../../../src/examples/email-assistant";

const REQUEST = "Email ada@example.com that the launch moves to Friday";
const DRAFT: EmailDraft = {
  to: "ada@example.com",
  subject: "The launch moves to Friday",
  body: "Hello,\n\nThe launch moves to Friday.\n\nBest regards",
};

// The email assistant on LangGraph's MemorySaver: the review in each UI's shape and every answer each UI sends.
describe("the email assistant graph", () => {
  function setup(review: ReviewShape) {
    const sent: EmailDraft[] = [];
    const graph = buildEmailAssistantGraph({
      review,
      checkpointer: new MemorySaver(),
      tokenDelayMs: 0,
      onSend: (email) => void sent.push(email),
    });
    const config = { configurable: { thread_id: `email-${review}` } };
    const say = (text: string) =>
      graph.invoke({ messages: [{ role: "user", content: text }] }, config);
    const answer = (resume: unknown) => graph.invoke(new Command({ resume }), config);
    const pending = async () =>
      (await graph.getState(config)).tasks.flatMap((task) => task.interrupts);
    return { sent, say, answer, pending };
  }

  it("answers a message without an address, and ends", async () => {
    const { say, pending } = setup("agent-inbox");
    const done = await say("Hello");
    expect(done.messages.at(-1)?.text).toMatch(
      /^I draft emails and send them once you have reviewed them\./,
    );
    expect(await pending()).toEqual([]);
  });

  it("asks Agent Inbox with a HumanInterrupt and sends on accept", async () => {
    const { sent, say, answer, pending } = setup("agent-inbox");
    await say(REQUEST);
    const [paused] = await pending();
    expect(paused?.value).toEqual([
      {
        action_request: { action: "send_email", args: DRAFT },
        config: { allow_accept: true, allow_edit: true, allow_respond: true, allow_ignore: true },
        description: expect.stringContaining("**ada@example.com**"),
      },
    ]);
    expect(sent).toEqual([]);
    const done = await answer([{ type: "accept", args: null }]);
    expect(sent).toEqual([DRAFT]);
    expect(done.sent_emails).toEqual([DRAFT]);
    expect(done.messages.at(-1)?.text).toBe(
      'Sent to ada@example.com: "The launch moves to Friday".',
    );
  });

  it("sends Agent Inbox's edit, revises on a response, and sends nothing when ignored", async () => {
    const edited = setup("agent-inbox");
    await edited.say(REQUEST);
    await edited.answer([
      { type: "edit", args: { action: "send_email", args: { ...DRAFT, subject: "New" } } },
    ]);
    expect(edited.sent).toEqual([{ ...DRAFT, subject: "New" }]);

    const responded = setup("agent-inbox");
    await responded.say(REQUEST);
    await responded.answer([{ type: "response", args: "mention the venue" }]);
    const [again] = await responded.pending();
    const revised = (again?.value as Array<{ action_request: { args: EmailDraft } }>)[0]!
      .action_request.args;
    expect(revised.body).toBe(
      "Hello,\n\nThe launch moves to Friday.\n\nMention the venue.\n\nBest regards",
    );
    expect(responded.sent).toEqual([]);

    const ignored = setup("agent-inbox");
    await ignored.say(REQUEST);
    const done = await ignored.answer([{ type: "ignore", args: null }]);
    expect(ignored.sent).toEqual([]);
    expect(await ignored.pending()).toEqual([]);
    expect(done.messages.at(-1)?.text).toBe('{"status":"ignored"}');
  });

  it("asks Agent Chat UI with LangChain's human-in-the-loop request and takes its decisions", async () => {
    const { sent, say, answer, pending } = setup("hitl-middleware");
    await say(REQUEST);
    const [paused] = await pending();
    expect(paused?.value).toEqual({
      action_requests: [{ name: "send_email", args: DRAFT, description: expect.any(String) }],
      review_configs: [
        { action_name: "send_email", allowed_decisions: ["approve", "edit", "reject"] },
      ],
    });
    await answer({ decisions: [{ type: "reject", message: "mention the venue" }] });
    expect(await pending()).toHaveLength(1);
    await answer({ decisions: [{ type: "approve" }] });
    expect(sent).toEqual([{ ...DRAFT, body: expect.stringContaining("Mention the venue.") }]);
  });

  it("refuses an answer of neither shape, and an edit that is not an email, naming what it expected", async () => {
    const wrongShape = setup("agent-inbox");
    await wrongShape.say(REQUEST);
    await expect(wrongShape.answer({ approve: true })).rejects.toThrow(
      /Invalid review answer: expected \[\{ type: "accept" \| "edit" \| "response" \| "ignore", args \}\]/,
    );
    const badEdit = setup("hitl-middleware");
    await badEdit.say(REQUEST);
    await expect(
      badEdit.answer({
        decisions: [
          { type: "edit", edited_action: { name: "send_email", args: { to: "nobody" } } },
        ],
      }),
    ).rejects.toThrow(
      /Invalid email: expected \{ to: an address, subject: string, body: string \}/,
    );
    expect([...wrongShape.sent, ...badEdit.sent]).toEqual([]);
  });
});
