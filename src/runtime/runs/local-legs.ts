import type { CancelAction } from "../../shared/runs";

// How long a cancel waits for a leg to start in this process (a claim and the leg's registration are
// milliseconds apart; the cancel is on the thread record too, which the leg's heartbeat reads).
const STOP_ON_START_MS = 30_000;

/**
 * The legs running in this process, by run id, so a cancel reaches them at once; and the cancels of runs that
 * took a thread but whose leg has not registered yet, so a cancel between a claim and the leg's start is not
 * lost until the next heartbeat.
 */
export class LocalLegs {
  private readonly active = new Map<string, AbortController>();
  private readonly stopOnStart = new Map<string, { action: CancelAction; at: number }>();
  private readonly expected = new Map<string, number>();

  constructor(private readonly now: () => number) {}

  /** Registers a leg starting here; its controller is aborted at once if a cancel came first. */
  start(runId: string): AbortController {
    const controller = new AbortController();
    this.active.set(runId, controller);
    const early = this.stopOnStart.get(runId);
    this.stopOnStart.delete(runId);
    if (early) controller.abort(early.action);
    return controller;
  }

  end(runId: string): void {
    this.active.delete(runId);
  }

  /**
   * Says a run is about to be claimed here (a job of this process took it from its own queue), until the
   * returned function is called.
   */
  expect(runId: string): () => void {
    this.expected.set(runId, (this.expected.get(runId) ?? 0) + 1);
    return () => {
      const left = (this.expected.get(runId) ?? 1) - 1;
      if (left > 0) this.expected.set(runId, left);
      else this.expected.delete(runId);
    };
  }

  /** True while a leg of the run runs, or is about to start, in this process (its end is announced here). */
  runsHere(runId: string): boolean {
    return this.active.has(runId) || this.expected.has(runId);
  }

  /**
   * Stops a run's leg if it runs here (now, or once it starts here). True when a leg runs here now; otherwise
   * the cancel waits a while for the leg to register (older waiting cancels are dropped).
   */
  stop(runId: string, action: CancelAction): boolean {
    const local = this.active.get(runId);
    if (local) {
      local.abort(action);
      return true;
    }
    this.stopOnStart.set(runId, { action, at: this.now() });
    for (const [id, { at }] of this.stopOnStart) {
      if (this.now() - at <= STOP_ON_START_MS) break;
      this.stopOnStart.delete(id);
    }
    return false;
  }
}
