import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";

/** The metadata key {@link ownerOnly} stamps the user's identity under. */
export const OWNER_METADATA_KEY = "owner";

/** Stamps the user as the owner on a value's metadata (an owner the client sent is overwritten). */
function stampOwner(value: { metadata?: Record<string, unknown> | null }, identity: string): void {
  value.metadata = { ...value.metadata, [OWNER_METADATA_KEY]: identity };
}

/**
 * The ready-made policy "each user sees only their own": threads (and their runs, state, history and streams)
 * and crons carry their creator as `metadata.owner` and are visible to that user only; store items live under a
 * namespace whose first label is the user (a search or listing without a namespace is the user's own); assistants
 * stay shared by the tenant's users, as the graphs are. The user is the credential's subject (the JWT's `sub`, an
 * API key's subject) unless an `authenticate` handler says otherwise. Turn it on with `AUTH_POLICY=owner-only`,
 * `auth: ownerOnly` in code, or `export { ownerOnly as auth } from "memory-table/runtime"` in the module
 * langgraph.json's `auth.path` names.
 */
export const ownerOnly: Auth = new Auth()
  .on("threads", ({ event, value, user }) => {
    if (
      event === "threads:create" ||
      event === "threads:update" ||
      event === "threads:create_run"
    ) {
      stampOwner(value as { metadata?: Record<string, unknown> | null }, user.identity);
    }
    return { [OWNER_METADATA_KEY]: user.identity };
  })
  .on("crons", ({ event, value, user }) => {
    if (event === "crons:create" || event === "crons:update") {
      stampOwner(value as { metadata?: Record<string, unknown> | null }, user.identity);
    }
    return { [OWNER_METADATA_KEY]: user.identity };
  })
  .on("store", ({ event, value, user }) => {
    const namespace = value.namespace ?? [];
    if (namespace.length === 0 && (event === "store:search" || event === "store:list_namespaces")) {
      // Everything the user may see lies under their own namespace.
      value.namespace = [user.identity];
      return;
    }
    if (namespace[0] !== user.identity) {
      throw new HTTPException(403, {
        message: `Forbidden: store namespaces of this user start with ${JSON.stringify(user.identity)}`,
      });
    }
  });
