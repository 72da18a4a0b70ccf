import {
  AIMessage,
  AIMessageChunk,
  HumanMessage,
  ToolMessage,
  type BaseMessage,
} from "@langchain/core/messages";
import {
  Annotation,
  Command,
  END,
  interrupt,
  MessagesAnnotation,
  START,
  StateGraph,
  type LangGraphRunnableConfig,
} from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { PacedScriptModel } from "./support-chat";

/**
 * The email assistant: a chat where the user asks for an email ("email ada@example.com that the launch moves to
 * Friday"); the model streams a short answer and drafts the email as a `send_email` tool call, and nothing is sent
 * before a human reviews the draft (`interrupt()`). The model is LangChain's fake streaming chat model playing a
 * script chosen from the conversation, so it runs without an LLM and the same way every time.
 *
 * The review speaks one of the two shapes LangGraph's UIs render:
 * - `"agent-inbox"`: Agent Inbox's `HumanInterrupt` (`action_request`, `config.allow_accept/edit/respond/ignore`,
 *   `description`), resumed with a list of one `HumanResponse` (`accept`, `edit`, `response`, `ignore`);
 * - `"hitl-middleware"`: LangChain's human-in-the-loop middleware request (`action_requests`, `review_configs`),
 *   which Agent Chat UI renders, resumed with `{ decisions: [approve | edit | reject] }`.
 * Accepting (or an edit) sends the email; a response (or a rejection with a message) goes back to the model, which
 * revises the draft and asks again; ignoring ends the run without sending.
 */

export const SEND_EMAIL = "send_email";

export interface EmailDraft {
  to: string;
  subject: string;
  body: string;
}

export type ReviewShape = "agent-inbox" | "hitl-middleware";

/** Agent Inbox's interrupt value (a list of one is what `interrupt()` gets). */
export interface HumanInterrupt {
  action_request: { action: string; args: Record<string, unknown> };
  config: {
    allow_accept: boolean;
    allow_edit: boolean;
    allow_respond: boolean;
    allow_ignore: boolean;
  };
  description?: string;
}

/** Agent Inbox's answer: `args` is the edited action for `edit`, the text for `response`. */
export interface HumanResponse {
  type: "accept" | "edit" | "response" | "ignore";
  args: null | string | { action: string; args: Record<string, unknown> };
}

/** LangChain's human-in-the-loop middleware request, as Agent Chat UI reads it. */
export interface HitlRequest {
  action_requests: Array<{ name: string; args: Record<string, unknown>; description?: string }>;
  review_configs: Array<{
    action_name: string;
    allowed_decisions: Array<"approve" | "edit" | "reject">;
  }>;
}

export type HitlDecision =
  | { type: "approve" }
  | { type: "edit"; edited_action: { name: string; args: Record<string, unknown> } }
  | { type: "reject"; message?: string };

export const EmailAssistantState = Annotation.Root({
  ...MessagesAnnotation.spec,
  /** Every email sent in this thread, in order. */
  sent_emails: Annotation<EmailDraft[]>({
    reducer: (sent, more) => sent.concat(more),
    default: () => [],
  }),
});

export interface EmailAssistantGraphOptions {
  review: ReviewShape;
  checkpointer?: BaseCheckpointSaver | false;
  /** Pause before each streamed chunk (a word, or the tool call), as a model's tokens arrive. Default 40 ms. */
  tokenDelayMs?: number;
  /** Called when a reviewed email is sent: the side effect the review protects. */
  onSend?: (email: EmailDraft) => void | Promise<void>;
}

/** What the reviewer decided, whichever UI said it. */
type Verdict = { send: EmailDraft } | { feedback: string } | { ignore: true };

const ADDRESS = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/;

