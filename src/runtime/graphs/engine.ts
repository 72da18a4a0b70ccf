import { lockOwner } from "../../shared/run-rules";
import { randomUUID } from "node:crypto";
import type { BaseStore } from "@langchain/langgraph-checkpoint";
import { runGraphLeg } from "./graph-leg";
import type { Logger } from "pino";
import {
  CheckpointerRequiredError,
  RunBudgetExhaustedError,
  ThreadExpiredError,
  ThreadNotFoundError,
} from "../../shared/errors";
import { supportsCheckpointRollback } from "../../shared/checkpoint-rollback";
import { scopeThreadId } from "../../shared/tenant-scope";
import type {
  PendingInterrupt,
  ReleaseLeaseInput,
  ThreadRecord,
  ThreadStore,
} from "../../shared/threads";
import type { GraphRegistry } from "./graph-registry";
import type { RequestScope } from "./scoped-checkpointer";
import type { AnySaver, HandlerGraph } from "../types";

/** A run without a thread the caller asked for: a start (with input). A resume needs a checkpointer. */
export interface RunRequest {
  tenantId: string;
  threadId: string;
  assistantId: string;
  kind: "start" | "resume";
  input?: unknown;
  /** Milliseconds until the Lambda deadline. */
  remainingMs: number;
}

export type RunOutcome =
  | {
      kind: "paused";
      values: Record<string, unknown>;
      interrupts: PendingInterrupt[];
      nextNodes: string[];
    }
  | { kind: "completed"; values: Record<string, unknown> }
  | { kind: "failed"; errorName: string; message: string; errorId: string }
  | { kind: "deadline" };

/** A request's saver; `bound` when it scopes keys by the request's tenant itself. */
export interface TenantSaver {
  saver: AnySaver;
  bound: boolean;
}

/** One tenant's view of the engine for one request: its saver and how its thread ids map to the saver's. */
export interface TenantScope {
  tenantId: string;
  saver: AnySaver | undefined;
  /** The thread id the saver sees: the client's own when the saver is bound to the tenant, else tenant-prefixed. */
  saverThreadId(threadId: string): string;
  /**
   * The saver's rollback (CheckpointRollback) on the client's thread id, scoped like every other saver call;
   * undefined when the saver has none.
   */
  deleteCheckpointsAfter:
    ((threadId: string, checkpointId: string | undefined) => Promise<void>) | undefined;
}

export interface EngineOptions {
  registry: GraphRegistry;
  /** Routes the graphs' checkpointer to the request's saver; undefined when stateless. */
  scope: RequestScope | undefined;
  store: ThreadStore | undefined;
  /** The tenant's saver, and whether it is bound to that tenant (decided by configuration, not the instance). */
  saverFor: ((tenantId: string) => TenantSaver) | undefined;
  /** The tenant's long-term memory store (checked to be that tenant's); undefined when the handler has none. */
  storeFor: ((tenantId: string) => BaseStore) | undefined;
  deadlineMarginMs: number;
  durability: "sync" | "async" | "exit" | undefined;
  logger: Logger;
}

/** The one engine behind both HTTP faces: leases, statuses, deadline and the graph run. */
export class RunEngine {
  constructor(private readonly options: EngineOptions) {}

  get stateful(): boolean {
    return this.options.store !== undefined;
  }

  tenant(tenantId: string): TenantScope {
    const resolved = this.options.saverFor?.(tenantId);
    const saver = resolved?.saver;
    // A saver bound to this tenant scopes keys itself; any other saver is shared, so the handler scopes ids.
    const bound = resolved?.bound === true;
    const saverThreadId = (threadId: string) =>
      bound ? threadId : scopeThreadId(tenantId, threadId);
    return {
      tenantId,
      saver,
      saverThreadId,
      deleteCheckpointsAfter: supportsCheckpointRollback(saver)
        ? (threadId, checkpointId) =>
            saver.deleteCheckpointsAfter(saverThreadId(threadId), checkpointId)
        : undefined,
    };
  }

  /**
   * Refuses the run's later checkpoint writes in this process and waits for those on their way (a rollback
   * deletes the run's checkpoints next). A no-op without a checkpointer.
   */
  async fenceRun(runId: string): Promise<void> {
    await this.options.scope?.fenceRun(runId);
  }

