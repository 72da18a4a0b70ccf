import { Client } from "@langchain/langgraph-sdk";

/**
 * The official LangGraph SDK's client on a page, as a browser UI (Agent Chat UI, Agent Inbox) holds it; the
 * cross-origin browser test (test/browser/cross-origin-sdk.test.ts) drives it through `window.LangGraphClient`.
 */
(window as unknown as { LangGraphClient: typeof Client }).LangGraphClient = Client;