export function buildEmailAssistantGraph(options: EmailAssistantGraphOptions) {
  const tokenDelayMs = options.tokenDelayMs ?? 40;
  if (!Number.isFinite(tokenDelayMs) || tokenDelayMs < 0) {
    throw new Error(
      `Invalid tokenDelayMs: expected a non-negative number of milliseconds, got ${String(tokenDelayMs)}`,
    );
  }
  if (options.review !== "agent-inbox" && options.review !== "hitl-middleware") {
    throw new Error(
      `Invalid review: expected "agent-inbox" or "hitl-middleware", got ${JSON.stringify(options.review)}`,
    );
  }
  const ask = options.review === "agent-inbox" ? askAgentInbox : askHitlMiddleware;

  return new StateGraph(EmailAssistantState)
    .addNode("agent", async (state, config: LangGraphRunnableConfig) => {
      // A new model per turn: its script depends on the conversation, never on an earlier call.
      const model = new PacedScriptModel({
        chunks: scriptReply(state.messages),
        sleep: tokenDelayMs,
      });
      return { messages: [await model.invoke(state.messages, config)] };
    })
    .addNode(
      "review",
      async (state) => {
        const call = pendingCall(state.messages);
        const draft = readDraft(call.args);
        // Execution stops here; a later run re-enters this node and gets the reviewer's answer.
        const verdict = ask(draft);
        if ("ignore" in verdict) {
          return new Command({
            goto: END,
            update: { messages: [toolResult(call.id, { status: "ignored" })] },
          });
        }
        if ("feedback" in verdict) {
          return new Command({
            goto: "agent",
            update: {
              messages: [toolResult(call.id, { status: "not_sent", feedback: verdict.feedback })],
            },
          });
        }
        await options.onSend?.(verdict.send);
        return new Command({
          goto: "agent",
          update: {
            messages: [toolResult(call.id, { status: "sent", ...verdict.send })],
            sent_emails: [verdict.send],
          },
        });
      },
      { ends: ["agent", END] },
    )
    .addEdge(START, "agent")
    .addConditionalEdges(
      "agent",
      (state) =>
        AIMessage.isInstance(state.messages.at(-1)) && pendingCallOrNone(state.messages)
          ? "review"
          : END,
      ["review", END],
    )
    .compile({ checkpointer: options.checkpointer });
}

function askAgentInbox(draft: EmailDraft): Verdict {
  const request: HumanInterrupt = {
    action_request: { action: SEND_EMAIL, args: { ...draft } },
    config: { allow_accept: true, allow_edit: true, allow_respond: true, allow_ignore: true },
    description: describe(draft),
  };
  const answer = interrupt<HumanInterrupt[], HumanResponse[] | HumanResponse>([request]);
  const response = Array.isArray(answer) ? answer[0] : answer;
  switch (response?.type) {
    case "accept":
      return { send: draft };
    case "edit":
      if (typeof response.args === "object" && response.args !== null) {
        return { send: readDraft({ ...draft, ...response.args.args }) };
      }
      break;
    case "response":
      if (typeof response.args === "string") return { feedback: response.args };
      break;
    case "ignore":
      return { ignore: true };
  }
  throw new Error(
    `Invalid review answer: expected [{ type: "accept" | "edit" | "response" | "ignore", args }], got ${JSON.stringify(answer)}`,
  );
}

function askHitlMiddleware(draft: EmailDraft): Verdict {
  const request: HitlRequest = {
    action_requests: [{ name: SEND_EMAIL, args: { ...draft }, description: describe(draft) }],
    review_configs: [{ action_name: SEND_EMAIL, allowed_decisions: ["approve", "edit", "reject"] }],
  };
  const answer = interrupt<HitlRequest, { decisions?: HitlDecision[] } | undefined>(request);
  const decision = answer?.decisions?.[0];
  switch (decision?.type) {
    case "approve":
      return { send: draft };
    case "edit":
      return { send: readDraft({ ...draft, ...decision.edited_action?.args }) };
    case "reject":
      return decision.message ? { feedback: decision.message } : { ignore: true };
  }
  throw new Error(
    `Invalid review answer: expected { decisions: [{ type: "approve" | "edit" | "reject" }] }, got ${JSON.stringify(answer)}`,
  );
}

function describe(draft: EmailDraft): string {
  return `Send this email to **${draft.to}**?\n\n**Subject:** ${draft.subject}\n\n${draft.body}`;
}

