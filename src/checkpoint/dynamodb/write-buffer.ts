interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: records submitted in the same turn of the event loop are planned into items together and go out
 * in one batch.
 *
 * LangGraph issues a checkpoint's `put` and its tasks' `putWrites` back to back without awaiting one another, so
 * the planner can store them as one item and a run pays for a fraction of the round trips and write units.
 * Every caller's promise settles only when its records are stored: nothing is acknowledged before it is durable.
 */
export class WriteBuffer<R, I> {
  private records: R[] = [];
  private waiters: Waiter[] = [];
  private scheduled = false;

  constructor(
    private readonly plan: (records: R[]) => I[],
    private readonly write: (items: I[]) => Promise<void>,
  ) {}

  submit(record: R): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.records.push(record);
      this.waiters.push({ resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    const records = this.records;
    const waiters = this.waiters;
    this.records = [];
    this.waiters = [];
    this.scheduled = false;
    try {
      await this.write(this.plan(records));
      for (const waiter of waiters) waiter.resolve();
    } catch (error) {
      for (const waiter of waiters) waiter.reject(error);
    }
  }
}