  store(what: string): ThreadStore {
    if (!this.options.store) throw new CheckpointerRequiredError(what);
    return this.options.store;
  }

  graph(assistantId: string, tenantId: string): Promise<HandlerGraph> {
    return this.options.registry.get(assistantId, tenantId);
  }

  /** The tenant's long-term memory store, or undefined when the handler has none (`store: false`). */
  tenantStore(tenantId: string): BaseStore | undefined {
    return this.options.storeFor?.(tenantId);
  }

  /**
   * Runs `work` with the tenant's saver behind the graphs' checkpointer and the tenant's store behind their
   * store (built when a graph first uses it); `checkpointMetadata` (a run's) is added to every checkpoint it
   * writes. `emptyThread` names a thread the work's run created and holds (ScopeExtras.emptyThread).
   */
  withSaver<T>(
    scope: TenantScope,
    work: () => Promise<T>,
    checkpointMetadata?: Record<string, unknown>,
    emptyThread?: string,
  ): Promise<T> {
    const storeFor = this.options.storeFor;
    if (!this.options.scope || (!scope.saver && !storeFor)) return work();
    return this.options.scope.run(scope.saver, work, {
      checkpointMetadata,
      ...(storeFor ? { store: () => storeFor(scope.tenantId) } : {}),
      ...(emptyThread !== undefined ? { emptyThread } : {}),
    });
  }

  /** A thread's record, or ThreadNotFoundError (also for another tenant's thread). */
  async requireThread(tenantId: string, threadId: string): Promise<ThreadRecord> {
    const record = await this.store("Reading a thread").get(tenantId, threadId);
    if (!record) throw new ThreadNotFoundError(threadId);
    return record;
  }

  /**
   * Runs a graph without a thread (a handler without a checkpointer keeps none): it completes, fails or stops at
   * the deadline; a graph that would pause or a resume needs a checkpointer. A run on a thread is a run of the run
   * machinery (runs/), whatever the face.
   */
  async run(request: RunRequest): Promise<RunOutcome> {
    const budgetMs = request.remainingMs - this.options.deadlineMarginMs;
    // Nothing ran yet: a "continue with input null" answer would be wrong (there may be no checkpoint).
    if (budgetMs <= 0) {
      throw new RunBudgetExhaustedError(request.remainingMs, this.options.deadlineMarginMs);
    }
    if (request.kind === "resume") throw new CheckpointerRequiredError("Resuming a run");
    const { graph, failure } = await this.buildGraph(request);
    if (!graph) return failure;
    const { outcome } = await this.execute(graph, this.tenant(request.tenantId), request, budgetMs);
    if (outcome.kind === "paused") throw new CheckpointerRequiredError("Pausing at an interrupt");
    return outcome;
  }

  /**
   * Deletes a thread: takes its lease first (a run in progress makes this a 409, and no run can start while the
   * items go), removes every checkpoint item through the saver, then the record. Throws ThreadNotFoundError.
   */
  async deleteThread(tenantId: string, threadId: string, remainingMs: number): Promise<void> {
    const store = this.store("Deleting a thread");
    const scope = this.tenant(tenantId);
    const { owner, previous } = await lockFor(store, tenantId, threadId, remainingMs, "delete");
    try {
      await scope.saver?.deleteThread(scope.saverThreadId(threadId));
    } catch (error) {
      // Nothing is lost: the thread stays as it was (less what was removed) and a second DELETE finishes it.
      await store
        .releaseLease({
          tenantId,
          threadId,
          owner,
          now: Date.now(),
          status: previous.status,
          nextNodes: previous.nextNodes,
          interrupts: previous.interrupts,
        })
        .catch(() => false);
      throw error;
    }
    await store.delete(tenantId, threadId, owner);
  }

