import fc from "fast-check";
import type { CancelAction, MultitaskStrategy } from "../../src/shared/runs";

/**
 * The reference model of the run machinery at the runtime level (test/runtime/run-machinery-model.test.ts): one
 * thread, background runs of a three-node graph whose nodes append `<label>:1`, `<label>:2`, `<label>:3` to a
 * list, a node that may be held (it waits on a latch the test opens), cancels and state updates. The test waits
 * between commands until the runtime is quiet (every run held, queued or ended), so each command meets a state
 * the model knows exactly.
 */

export type HoldStep = 0 | 1 | 2 | 3;
export type ModelRunStatus = "pending" | "held" | "success" | "interrupted" | "rolledBack";

export interface ModelRun {
  label: string;
  /** The step whose node waits on the run's latch (0: none). */
  hold: HoldStep;
  released: boolean;
  status: ModelRunStatus;
  /** Steps it appended to the list so far. */
  steps: number;
}

export const STEPS = [1, 2, 3] as const;

export function stepsOf(label: string, count: number): string[] {
  return STEPS.slice(0, count).map((step) => `${label}:${step}`);
}

export class RunMachineryModel {
  readonly runs: ModelRun[] = [];
  readonly markers: string[] = [];
  list: string[] = [];
  private queue: ModelRun[] = [];
  private current: ModelRun | undefined;

  busy(): boolean {
    return this.current !== undefined || this.queue.length > 0;
  }

  /** A run's creation: false when refused (`reject` on a busy thread). */
  create(label: string, hold: HoldStep, strategy: MultitaskStrategy): boolean {
    if (strategy === "reject" && this.busy()) return false;
    if (strategy === "interrupt" || strategy === "rollback") {
      for (const queued of this.queue) this.stop(queued, strategy);
      this.queue = [];
      if (this.current) this.stop(this.current, strategy);
      this.current = undefined;
    }
    const run: ModelRun = { label, hold, released: false, status: "pending", steps: 0 };
    this.runs.push(run);
    this.queue.push(run);
    this.advance();
    return true;
  }

  release(run: ModelRun): void {
    run.released = true;
    if (run === this.current) {
      this.current = undefined;
      this.finish(run);
      this.advance();
    }
  }

  cancel(run: ModelRun, action: CancelAction): void {
    if (run === this.current) {
      this.current = undefined;
    } else if (this.queue.includes(run)) {
      this.queue = this.queue.filter((queued) => queued !== run);
    } else {
      return;
    }
    this.stop(run, action);
    this.advance();
  }

  /** A state update the runtime accepted (it should only while no run holds or waits for the thread). */
  acknowledge(marker: string): void {
    this.markers.push(marker);
    this.list.push(marker);
  }

  /** Everything released: the state once every run has ended. */
  releaseAll(): void {
    for (const run of this.runs) run.released = true;
    if (this.current) this.release(this.current);
  }

  private stop(run: ModelRun, action: CancelAction): void {
    if (action === "rollback") {
      const own = new Set(stepsOf(run.label, run.steps));
      this.list = this.list.filter((item) => !own.has(item));
      run.steps = 0;
      run.status = "rolledBack";
    } else {
      run.status = "interrupted";
    }
  }

  /** Starts the queue's head while the thread is free: it runs until its held node, or to its end. */
  private advance(): void {
    while (this.current === undefined) {
      const head = this.queue.shift();
      if (!head) return;
      if (head.hold > 0 && !head.released) {
        head.steps = head.hold - 1;
        this.list.push(...stepsOf(head.label, head.steps));
        head.status = "held";
        this.current = head;
        return;
      }
      this.finish(head);
    }
  }

  private finish(run: ModelRun): void {
    this.list.push(...STEPS.slice(run.steps).map((step) => `${run.label}:${step}`));
    run.steps = 3;
    run.status = "success";
  }
}

// ------------------------------------------------------------------ schedules

export type Command =
  | { kind: "create"; strategy: MultitaskStrategy; hold: HoldStep }
  | { kind: "release"; pick: number }
  | { kind: "cancel"; pick: number; action: CancelAction; wait: boolean }
  | { kind: "update" }
  | { kind: "read"; what: "state" | "history" | "runs" | "thread" }
  | { kind: "join"; pick: number }
  /**
   * A run created through a second handler on the same table, whose DynamoDB client dies once `after` of its
   * requests got through (counted from that handler's first request): a process death, at a chosen request.
   */
  | { kind: "crash"; strategy: MultitaskStrategy; hold: HoldStep; after: number };

const strategyArb = fc.constantFrom<MultitaskStrategy>(
  "reject",
  "enqueue",
  "interrupt",
  "rollback",
);
const holdArb = fc.constantFrom<HoldStep>(0, 1, 2, 2, 3);
const pickArb = fc.nat({ max: 7 });

export function commandArb(withCrashes: boolean): fc.Arbitrary<Command> {
  const common: Array<fc.WeightedArbitrary<Command>> = [
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant("create" as const),
        strategy: strategyArb,
        hold: holdArb,
      }),
    },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant("release" as const), pick: pickArb }) },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant("cancel" as const),
        pick: pickArb,
        action: fc.constantFrom<CancelAction>("interrupt", "rollback"),
        wait: fc.boolean(),
      }),
    },
    { weight: 2, arbitrary: fc.constant({ kind: "update" as const }) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("read" as const),
        what: fc.constantFrom(
          "state" as const,
          "history" as const,
          "runs" as const,
          "thread" as const,
        ),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("join" as const), pick: pickArb }) },
  ];
  if (!withCrashes) return fc.oneof(...common);
  return fc.oneof(...common, {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("crash" as const),
      strategy: strategyArb,
      hold: holdArb,
      // Its first three requests create the run (thread, run record, queue); the rest are its leg's.
      after: fc.oneof(fc.nat({ max: 3 }), fc.integer({ min: 4, max: 20 })),
    }),
  });
}
