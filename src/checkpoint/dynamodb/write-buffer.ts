import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { batchWriteAll } from "./retry";

type Item = Record<string, unknown>;

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: items put in the same turn of the event loop go out in one BatchWriteItem.
 *
 * LangGraph issues a step's `putWrites` and the next `put` back to back without awaiting one another, so
 * coalescing them halves the round trips of a run. Every caller's promise settles only when its items are
 * stored, so nothing is acknowledged before it is durable.
 */
export class WriteBuffer {
  private items: Item[] = [];
  private waiters: Waiter[] = [];
  private scheduled = false;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  write(items: Item[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.items.push(...items);
      this.waiters.push({ resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    const items = this.items;
    const waiters = this.waiters;
    this.items = [];
    this.waiters = [];
    this.scheduled = false;
    try {
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
