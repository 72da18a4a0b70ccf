import { randomBytes } from "node:crypto";
import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { THREAD_RECORD_SK, buildPk } from "./keys";
import { withThrottlingRetry } from "./retry";
import {
  THREAD_ATTRIBUTES,
  buildThreadTouch,
  emptyUpdate,
  renderUpdate,
  type UpdateFragment,
} from "./thread-record";

/** What a saver instance knows of a thread's record. */
export interface ThreadState {
  /** The generation every item of the thread's current life carries. */
  generation: string;
  /** Epoch seconds at which the whole thread expires. */
  ttl: number;
  /** Epoch milliseconds at which this instance last read or wrote the record. */
  confirmedAt: number;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Item = Record<string, any>;

// Renewal is coalesced: a record renewed less than this long ago is not written again (at most ttl/10).
const RENEWAL_SLACK_SECONDS = 60 * 60;
// How long this instance trusts what it last saw of a record: another process may delete the thread, and a
// write must not go out under a generation that no longer has a record. (The HTTP runtime's lease excludes
// that race; long-lived instances, such as a dev server, rely on this bound.)
const CONFIRMATION_MS = 10_000;

export interface ThreadLifecycleOptions {
  client: DynamoDBDocumentClient;
  tableName: string;
  tenantId: string;
  ttlSeconds: number;
  now: () => number;
  /** Removes every item of a thread (called before an expired thread starts a new life). */
  removeThread: (threadId: string) => Promise<void>;
}

/**
 * The life of a thread as one saver instance sees it: creating and renewing its record (expiry and generation),
 * and telling live threads from missing or expired ones. Threads expire whole, never item by item.
 */
export class ThreadLifecycle {
  private readonly known = new Map<string, ThreadState>();
  private readonly touches = new Map<string, Promise<ThreadState>>();

  constructor(private readonly options: ThreadLifecycleOptions) {}

  /** The runtime renewed the record itself (with its run lease): this instance need not renew it again. */
  noteRenewed(threadId: string, ttlEpochSeconds: number): void {
    const known = this.known.get(threadId);
    if (known) known.ttl = Math.max(known.ttl, ttlEpochSeconds);
  }

  forget(threadId: string): void {
    this.known.delete(threadId);
  }

  /** The thread's generation for a write, creating or renewing its record when needed. */
  async ensureWritable(threadId: string): Promise<ThreadState> {
    const known = this.trusted(threadId);
    const nowSeconds = Math.floor(this.options.now() / 1000);
    const slack = Math.min(RENEWAL_SLACK_SECONDS, Math.floor(this.options.ttlSeconds / 10));
    // Every write renews the expiry, coalesced: a record renewed within the slack is not written again.
    if (known && known.ttl - nowSeconds >= this.options.ttlSeconds - slack) return known;
    const inFlight = this.touches.get(threadId);
    if (inFlight) return inFlight;
    const touch = this.touch(threadId, emptyUpdate()).finally(() => this.touches.delete(threadId));
    this.touches.set(threadId, touch);
    return touch;
  }

  /**
   * One conditional UpdateItem on the thread record: create or renew it, plus `extra` clauses. On an expired
   * record the old thread is removed first, so nothing of it can come back under the renewed expiry.
   */
  async touch(threadId: string, extra: UpdateFragment): Promise<ThreadState> {
    const { client, tableName, tenantId, ttlSeconds } = this.options;
    const nowMs = this.options.now();
    const update = renderUpdate(
      buildThreadTouch({
        tenantId,
        threadId,
        nowMs,
        ttlSeconds,
        newGeneration: randomBytes(8).toString("hex"),
      }),
      extra,
    );
    const send = () =>
      withThrottlingRetry(() =>
        client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { pk: buildPk(tenantId, threadId), sk: THREAD_RECORD_SK },
            ...update,
            ConditionExpression: "attribute_not_exists(#ttl) OR #ttl > :now_seconds",
            ExpressionAttributeValues: {
              ...update.ExpressionAttributeValues,
              ":now_seconds": Math.floor(nowMs / 1000),
            },
            ReturnValues: "ALL_NEW",
          }),
        ),
      );
    let response;
    try {
      response = await send();
    } catch (error) {
      if (!(error instanceof Error) || error.name !== "ConditionalCheckFailedException") {
        throw error;
      }
      await this.options.removeThread(threadId);
      response = await send();
    }
    const state = this.remember(threadId, response.Attributes);
    if (!state) throw new Error("DynamoDB returned no thread record after an update");
    return state;
  }

  /** A live thread's state from a record read with other items, or undefined for a missing or expired one. */
  live(threadId: string, record: Item | undefined): ThreadState | undefined {
    const state = this.remember(threadId, record);
    if (!state || state.ttl <= Math.floor(this.options.now() / 1000)) return undefined;
    return state;
  }

  /** A live thread's state, from this instance's knowledge or one consistent read of the record. */
  async read(threadId: string): Promise<ThreadState | undefined> {
    // Expiry only moves forward while the record lives, so a recently confirmed live expiry is still live.
    const known = this.trusted(threadId);
    if (known && known.ttl > Math.floor(this.options.now() / 1000)) return known;
    const response = await withThrottlingRetry(() =>
      this.options.client.send(
        new GetCommand({
          TableName: this.options.tableName,
          Key: { pk: buildPk(this.options.tenantId, threadId), sk: THREAD_RECORD_SK },
          ConsistentRead: true,
        }),
      ),
    );
    return this.live(threadId, response.Item);
  }

  private trusted(threadId: string): ThreadState | undefined {
    const known = this.known.get(threadId);
    return known && this.options.now() - known.confirmedAt < CONFIRMATION_MS ? known : undefined;
  }

  private remember(threadId: string, record: Item | undefined): ThreadState | undefined {
    if (!record) {
      this.known.delete(threadId);
      return undefined;
    }
    const state: ThreadState = {
      generation: String(record[THREAD_ATTRIBUTES.generation]),
      ttl: Number(record[THREAD_ATTRIBUTES.ttl]),
      confirmedAt: this.options.now(),
    };
    this.known.set(threadId, state);
    return state;
  }
}
