import type { AssistantStore } from "../../shared/assistants";
import type { CronStore } from "../../shared/crons";
import type { RunStore } from "../../shared/runs";
import type { ThreadStore } from "../../shared/threads";
import { AuthorizedCronStore } from "./authorized-crons";
import { AuthorizedRunStore } from "./authorized-runs";
import { AuthorizedThreadStore } from "./authorized-threads";
import { checkLangGraphAuth, type LangGraphAuth } from "./langgraph-auth";
import { ownerOnly } from "./owner-only";

/** Ready-made policies `AUTH_POLICY` names. */
export const AUTH_POLICIES = ["owner-only"] as const;
export type AuthPolicy = (typeof AUTH_POLICIES)[number];

/** The handler's auth: the option given in code wins over AUTH_POLICY; undefined when neither is set. */
export function resolveAuth(
  option: LangGraphAuth | undefined,
  policy: AuthPolicy | undefined,
): LangGraphAuth | undefined {
  if (option !== undefined) return checkLangGraphAuth(option, "auth");
  return policy === "owner-only" ? ownerOnly : undefined;
}

interface Stores {
  store: ThreadStore | undefined;
  runs: RunStore | undefined;
  assistantStore: AssistantStore | undefined;
  cronStore: CronStore | undefined;
}

/**
 * The stores every route, the run machinery and the cron sweep share, under the auth handlers when there are
 * any: each view applies them for requests (request-access.ts) and is the store itself for everything else.
 * Assistants are authorized by the assistant directory, which also serves the graphs' own assistants.
 */
export function authorizeStores<T extends Stores>(auth: LangGraphAuth | undefined, stores: T): T {
  if (!auth || !stores.store) return stores;
  const threads = new AuthorizedThreadStore(stores.store);
  return {
    ...stores,
    store: threads,
    runs: stores.runs && new AuthorizedRunStore(stores.runs, threads),
    cronStore: stores.cronStore && new AuthorizedCronStore(stores.cronStore),
  };
}
