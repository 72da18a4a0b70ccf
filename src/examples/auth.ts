import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";

/** The permission (a JWT `scope` entry) that lets a user see every thread of their tenant. */
export const THREADS_ADMIN_SCOPE = "threads:admin";

/**
 * An example of LangGraph auth handlers, to point langgraph.json's `auth.path` at (or export as `auth` from an
 * image's GRAPH_MODULE): each user owns the threads (with their runs) and crons they create and sees only those,
 * except users whose token carries the `threads:admin` scope, who see every thread of their tenant; store items
 * live under a namespace that starts with the user. Without an `authenticate` handler the user is the verified
 * credential's subject (the JWT's `sub`) and its permissions the JWT's `scope`; the tenant is never the handlers'
 * to decide.
 */
export const teamAuth: Auth = new Auth()
  .on(["threads", "crons"], ({ event, value, user, permissions }) => {
    const stamped = value as { metadata?: Record<string, unknown> | null };
    if (/:(create|create_run|update)$/.test(event)) {
      // An admin's change keeps the owner it finds; anyone else's makes the thread theirs.
      if (!permissions.includes(THREADS_ADMIN_SCOPE) || event.endsWith(":create")) {
        stamped.metadata = { ...stamped.metadata, owner: user.identity };
      }
    }
    if (permissions.includes(THREADS_ADMIN_SCOPE) && event.startsWith("threads:")) return;
    return { owner: user.identity };
  })
  .on("store", ({ value, user }) => {
    if (value.namespace?.[0] !== user.identity) {
      throw new HTTPException(403, { message: "Forbidden: use a namespace that starts with you" });
    }
  });
