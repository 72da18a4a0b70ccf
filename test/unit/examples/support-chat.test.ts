import { AIMessage, type AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { Command, INTERRUPT, isInterrupted, MemorySaver } from "@langchain/langgraph";
import {
  buildSupportChatGraph,
  type RefundApprovalRequest,
  type RefundOutcome,
} from "../../../src/examples/support-chat";

const REQUEST = "Please refund booking bk-1042, my flight was cancelled.";
const PREAMBLE =
  "I can help with booking BK-1042. Refunds need a supervisor's approval, so I am asking one now.";

function summary(messages: BaseMessage[]) {
  return messages.map((message) => ({ type: message.getType(), text: message.text }));
}

// The support chat example on LangGraph's MemorySaver: its scripted model, the tool's interrupt, and both answers.
describe("the support chat graph", () => {
  function setup() {
    const refunds: RefundOutcome[] = [];
    const graph = buildSupportChatGraph({
      checkpointer: new MemorySaver(),
      tokenDelayMs: 0,
      onRefund: (outcome) => void refunds.push(outcome),
    });
    const config = { configurable: { thread_id: "support-1" } };
    const ask = (text: string) =>
      graph.invoke({ messages: [{ role: "user", content: text }] }, config);
    return { graph, config, refunds, ask };
  }

  it("calls book_refund with the booking and pauses in the tool for a supervisor", async () => {
    const { graph, config, refunds, ask } = setup();
    const paused = await ask(REQUEST);

    const reply = paused.messages.at(-1) as AIMessage;
    expect(reply.text).toBe(PREAMBLE);
    expect(reply.tool_calls).toEqual([
      {
        id: "call_book_refund_1",
        name: "book_refund",
        args: { booking_id: "BK-1042", reason: REQUEST },
        type: "tool_call",
      },
    ]);
    if (!isInterrupted<RefundApprovalRequest>(paused)) throw new Error("the run did not pause");
    expect(paused[INTERRUPT]).toEqual([
      {
        id: expect.any(String),
        value: {
          question: "Approve a refund for booking BK-1042?",
          booking_id: "BK-1042",
          reason: REQUEST,
        } satisfies RefundApprovalRequest,
      },
    ]);
    const state = await graph.getState(config);
    expect(state.next).toEqual(["tools"]);
    expect(refunds).toEqual([]);
  });

  it("books the refund once when approved and answers with its reference", async () => {
    const { graph, config, refunds, ask } = setup();
    await ask(REQUEST);
    const done = await graph.invoke(new Command({ resume: { approve: true } }), config);

    expect(summary(done.messages)).toEqual([
      { type: "human", text: REQUEST },
      { type: "ai", text: PREAMBLE },
      {
        type: "tool",
        text: '{"status":"approved","booking_id":"BK-1042","refund_reference":"RF-BK-1042"}',
      },
      {
        type: "ai",
        text:
          "Good news: your refund for booking BK-1042 is approved (reference RF-BK-1042). " +
          "The money will be back on your card within 5 business days.",
      },
    ]);
    expect(refunds).toEqual([
      { status: "approved", booking_id: "BK-1042", refund_reference: "RF-BK-1042" },
    ]);
    const state = await graph.getState(config);
    expect(state.next).toEqual([]);
    expect(state.tasks).toEqual([]);
  });

  it("books nothing when denied and passes the supervisor's note on", async () => {
    const { graph, config, refunds, ask } = setup();
    await ask(REQUEST);
    const done = await graph.invoke(
      new Command({ resume: { approve: false, note: "the fare is non-refundable" } }),
      config,
    );

    expect(summary(done.messages).slice(2)).toEqual([
      {
        type: "tool",
        text: '{"status":"denied","booking_id":"BK-1042","note":"the fare is non-refundable"}',
      },
      {
        type: "ai",
        text:
          "I am sorry: a supervisor declined the refund for booking BK-1042. " +
          'The supervisor noted: "the fare is non-refundable". I can offer you a free change of date instead.',
      },
    ]);
    expect(refunds).toEqual([]);
  });

  it("takes an answer without approve: true as a denial", async () => {
    const { graph, config, refunds, ask } = setup();
    await ask(REQUEST);
    const done = await graph.invoke(new Command({ resume: "yes please" }), config);
    expect(JSON.parse(done.messages.at(-2)!.text)).toEqual({
      status: "denied",
      booking_id: "BK-1042",
    });
    expect(refunds).toEqual([]);
  });

  it("asks for the booking reference when the customer gives none, without calling the tool", async () => {
    const { graph, config, ask } = setup();
    const done = await ask("I want my money back");
    expect(summary(done.messages)).toEqual([
      { type: "human", text: "I want my money back" },
      {
        type: "ai",
        text: "Which booking should I refund? Please send its reference, for example BK-1042.",
      },
    ]);
    expect((done.messages.at(-1) as AIMessage).tool_calls).toEqual([]);
    expect(isInterrupted(done)).toBe(false);
    expect((await graph.getState(config)).next).toEqual([]);
  });

  it("answers with the tool's error when book_refund fails, without asking anyone", async () => {
    const { graph, config, refunds } = setup();
    // A model's malformed call (no reason): ToolNode hands the validation error back as an error message.
    await graph.updateState(
      config,
      {
        messages: [
          new AIMessage({
            content: "",
            tool_calls: [{ id: "call_bad", name: "book_refund", args: { booking_id: "BK-1" } }],
          }),
        ],
      },
      "agent",
    );
    const done = await graph.invoke(null, config);

    expect(isInterrupted(done)).toBe(false);
    const [result, answer] = done.messages.slice(-2);
    expect(result!.getType()).toBe("tool");
    expect(answer!.text).toBe(`I could not request the refund: ${result!.text}`);
    expect(answer!.text).toMatch(/did not match expected schema/);
    expect(refunds).toEqual([]);
  });

  it("streams the reply word by word, the tool call in its last chunk, all of one kept message", async () => {
    const { graph, config } = setup();
    const chunks: AIMessageChunk[] = [];
    for await (const [chunk, metadata] of await graph.stream(
      { messages: [{ role: "user", content: REQUEST }] },
      { ...config, streamMode: "messages" },
    )) {
      if ((metadata as { langgraph_node: string }).langgraph_node === "agent") {
        chunks.push(chunk as AIMessageChunk);
      }
    }
    expect(chunks.length).toBe(PREAMBLE.split(" ").length + 1);
    expect(chunks.map((chunk) => chunk.text).join("")).toBe(PREAMBLE);
    expect(chunks.slice(0, -1).every((chunk) => chunk.tool_call_chunks?.length === 0)).toBe(true);
    expect(chunks.at(-1)!.tool_calls?.map((call) => call.name)).toEqual(["book_refund"]);
    // Every chunk belongs to the one message the state keeps.
    const state = await graph.getState(config);
    const kept = state.values.messages.at(-1) as AIMessage;
    expect(new Set(chunks.map((chunk) => chunk.id))).toEqual(new Set([kept.id]));
    expect(kept.text).toBe(PREAMBLE);
    expect(kept.tool_calls?.[0]?.args).toEqual({ booking_id: "BK-1042", reason: REQUEST });
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY])("refuses tokenDelayMs %p", (tokenDelayMs) => {
    expect(() => buildSupportChatGraph({ tokenDelayMs })).toThrow(
      `Invalid tokenDelayMs: expected a non-negative number of milliseconds, got ${tokenDelayMs}`,
    );
  });
});
