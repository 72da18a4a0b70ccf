import { AsyncLocalStorage } from "node:async_hooks";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  type BaseStore,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import {
  supportsCheckpointRollback,
  type CheckpointRollback,
} from "../../shared/checkpoint-rollback";
import { supportsEmptyThreadHint } from "../../shared/empty-thread-hint";
import { CheckpointStoreError, MemoryTableError } from "../../shared/errors";
import { ScopedStore } from "./scoped-store";
import type { AnySaver } from "../types";

/**
 * The saver and the long-term store of the work in progress (both the caller's tenant's), and metadata its runs
 * add to every checkpoint they write.
 */
interface SaverScope {
  saver: AnySaver | undefined;
  /** The tenant's store, built on first use (most requests never touch it). */
  store: (() => BaseStore | undefined) | undefined;
  checkpointMetadata?: Record<string, unknown>;
  /** A thread (as the saver sees it) with no checkpoint yet: the work's first read of its latest is answered here. */
  emptyThread?: string;
}

/** What a piece of work runs with besides its saver. */
export interface ScopeExtras {
  /** The tenant's long-term store behind {@link RequestScope.store}, resolved when a graph first uses it. */
  store?: () => BaseStore | undefined;
  /** Added to every checkpoint the work writes (LangGraph's own metadata wins on a clash). */
  checkpointMetadata?: Record<string, unknown>;
  /**
   * A thread the work's run created and holds (as the saver sees it): it has no checkpoint, so the first read of
   * its latest one (LangGraph's, as the run starts) sends no request, where the saver supports EmptyThreadHint.
   */
  emptyThread?: string;
}

/**
 * A checkpointer that forwards every call to the saver of the request in progress. Graphs are compiled once
 * per container with it, while each request still gets its own saver (bound to its tenant). Methods are
 * forwarded explicitly (not through a Proxy): LangGraph calls them many times per step. A run's metadata (its
 * id, assistant, graph and the client's metadata) is added to each checkpoint it writes, so history can be
 * filtered by it.
 */
class ScopedCheckpointer
  extends BaseCheckpointSaver<string | number>
  implements CheckpointRollback
{
  constructor(
    private readonly storage: AsyncLocalStorage<SaverScope>,
    private readonly fences: RunFences,
  ) {
    super();
    // The base constructor stores `serde` as an own property; the current saver's serializer must win.
    Object.defineProperty(this, "serde", {
      get: (): SerializerProtocol => this.current().serde,
      configurable: true,
    });
  }

  private current(): AnySaver {
    return this.scope().saver;
  }

  private scope(): SaverScope & { saver: AnySaver } {
    const scope = this.storage.getStore();
    if (!scope?.saver) {
      throw new MemoryTableError(
        "The handler's checkpointer was used outside a request: use it only while the graph runs",
      );
    }
    return scope as SaverScope & { saver: AnySaver };
  }

  override get(config: RunnableConfig): Promise<Checkpoint | undefined> {
    return this.current().get(config);
  }

  override getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const scope = this.scope();
    const empty = scope.emptyThread;
    if (empty !== undefined) {
      // One read only: what the run writes afterwards is read from the saver like any.
      delete scope.emptyThread;
      if (readsLatestRoot(config, empty) && supportsEmptyThreadHint(scope.saver)) {
        scope.saver.assumeEmptyThread(empty);
        return Promise.resolve(undefined);
      }
    }
    return scope.saver.getTuple(config);
  }

  override list(
    config: RunnableConfig,
    options?: CheckpointListOptions,
  ): AsyncGenerator<CheckpointTuple> {
    return this.current().list(config, options);
  }

  override put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const scope = this.scope();
    const { saver, checkpointMetadata } = scope;
    delete scope.emptyThread;
    const stamped = checkpointMetadata ? { ...checkpointMetadata, ...metadata } : metadata;
    return this.fences.guard(runIdOf(checkpointMetadata), () =>
      saver.put(config, checkpoint, stamped, newVersions),
    );
  }

  override putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    const { saver, checkpointMetadata } = this.scope();
    return this.fences.guard(runIdOf(checkpointMetadata), () =>
      saver.putWrites(config, writes, taskId, taskPath),
    );
  }

  override deleteThread(threadId: string): Promise<void> {
    return this.current().deleteThread(threadId);
  }

  /** Forwards a rollback; the request's saver must have the capability (both Memory Table savers do). */
  deleteCheckpointsAfter(threadId: string, checkpointId: string | undefined): Promise<void> {
    const saver = this.current();
    if (!supportsCheckpointRollback(saver)) {
      return Promise.reject(
        new CheckpointStoreError(
          "Invalid checkpointer: expected a saver with deleteCheckpointsAfter (rollback), got one without",
        ),
      );
    }
    return saver.deleteCheckpointsAfter(threadId, checkpointId);
  }

  override getDeltaChannelHistory(
    options: Parameters<BaseCheckpointSaver["getDeltaChannelHistory"]>[0],
  ): ReturnType<BaseCheckpointSaver["getDeltaChannelHistory"]> {
    return this.current().getDeltaChannelHistory(options);
  }

  override getNextVersion(current: string | number | undefined): string | number {
    return this.current().getNextVersion(current);
  }
}

