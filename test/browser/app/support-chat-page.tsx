import type { Message } from "@langchain/langgraph-sdk";
import { useStream } from "@langchain/langgraph-sdk/react";
import { useState, type FormEvent } from "react";
import type { RefundApprovalRequest, RefundDecision } from "../../../src/examples/support-chat";

/** Where the page finds the API: the query names the server and the assistant, the fragment the token. */
export interface PageConfig {
  apiUrl: string;
  assistantId: string;
  token: string;
}

/**
 * `?apiUrl=…&assistantId=…#token=…`. The API defaults to the page's own origin. The bearer token travels in the
 * fragment, which the browser never sends to a server, so it stays out of request logs and Referer headers.
 */
export function readPageConfig(location: Location): PageConfig {
  const query = new URLSearchParams(location.search);
  const fragment = new URLSearchParams(location.hash.slice(1));
  return {
    apiUrl: query.get("apiUrl") ?? location.origin,
    assistantId: query.get("assistantId") ?? "support-chat",
    token: fragment.get("token") ?? "",
  };
}

type SupportChatState = { messages: Message[] };

function messageText(message: Message): string {
  if (typeof message.content === "string") return message.content;
  return message.content
    .map((part) => (part.type === "text" && "text" in part ? String(part.text) : ""))
    .join("");
}

export function SupportChatPage({ config }: { config: PageConfig }) {
  const [threadId, setThreadId] = useState<string | null>(null);
  const [draft, setDraft] = useState("");
  const stream = useStream<SupportChatState, { InterruptType: RefundApprovalRequest }>({
    apiUrl: config.apiUrl,
    assistantId: config.assistantId,
    // No API key: the bearer token is the only credential, as API Gateway's JWT authorizer expects.
    apiKey: null,
    defaultHeaders: { Authorization: `Bearer ${config.token}` },
    // A failed request shows at once instead of after retries.
    callerOptions: { maxRetries: 0 },
    threadId,
    onThreadId: setThreadId,
  });
  const approval = stream.interrupt?.value;

  function send(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const text = draft.trim();
    if (!text) return;
    setDraft("");
    const message: Message = { type: "human", content: text };
    void stream.submit(
      { messages: [message] },
      { optimisticValues: (previous) => ({ messages: [...(previous.messages ?? []), message] }) },
    );
  }

  function decide(decision: RefundDecision) {
    void stream.submit(undefined, { command: { resume: decision } });
  }

  return (
    <main
      data-testid="chat"
      data-loading={String(stream.isLoading)}
      data-thread-id={threadId ?? ""}
    >
      <h1>Support chat</h1>
      <p className="status" data-testid="status">
        {stream.isLoading ? "The assistant is answering…" : "Ready"}
        {threadId ? ` · thread ${threadId}` : ""}
      </p>
      <ol data-testid="messages">
        {stream.messages.map((message, index) => (
          <li key={message.id ?? index} data-testid="message" data-type={message.type}>
            <span className="role">{message.type === "human" ? "you" : message.type}</span>
            <p className="text" data-testid="message-text">
              {messageText(message)}
            </p>
            {message.type === "ai" &&
              message.tool_calls?.map((call) => (
                <p className="tool-call" data-testid="tool-call" key={call.id ?? call.name}>
                  Calling {call.name}({JSON.stringify(call.args)})
                </p>
              ))}
          </li>
        ))}
      </ol>
      {approval && !stream.isLoading && (
        <section className="approval" data-testid="approval" aria-label="Approval needed">
          <h2>Supervisor approval needed</h2>
          <p data-testid="approval-question">{approval.question}</p>
          <p>Customer&apos;s reason: {approval.reason}</p>
          <button type="button" onClick={() => decide({ approve: true })}>
            Approve
          </button>
          <button type="button" onClick={() => decide({ approve: false })}>
            Deny
          </button>
        </section>
      )}
      {stream.error != null && (
        <p className="error" role="alert" data-testid="error">
          {String(stream.error)}
        </p>
      )}
      <form onSubmit={send}>
        <input
          aria-label="Message"
          placeholder="Ask about a booking…"
          value={draft}
          onChange={(event) => setDraft(event.currentTarget.value)}
          disabled={stream.isLoading}
        />
        <button type="submit" disabled={stream.isLoading || !draft.trim()}>
          Send
        </button>
      </form>
    </main>
  );
}
