import { AsyncLocalStorage } from "node:async_hooks";
import { jsonContains } from "../../shared/json-containment";
import {
  authorizeEvent,
  filterPattern,
  type AuthEvent,
  type AuthFilters,
  type AuthUser,
  type LangGraphAuth,
} from "./langgraph-auth";

/** What an `on` handler decided for one event: its filters and the value as it left it (metadata stamped). */
export interface AuthDecision<V extends Record<string, unknown>> {
  filters: AuthFilters | undefined;
  /** JSON containment pattern of the filters (what a store's metadata filter takes); undefined: no filter. */
  pattern: Record<string, unknown> | undefined;
  value: V;
}

/**
 * One request's user and its project's handlers. The stores' authorized views (threads, runs, assistants,
 * crons) find it through {@link currentAccess}: every route, and every later route such as `/mcp`, reads and
 * writes through them, so a filter applies wherever the data is read, not route by route. A handler runs once per
 * event and value in a request (a run's creation checks its thread twice: one handler call).
 */
export class RequestAccess {
  private readonly decided = new Map<string, Promise<AuthDecision<Record<string, unknown>>>>();
  /** Threads this request found passing an event's filters: a later check of the same reads nothing more. */
  private readonly passed = new Set<string>();

  constructor(
    private readonly auth: LangGraphAuth,
    readonly user: AuthUser,
  ) {}

  /** The handler's decision on `event` for `value` (a copy is given to it: the caller's value is never changed). */
  decide<V extends Record<string, unknown>>(event: AuthEvent, value: V): Promise<AuthDecision<V>> {
    const key = `${event}\u0000${JSON.stringify(value)}`;
    let decision = this.decided.get(key);
    if (!decision) {
      const copy = structuredClone(value);
      decision = authorizeEvent(this.auth, this.user, event, copy).then((filters) => ({
        filters,
        pattern: filters ? filterPattern(filters) : undefined,
        value: copy,
      }));
      // A refusal is not remembered: the next call asks again (and is refused again).
      decision.catch(() => this.decided.delete(key));
      this.decided.set(key, decision);
    }
    return decision as Promise<AuthDecision<V>>;
  }

  /** Records that thread `threadId` of `tenantId` passed `event`'s filters in this request. */
  notePassed(event: AuthEvent, tenantId: string, threadId: string): void {
    this.passed.add(`${event}\u0000${tenantId}\u0000${threadId}`);
  }

  /** Whether thread `threadId` passed `event`'s filters earlier in this request. */
  hasPassed(event: AuthEvent, tenantId: string, threadId: string): boolean {
    return this.passed.has(`${event}\u0000${tenantId}\u0000${threadId}`);
  }
}

/** Whether metadata passes/** Whether metadata passes a decision's filters. */
export function allows(
  decision: Pick<AuthDecision<Record<string, unknown>>, "pattern">,
  metadata: unknown,
): boolean {
  return decision.pattern === undefined || jsonContains(metadata ?? {}, decision.pattern);
}

const current = new AsyncLocalStorage<RequestAccess>();

/** The access of the request this code runs for; undefined outside a request (workers, cron sweeps, recovery). */
export function currentAccess(): RequestAccess | undefined {
  return current.getStore();
}

/** Runs `work` (and everything it starts) as `access`'s request. */
export function withAccess<T>(access: RequestAccess | undefined, work: () => T): T {
  return access ? current.run(access, work) : work();
}

/** `stream`, every step of it run as `access`'s request (a stream is consumed after its route returned). */
export function streamWithAccess<T>(
  access: RequestAccess | undefined,
  stream: AsyncIterable<T>,
): AsyncIterable<T> {
  if (!access) return stream;
  return {
    [Symbol.asyncIterator]() {
      const iterator = stream[Symbol.asyncIterator]();
      return {
        next: () => current.run(access, () => iterator.next()),
        return: (value?: unknown) =>
          current.run(access, () =>
            iterator.return
              ? iterator.return(value as T)
              : Promise.resolve({ done: true as const, value: value as T }),
          ),
      };
    },
  };
}

/**
 * Runs `work` outside any request's access: for what is the tenant's, whoever asks (a cron quota counts every
 * cron of the tenant, not only the user's).
 */
export function withoutAccess<T>(work: () => T): T {
  return current.exit(work);
}
