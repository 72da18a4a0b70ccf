import { EventEmitter } from "node:events";
import { FINAL_RUN_STATUSES, type RunRecord, type RunStore } from "../../shared/runs";
import { endedRun, RecentRuns, type EndedRun } from "./recent-runs";

/** How long, and how many, ended runs this process remembers for their joins. */
const RECENT_RUN_TTL_MS = 60_000;
const MAX_RECENT_RUNS = 1_000;
/** The longest pause between two reads of a run a join waits for. */
const MAX_POLL_MS = 1_000;

/**
 * What a join found: the run ended (with its final values when its last leg ran in this process), or it is
 * still pending or running.
 */
export type JoinResult =
  | { done: true; run: EndedRun; values?: Record<string, unknown>; nextNodes?: string[] }
  | { done: false; run: RunRecord };

/**
 * Runs that ended in this process, kept briefly with their final values for joins, and the signal a waiting
 * join gets when one ends here. A join of a run that runs elsewhere polls the run store, less often over time.
 */
export class RunEndings {
  private readonly endings = new EventEmitter();
  private readonly recent: RecentRuns;

  constructor(private readonly now: () => number) {
    this.recent = new RecentRuns(RECENT_RUN_TTL_MS, MAX_RECENT_RUNS, now);
    this.endings.setMaxListeners(0);
  }

  /**
   * The final values of a run whose last leg ran here (its record follows when it ends), and the nodes its
   * thread waits to run when it paused.
   */
  keepValues(runId: string, values: Record<string, unknown>, nextNodes?: string[]): void {
    this.recent.remember(runId, nextNodes ? { values, nextNodes } : { values });
  }

  valuesOf(runId: string): Record<string, unknown> | undefined {
    return this.recent.get(runId)?.values;
  }

  /** A run ended here (with its record, unless it was deleted by a rollback): joins waiting for it wake. */
  ended(runId: string, run?: RunRecord): void {
    if (run) this.recent.remember(runId, { run: endedRun(run) });
    this.endings.emit(runId);
  }

  /** Waits until the run ends or `budgetMs` passes; undefined when there is no such run. */
  async join(
    runs: RunStore,
    tenantId: string,
    threadId: string,
    runId: string,
    budgetMs: number,
    known?: RunRecord,
    /** True while the run's leg runs in this process: its end wakes the join, polls are only a safety net. */
    runsHere: (runId: string) => boolean = () => false,
  ): Promise<JoinResult | undefined> {
    const deadline = this.now() + budgetMs;
    let delay = 50;
    let first = known;
    for (;;) {
      const recent = this.recent.get(runId);
      if (recent?.run) {
        const { values, nextNodes } = recent;
        return {
          done: true,
          run: recent.run,
          ...(values ? { values } : {}),
          ...(nextNodes ? { nextNodes } : {}),
        };
      }
      const run = first ?? (await runs.getRun(tenantId, threadId, runId));
      first = undefined;
      if (!run) return undefined;
      if (FINAL_RUN_STATUSES.includes(run.status)) {
        return recent?.values
          ? { done: true, run: endedRun(run), values: recent.values }
          : { done: true, run: endedRun(run) };
      }
      const left = deadline - this.now();
      if (left <= 0) return { done: false, run };
      // A leg in this process says when it ends (a poll only covers a leg that hands the run on elsewhere);
      // another process's leg is polled, less often over time.
      const local = runsHere(runId);
      await this.waitFor(runId, Math.min(local ? MAX_POLL_MS : delay, left));
      if (!local) delay = Math.min(delay * 2, MAX_POLL_MS);
    }
  }

  private waitFor(runId: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.endings.off(runId, done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.endings.once(runId, done);
    });
  }
}