  /**
   * Changes a thread outside a run (a state update, a copy being filled): locks it (ThreadBusyError while a run
   * holds or waits for it, ThreadNotFoundError when there is none), runs `change`, then frees it with the status
   * `change` returns, or exactly as it was when `change` throws.
   */
  async changeThread<T>(
    tenantId: string,
    threadId: string,
    remainingMs: number,
    change: (previous: ThreadRecord) => Promise<{ value: T; outcome?: ThreadChange }>,
  ): Promise<T> {
    const store = this.store("Changing a thread");
    const { owner, previous } = await lockFor(store, tenantId, threadId, remainingMs);
    const restore: ThreadChange = {
      status: previous.status,
      nextNodes: previous.nextNodes,
      interrupts: previous.interrupts,
      ...(previous.graphId !== undefined ? { graphId: previous.graphId } : {}),
    };
    let outcome = restore;
    try {
      const result = await change(previous);
      outcome = result.outcome ?? restore;
      return result.value;
    } finally {
      await store
        .releaseLease({ tenantId, threadId, owner, now: Date.now(), ...outcome })
        .catch((error: unknown) => {
          this.options.logger.error(
            { err: { name: (error as Error)?.name }, thread: threadId },
            "thread lock release failed; it lapses on its own",
          );
        });
    }
  }

  /**
   * Runs `write`; when it finds the thread expired but not yet removed by DynamoDB TTL and `replace` is set,
   * removes the old thread's items through the saver and writes once more, so the id starts a fresh thread.
   */
  async replacingExpired<T>(
    scope: TenantScope,
    threadId: string,
    replace: boolean,
    write: () => Promise<T>,
  ): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof ThreadExpiredError) || !replace || !scope.saver) throw error;
      await scope.saver.deleteThread(scope.saverThreadId(threadId));
      return write();
    }
  }

  /** The assistant's graph, or a failed outcome when its factory throws (a 5xx would make the SDK re-send). */
  async buildGraph(
    request: Pick<RunRequest, "assistantId" | "tenantId">,
  ): Promise<
    | { graph: HandlerGraph; failure?: never }
    | { graph?: never; failure: Extract<RunOutcome, { kind: "failed" }> }
  > {
    try {
      return { graph: await this.graph(request.assistantId, request.tenantId) };
    } catch (error) {
      return {
        failure: {
          kind: "failed",
          errorName: (error as Error)?.name ?? "Error",
          // The factory's message may name configuration: the caller logs the error id with the name only.
          message: `The graph of assistant ${request.assistantId} could not be built`,
          errorId: randomUUID(),
        },
      };
    }
  }

  private async execute(
    graph: HandlerGraph,
    scope: TenantScope,
    request: RunRequest,
    budgetMs: number,
  ): Promise<{ outcome: RunOutcome; nodesRunning: boolean }> {
    const { outcome, nodesRunning } = await runGraphLeg({
      graph,
      input: request.input,
      config: { configurable: { thread_id: scope.saverThreadId(request.threadId) } },
      budgetMs,
      withSaver: (work) => this.withSaver(scope, work),
      ...(this.options.durability ? { durability: this.options.durability } : {}),
    });
    if (outcome.kind === "cancelled") return { outcome: { kind: "deadline" }, nodesRunning };
    if (outcome.kind === "failed" && !scope.saver && /checkpointer/i.test(outcome.message)) {
      throw new CheckpointerRequiredError("Pausing at an interrupt");
    }
    return { outcome, nodesRunning };
  }
}

/** A thread's status after a change outside a run. */
export type ThreadChange = Pick<
  ReleaseLeaseInput,
  "status" | "nextNodes" | "interrupts" | "graphId"
>;

/** LangGraph's own rule: a plain object whose keys are all interrupt ids (32 hex digits) is a resume map. */
export function isResumeMap(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((key) => /^[0-9a-f]{32}$/.test(key));
}

/**
 * Takes a thread's lock for a change that is not a run (until `remainingMs` from now): the lock's owner and the
 * record as it was. ThreadBusyError while a run holds or waits for it, ThreadNotFoundError when there is none.
 */
async function lockFor(
  store: ThreadStore,
  tenantId: string,
  threadId: string,
  remainingMs: number,
  purpose: "update" | "delete" = "update",
): Promise<{ owner: string; previous: ThreadRecord }> {
  const owner = lockOwner();
  const now = Date.now();
  const previous = await store.lockThread({
    tenantId,
    threadId,
    owner,
    now,
    expiresAt: now + remainingMs,
    purpose,
  });
  if (!previous) throw new ThreadNotFoundError(threadId);
  return { owner, previous };
}
