import { version as langgraphVersion } from "@langchain/langgraph/package.json";
import { MEMORY_TABLE_VERSION } from "../../shared/version";
import { json } from "./http";
import type { RouteHandler } from "./route-context";

/** Server information and health, as LangGraph Server answers them (Studio reads `/info` when it connects). */

export const ok: RouteHandler = async () => json(200, { ok: true });

export const info: RouteHandler = async (context) =>
  json(200, {
    version: MEMORY_TABLE_VERSION,
    langgraph_js_version: langgraphVersion,
    context: "js",
    flags: {
      assistants: true,
      // Crons need a checkpointer (their runs are background runs).
      crons: context.crons !== undefined,
      langsmith: langsmithTracing(process.env),
      langsmith_tracing_replicas: true,
    },
  });

/** `flags.langsmith` as LangGraph Server reports it: an API key, and no tracing variable set to "false". */
function langsmithTracing(env: NodeJS.ProcessEnv): boolean {
  if (!(env.LANGSMITH_API_KEY || env.LANGCHAIN_API_KEY)) return false;
  return ![
    env.LANGSMITH_TRACING,
    env.LANGSMITH_TRACING_V2,
    env.LANGCHAIN_TRACING,
    env.LANGCHAIN_TRACING_V2,
  ].some((value) => value?.toLowerCase() === "false");
}

export const META_HANDLERS: Readonly<Record<string, RouteHandler>> = {
  "GET /ok": ok,
  "GET /info": info,
};
