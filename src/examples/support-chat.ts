import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import {
  AIMessage,
  AIMessageChunk,
  HumanMessage,
  ToolMessage,
  type BaseMessage,
} from "@langchain/core/messages";
import type { ChatGenerationChunk, ChatResult } from "@langchain/core/outputs";
import { tool } from "@langchain/core/tools";
import { FakeStreamingChatModel } from "@langchain/core/utils/testing";
import {
  END,
  interrupt,
  MessagesAnnotation,
  START,
  StateGraph,
  type LangGraphRunnableConfig,
} from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";

/**
 * The support chat assistant: a customer asks for a refund, the model streams a short answer and calls the
 * `book_refund` tool, the tool pauses for a supervisor (`interrupt()`), and the model streams its final answer
 * from the supervisor's decision. The model is LangChain's fake streaming chat model playing a script chosen from
 * the conversation, so token streaming and human-in-the-loop run deterministically, without an LLM. It is the
 * assistant the browser test drives through the official `useStream` React hook.
 */

/** What the supervisor is asked before a refund is booked (the interrupt's value). */
export interface RefundApprovalRequest {
  question: string;
  booking_id: string;
  reason: string;
}

/** What the supervisor answers (the resume value). */
export interface RefundDecision {
  approve?: boolean;
  note?: string;
}

/** What `book_refund` returns to the model, as the tool message's JSON content. */
export interface RefundOutcome {
  status: "approved" | "denied";
  booking_id: string;
  refund_reference?: string;
  note?: string;
}

export interface SupportChatGraphOptions {
  checkpointer?: BaseCheckpointSaver | false;
  /** Pause before each streamed chunk (a word, or the tool call), as a model's tokens arrive. Default 40 ms. */
  tokenDelayMs?: number;
  /** Called when an approved refund is booked: the side effect the supervisor's approval protects. */
  onRefund?: (outcome: RefundOutcome) => void | Promise<void>;
}

const DEFAULT_TOKEN_DELAY_MS = 40;
const REFUND_TOOL = "book_refund";
/** A booking reference as customers type it: two letters, a dash, digits ("BK-1042"). */
const BOOKING_REFERENCE = /\b([a-z]{2}-\d{3,})\b/i;

/**
 * LangChain's FakeStreamingChatModel plays its `chunks` back to back, and answers a call that is not streamed
 * from its first chunk only. This one waits before each chunk, so a client sees the answer grow, and answers an
 * unstreamed call with the whole message the stream builds, so the graph ends the same either way.
 */
export class PacedScriptModel extends FakeStreamingChatModel {
  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    for await (const chunk of super._streamResponseChunks(messages, options, runManager)) {
      if (this.sleep > 0) await new Promise((resolve) => setTimeout(resolve, this.sleep));
      yield chunk;
    }
  }

  override async _generate(): Promise<ChatResult> {
    const whole = this.chunks.reduce((message, chunk) => message.concat(chunk));
    const message = new AIMessage({ content: whole.content, tool_calls: whole.tool_calls });
    return { generations: [{ text: message.text, message }] };
  }
}

/** The model's reply to the conversation so far, as the chunks a streaming model would send. */
function scriptReply(messages: BaseMessage[]): AIMessageChunk[] {
  const last = messages.at(-1);
  if (last && ToolMessage.isInstance(last)) return words(finalAnswer(last));
  const request = last && HumanMessage.isInstance(last) ? last.text : "";
  const reference = BOOKING_REFERENCE.exec(request)?.[1]?.toUpperCase();
  if (!reference) {
    return words("Which booking should I refund? Please send its reference, for example BK-1042.");
  }
  const toolCall = {
    // Unique in the thread and the same on every replay of this step.
    id: `call_${REFUND_TOOL}_${messages.length}`,
    name: REFUND_TOOL,
    args: { booking_id: reference, reason: request },
    type: "tool_call" as const,
  };
  return [
    ...words(
      `I can help with booking ${reference}. Refunds need a supervisor's approval, so I am asking one now.`,
    ),
    new AIMessageChunk({ content: "", tool_calls: [toolCall] }),
  ];
}

function finalAnswer(result: ToolMessage): string {
  const outcome = readOutcome(result);
  if (!outcome) return `I could not request the refund: ${result.text}`;
  if (outcome.status === "approved") {
    return (
      `Good news: your refund for booking ${outcome.booking_id} is approved ` +
      `(reference ${outcome.refund_reference}). The money will be back on your card within 5 business days.`
    );
  }
  const note = outcome.note ? ` The supervisor noted: "${outcome.note}".` : "";
  return (
    `I am sorry: a supervisor declined the refund for booking ${outcome.booking_id}.${note} ` +
    "I can offer you a free change of date instead."
  );
}

/** The tool's outcome, or undefined when the tool failed (ToolNode turns a tool's error into an error message). */
function readOutcome(result: ToolMessage): RefundOutcome | undefined {
  if (result.status === "error") return undefined;
  try {
    return JSON.parse(result.text) as RefundOutcome;
  } catch {
    return undefined;
  }
}

/** One chunk per word (with its trailing space), as a model streams tokens. */
function words(text: string): AIMessageChunk[] {
  return (text.match(/\S+\s*/g) ?? []).map((word) => new AIMessageChunk({ content: word }));
}

export function buildSupportChatGraph(options: SupportChatGraphOptions = {}) {
  const tokenDelayMs = options.tokenDelayMs ?? DEFAULT_TOKEN_DELAY_MS;
  if (!Number.isFinite(tokenDelayMs) || tokenDelayMs < 0) {
    throw new Error(
      `Invalid tokenDelayMs: expected a non-negative number of milliseconds, got ${String(tokenDelayMs)}`,
    );
  }

  const bookRefund = tool(
    async ({ booking_id, reason }: { booking_id: string; reason: string }): Promise<string> => {
      // Execution stops here; a later run re-enters the tool and gets the supervisor's decision from this call.
      const decision = interrupt<RefundApprovalRequest, RefundDecision | undefined>({
        question: `Approve a refund for booking ${booking_id}?`,
        booking_id,
        reason,
      });
      const note = typeof decision?.note === "string" && decision.note ? decision.note : undefined;
      if (decision?.approve !== true) {
        return JSON.stringify({ status: "denied", booking_id, note } satisfies RefundOutcome);
      }
      const outcome: RefundOutcome = {
        status: "approved",
        booking_id,
        refund_reference: `RF-${booking_id}`,
        note,
      };
      await options.onRefund?.(outcome);
      return JSON.stringify(outcome);
    },
    {
      name: REFUND_TOOL,
      description: "Refund a booking. A supervisor approves every refund before it is booked.",
      schema: {
        type: "object",
        properties: {
          booking_id: { type: "string", description: "The booking reference, e.g. BK-1042" },
          reason: { type: "string", description: "Why the customer wants the refund" },
        },
        required: ["booking_id", "reason"],
      },
    },
  );

  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state, config: LangGraphRunnableConfig) => {
      // A new model per turn: its script depends on the conversation, never on an earlier call.
      const model = new PacedScriptModel({
        chunks: scriptReply(state.messages),
        sleep: tokenDelayMs,
      });
      return { messages: [await model.invoke(state.messages, config)] };
    })
    .addNode("tools", new ToolNode([bookRefund]))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer: options.checkpointer });
}