/**
 * Binds the graphs' shared checkpointer and store to one request's saver and tenant store for the duration of a
 * piece of work: one scope sets both, so a graph never sees one tenant's checkpoints with another's memories.
 */
export class RequestScope {
  private readonly storage = new AsyncLocalStorage<SaverScope>();
  private readonly fences = new RunFences();
  readonly checkpointer = new ScopedCheckpointer(
    this.storage,
    this.fences,
  ) as unknown as BaseCheckpointSaver & CheckpointRollback;
  readonly store: BaseStore = new ScopedStore(() => this.currentStore());

  /**
   * Runs `work` with `saver` as the target of {@link checkpointer} and `extras.store` as the target of
   * {@link store}; `extras.checkpointMetadata` is added to every checkpoint it writes.
   */
  run<T>(
    saver: AnySaver | undefined,
    work: () => Promise<T>,
    extras: ScopeExtras = {},
  ): Promise<T> {
    let resolved: { store: BaseStore | undefined } | undefined;
    const source = extras.store;
    // Resolved once per piece of work: every call of a run reaches the same store instance.
    const store = source && (() => (resolved ??= { store: source() }).store);
    return this.storage.run(
      {
        saver,
        store,
        checkpointMetadata: extras.checkpointMetadata,
        ...(extras.emptyThread !== undefined ? { emptyThread: extras.emptyThread } : {}),
      },
      work,
    );
  }

  /**
   * Refuses every later checkpoint write of a run (it is being rolled back) and resolves once those already on
   * their way have landed or failed: a node that ignored the run's abort can write nothing after the rollback
   * deleted the run's checkpoints.
   */
  fenceRun(runId: string): Promise<void> {
    return this.fences.fence(runId);
  }

  private currentStore(): BaseStore {
    const store = this.storage.getStore()?.store?.();
    if (!store) {
      throw new MemoryTableError(
        "The handler's store was used outside a request: use it only while the graph runs",
      );
    }
    return store;
  }
}

// Rolled-back runs remembered per process: their writes come only from nodes still running in this process.
const MAX_FENCED_RUNS = 10_000;

/** Runs whose checkpoint writes are refused (rolled back), and the writes of each run still on their way. */
class RunFences {
  private readonly fenced = new Set<string>();
  private readonly inFlight = new Map<string, Set<Promise<unknown>>>();

  guard<T>(runId: string | undefined, write: () => Promise<T>): Promise<T> {
    if (runId === undefined) return write();
    if (this.fenced.has(runId)) {
      return Promise.reject(
        new MemoryTableError(`Run ${runId} was rolled back: its checkpoint writes are refused`),
      );
    }
    const promise = write();
    const pending = this.inFlight.get(runId) ?? new Set<Promise<unknown>>();
    this.inFlight.set(runId, pending);
    pending.add(promise);
    const done = () => {
      pending.delete(promise);
      if (pending.size === 0 && this.inFlight.get(runId) === pending) this.inFlight.delete(runId);
    };
    promise.then(done, done);
    return promise;
  }

  async fence(runId: string): Promise<void> {
    this.fenced.add(runId);
    if (this.fenced.size > MAX_FENCED_RUNS) {
      const oldest = this.fenced.values().next().value;
      if (oldest !== undefined) this.fenced.delete(oldest);
    }
    await Promise.allSettled([...(this.inFlight.get(runId) ?? [])]);
  }
}

function runIdOf(metadata: Record<string, unknown> | undefined): string | undefined {
  const runId = metadata?.run_id;
  return typeof runId === "string" ? runId : undefined;
}

/** A read of the thread's latest root checkpoint (no checkpoint id, the root namespace). */
function readsLatestRoot(config: RunnableConfig, threadId: string): boolean {
  const configurable = config.configurable ?? {};
  return (
    configurable.thread_id === threadId &&
    !configurable.checkpoint_id &&
    (configurable.checkpoint_ns ?? "") === ""
  );
}
