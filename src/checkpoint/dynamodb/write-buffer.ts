import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { batchWriteAll } from "./retry";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Item = Record<string, any>;

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: records submitted in the same turn of the event loop are planned into items together and go out
 * in one BatchWriteItem.
 *
 * LangGraph issues a checkpoint's `put` and its tasks' `putWrites` back to back without awaiting one another, so
 * the planner can store them as one item and a run pays for a fraction of the round trips and write units.
 * Every caller's promise settles only when its records are stored: nothing is acknowledged before it is durable.
 */
export class WriteBuffer<R> {
  private records: R[] = [];
  private waiters: Waiter[] = [];
  private scheduled = false;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly plan: (records: R[]) => Item[],
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
      const items = this.plan(records);
      await batchWriteAll(
        this.client,
        this.tableName,
        items.map((Item) => ({ PutRequest: { Item } })),
      );
      for (const waiter of waiters) waiter.resolve();
    } catch (error) {
      for (const waiter of waiters) waiter.reject(error);
    }
  }
}