/** The model's reply to the conversation so far, as the chunks a streaming model would send. */
function scriptReply(messages: BaseMessage[]): AIMessageChunk[] {
  const last = messages.at(-1);
  if (last && ToolMessage.isInstance(last)) return afterReview(messages, last);
  const request = last && HumanMessage.isInstance(last) ? last.text : "";
  const to = ADDRESS.exec(request)?.[0];
  if (!to) {
    return words(
      "I draft emails and send them once you have reviewed them. Tell me who to write to and what to say, " +
        "for example: email ada@example.com that the launch moves to Friday.",
    );
  }
  const what = request
    .slice(request.indexOf(to) + to.length)
    .replace(/^[\s,:]*(that\s+)?/i, "")
    .trim();
  const sentence = sentenceCase(what || "I wanted to get in touch.");
  const draft: EmailDraft = {
    to,
    subject: sentence
      .replace(/[.!?]+$/, "")
      .split(/\s+/)
      .slice(0, 8)
      .join(" "),
    body: `Hello,\n\n${sentence}\n\nBest regards`,
  };
  return [
    ...words(`I drafted an email to ${to}. It waits for your review before it is sent.`),
    toolCall(draft, messages.length),
  ];
}

/** After the review: a confirmation, or a revised draft with the reviewer's note. */
function afterReview(messages: BaseMessage[], result: ToolMessage): AIMessageChunk[] {
  const outcome = JSON.parse(result.text) as {
    status: string;
    to?: string;
    subject?: string;
    feedback?: string;
  };
  if (outcome.status === "sent") return words(`Sent to ${outcome.to}: "${outcome.subject}".`);
  const previous = readDraft(pendingCall(messages.slice(0, -1)).args);
  const note = sentenceCase(outcome.feedback ?? "");
  const draft: EmailDraft = {
    ...previous,
    body: previous.body.replace(/\n\nBest regards$/, `\n\n${note}\n\nBest regards`),
  };
  return [
    ...words(
      `I revised the draft with your note: "${outcome.feedback}". It waits for your review again.`,
    ),
    toolCall(draft, messages.length),
  ];
}

function toolCall(draft: EmailDraft, position: number): AIMessageChunk {
  return new AIMessageChunk({
    content: "",
    // Unique in the thread and the same on every replay of this step.
    tool_calls: [
      {
        id: `call_${SEND_EMAIL}_${position}`,
        name: SEND_EMAIL,
        args: { ...draft },
        type: "tool_call",
      },
    ],
  });
}

function toolResult(toolCallId: string | undefined, content: Record<string, unknown>): ToolMessage {
  return new ToolMessage({
    tool_call_id: toolCallId ?? SEND_EMAIL,
    name: SEND_EMAIL,
    content: JSON.stringify(content),
  });
}

/** The last AI message's `send_email` call, which the review answers. */
function pendingCall(messages: BaseMessage[]) {
  const call = pendingCallOrNone(messages);
  if (!call) throw new Error(`expected the last AI message to call ${SEND_EMAIL}, found none`);
  return call;
}

function pendingCallOrNone(messages: BaseMessage[]) {
  const last = [...messages].reverse().find((message) => AIMessage.isInstance(message));
  return last && AIMessage.isInstance(last)
    ? last.tool_calls?.find((call) => call.name === SEND_EMAIL)
    : undefined;
}

/** A draft from a tool call's or an edit's arguments: three strings, else a clear error. */
function readDraft(args: Record<string, unknown>): EmailDraft {
  const { to, subject, body } = args;
  if (
    typeof to !== "string" ||
    typeof subject !== "string" ||
    typeof body !== "string" ||
    !ADDRESS.test(to)
  ) {
    throw new Error(
      `Invalid email: expected { to: an address, subject: string, body: string }, got ${JSON.stringify(args)}`,
    );
  }
  return { to, subject, body };
}

function sentenceCase(text: string): string {
  const trimmed = text.trim();
  if (!trimmed) return trimmed;
  const capital = trimmed[0]!.toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

/** One chunk per word (with its trailing space), as a model streams tokens. */
function words(text: string): AIMessageChunk[] {
  return (text.match(/\S+\s*/g) ?? []).map((word) => new AIMessageChunk({ content: word }));
}
