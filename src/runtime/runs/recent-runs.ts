import type { RunRecord } from "../../shared/runs";

/** What a join needs of a run that ended: how it ended, and where its answer is. */
export interface EndedRun {
  runId: string;
  threadId: string;
  graphId: string;
  status: RunRecord["status"];
  error?: RunRecord["error"];
  /** Its thread was deleted with it: there is no state to read. */
  temporary: boolean;
}

export function endedRun(run: RunRecord): EndedRun {
  return {
    runId: run.runId,
    threadId: run.threadId,
    graphId: run.graphId,
    status: run.status,
    ...(run.error ? { error: run.error } : {}),
    temporary: run.kwargs.temporary === true,
  };
}

/** What this process remembers of a run that ended in it. */
export interface RecentRun {
  /** How the run ended (a temporary thread's run is gone from the store by then). */
  run?: EndedRun;
  /** Its final values, when its last leg ran here: a join answers them without reading the thread. */
  values?: Record<string, unknown>;
  /** The nodes its thread waits to run, when it paused at an interrupt here. */
  nextNodes?: string[];
}

/**
 * Runs that just ended in this process, for their joins: each for `ttlMs`, at most `maxRuns` of them, so a busy
 * long-running server holds a bounded amount. Every entry lives equally long, so the oldest is always first in
 * the Map: expiry and the cap both take from its front, with no timer per run. A join that finds nothing here
 * reads the store.
 */
export class RecentRuns {
  private readonly entries = new Map<string, RecentRun & { expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxRuns: number,
    private readonly now: () => number,
  ) {}

  get(runId: string): RecentRun | undefined {
    const entry = this.entries.get(runId);
    if (entry === undefined) return undefined;
    if (entry.expiresAt > this.now()) return entry;
    this.entries.delete(runId);
    return undefined;
  }

  /** Records what is known of the run now; an earlier record of it is kept where `recent` says nothing. */
  remember(runId: string, recent: RecentRun): void {
    const earlier = this.get(runId);
    // Re-inserted at the back: the entry's life starts again.
    this.entries.delete(runId);
    this.entries.set(runId, { ...earlier, ...recent, expiresAt: this.now() + this.ttlMs });
    this.prune();
  }

  get size(): number {
    return this.entries.size;
  }

  private prune(): void {
    const now = this.now();
    for (const [runId, entry] of this.entries) {
      if (this.entries.size <= this.maxRuns && entry.expiresAt > now) return;
      this.entries.delete(runId);
    }
  }
}
