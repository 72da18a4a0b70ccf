import { randomBytes } from "node:crypto";
import type { AttributeValue, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { buildPk, THREAD_RECORD_SK } from "../../checkpoint/dynamodb/keys";
import { batchGetAll, batchWriteAll } from "../../checkpoint/dynamodb/retry";
import {
  TABLE_KEYS,
  THREADS_BY_STATUS_INDEX,
  THREADS_BY_TENANT_INDEX,
} from "../../checkpoint/dynamodb/table-definition";
import {
  buildStatusUpdate,
  buildTenantStatus,
  buildThreadTouch,
  INBOX_STATUSES,
  renderUpdate,
  THREAD_ATTRIBUTES as A,
  THREAD_STATUSES,
  type ThreadStatus,
  type UpdateFragment,
} from "../../checkpoint/dynamodb/thread-record";
import {
  NothingToResumeError,
  ThreadBusyError,
  ThreadExistsError,
  ThreadExpiredError,
  ThreadNotFoundError,
  ThreadPausedError,
} from "../../shared/errors";
import {
  isLeased,
  resumeRejection,
  type AcquireLeaseInput,
  type CreateThreadInput,
  type LockForDeleteInput,
  type PendingInterrupt,
  type ReleaseLeaseInput,
  type SearchThreadsInput,
  type ThreadRecord,
  type ThreadStore,
} from "./types";

/** Default life of a thread after its last run: the saver's default (30 days). */
const DEFAULT_TTL_SECONDS = 30 * 24 * 60 * 60;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Item = Record<string, any>;

export interface DynamoDBThreadStoreOptions {
  client: DynamoDBClient | DynamoDBDocumentClient;
  tableName: string;
  /** Seconds a thread lives after its last run (default 30 days, like the saver). */
  ttlSeconds?: number;
}

/**
 * Thread records and run leases on the Memory Table table, next to the checkpoints (`sk = "m"`). Taking a lease
 * is one conditional UpdateItem that also creates or renews the record (the saver's own touch fragment) and
 * marks it RUNNING; releasing it is one UpdateItem that writes the outcome. The inbox is a Query on the
 * threads-by-status index, never a Scan.
 */
export class DynamoDBThreadStore implements ThreadStore {
  readonly ttlSeconds: number;
  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;

  constructor(options: DynamoDBThreadStoreOptions) {
    this.client =
      options.client instanceof DynamoDBDocumentClient
        ? options.client
        : DynamoDBDocumentClient.from(options.client, {
            marshallOptions: { removeUndefinedValues: true },
          });
    this.tableName = options.tableName;
    this.ttlSeconds = options.ttlSeconds ?? DEFAULT_TTL_SECONDS;
  }

  async get(tenantId: string, threadId: string): Promise<ThreadRecord | undefined> {
    const result = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: recordKey(tenantId, threadId),
        ConsistentRead: true,
      }),
    );
    return result.Item && !isExpired(result.Item, Date.now()) ? toRecord(result.Item) : undefined;
  }

  async create(input: CreateThreadInput): Promise<ThreadRecord> {
    const update = renderUpdate(this.touch(input.tenantId, input.threadId, input.now), {
      set: ["#metadata = :metadata"],
      remove: [],
      names: { "#metadata": A.metadata, "#pk": TABLE_KEYS.partitionKey },
      values: { ":metadata": JSON.stringify(input.metadata) },
    });
    try {
      const result = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: recordKey(input.tenantId, input.threadId),
          ...update,
          ConditionExpression: "attribute_not_exists(#pk)",
          ReturnValues: "ALL_NEW",
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
      );
      return toRecord(result.Attributes ?? {});
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const item = fromAttributeValues(error.Item);
      // An expired thread's items must go before its id is reused (the caller removes them and retries).
      if (isExpired(item, input.now)) throw new ThreadExpiredError(input.threadId);
      if (input.ifExists === "raise") throw new ThreadExistsError(input.threadId);
      return toRecord(item);
    }
  }

  async acquireLease(input: AcquireLeaseInput): Promise<ThreadRecord | undefined> {
    const update = renderUpdate(
      this.touch(input.tenantId, input.threadId, input.now),
      buildStatusUpdate(input.tenantId, "RUNNING"),
      {
        set: ["#owner = :owner", "#expires = :expires", "#assistant = :assistant"],
        remove: [],
        names: {
          "#owner": A.leaseOwner,
          "#expires": A.leaseExpiresAt,
          "#assistant": A.assistantId,
          "#pk": TABLE_KEYS.partitionKey,
        },
        values: {
          ":owner": input.owner,
          ":expires": input.expiresAt,
          ":assistant": input.assistantId,
          ":paused": "PAUSED_FOR_HUMAN",
          ":now_seconds": Math.floor(input.now / 1000),
        },
      },
    );
    // `:now` is the touch fragment's epoch-ms clock: a lease whose expiry passed is free.
    const conditions = [
      "(attribute_not_exists(#owner) OR #expires < :now)",
      // An expired record is a gone thread: never renew it (its old checkpoints would come back).
      "(attribute_not_exists(#ttl) OR #ttl > :now_seconds)",
    ];
    // DynamoDB rejects unused placeholders: drop the ones this mode's condition does not need.
    if (input.mode !== "start-or-create") conditions.push("attribute_exists(#pk)");
    else delete update.ExpressionAttributeNames["#pk"];
    if (input.mode === "resume") {
      conditions.push("#status = :paused", "#assistant = :assistant");
      // The record keeps the pending interrupts as JSON: each named id must appear there as an "id".
      if (input.resumeIds?.length) update.ExpressionAttributeNames["#interrupts"] = A.interrupts;
      (input.resumeIds ?? []).forEach((id, index) => {
        conditions.push(`contains(#interrupts, :resume_${index})`);
        update.ExpressionAttributeValues![`:resume_${index}`] = `"id":${JSON.stringify(id)}`;
      });
    } else if (input.rejectPaused) {
      conditions.push("(attribute_not_exists(#status) OR #status <> :paused)");
    } else delete update.ExpressionAttributeValues?.[":paused"];
    try {
      const result = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: recordKey(input.tenantId, input.threadId),
          ...update,
          ConditionExpression: conditions.join(" AND "),
          ReturnValues: "ALL_OLD",
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
      );
      const old = result.Attributes;
      return old && Object.keys(old).length > 0 ? toRecord(old) : undefined;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const item = fromAttributeValues(error.Item);
      const old = Object.keys(item).length > 0 ? toRecord(item) : undefined;
      if (!old) throw new ThreadNotFoundError(input.threadId);
      if (isExpired(item, input.now)) throw new ThreadExpiredError(input.threadId);
      if (isLeased(old, input.now)) throw new ThreadBusyError(input.threadId);
      if (input.mode !== "resume" && old.status === "PAUSED_FOR_HUMAN") {
        throw new ThreadPausedError(input.threadId);
      }
      throw (
        resumeRejection(old, input) ??
        new NothingToResumeError(input.threadId, "the thread is not paused at an interrupt")
      );
    }
  }

  async releaseLease(input: ReleaseLeaseInput): Promise<boolean> {
    const outcome: UpdateFragment =
      input.status === undefined
        ? {
            set: [],
            remove: ["#status", "#tenant_status", "#next_node"],
            names: {
              "#status": A.status,
              "#tenant_status": A.tenantStatus,
              "#next_node": A.nextNode,
            },
            values: {},
          }
        : buildStatusUpdate(input.tenantId, input.status, input.nextNodes.join(","));
    const restore: UpdateFragment =
      input.assistantId === undefined
        ? { set: [], remove: [], names: {}, values: {} }
        : {
            set: ["#assistant = :assistant"],
            remove: [],
            names: { "#assistant": A.assistantId },
            values: { ":assistant": input.assistantId },
          };
    const update = renderUpdate(outcome, restore, {
      set: ["#updated_at = :now", "#interrupts = :interrupts"],
      remove: input.keepLease ? [] : ["#owner", "#expires"],
      names: {
        "#updated_at": A.updatedAt,
        "#interrupts": A.interrupts,
        "#owner": A.leaseOwner,
        ...(input.keepLease ? {} : { "#expires": A.leaseExpiresAt }),
      },
      values: {
        ":now": input.now,
        ":interrupts": JSON.stringify(input.interrupts),
        ":owner": input.owner,
      },
    });
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: recordKey(input.tenantId, input.threadId),
          ...update,
          ConditionExpression: "#owner = :owner",
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /**
   * The inbox statuses are served by the sparse status index (records included). Other searches walk the
   * keys-only tenant index, newest thread first, and read the records by key, consistently.
   */
  async search(input: SearchThreadsInput): Promise<ThreadRecord[]> {
    const inbox = input.status !== undefined && INBOX_STATUSES.includes(input.status);
    const index = inbox ? THREADS_BY_STATUS_INDEX : THREADS_BY_TENANT_INDEX;
    const partition = inbox ? buildTenantStatus(input.tenantId, input.status!) : input.tenantId;
    const wanted = input.offset + input.limit;
    const now = Date.now();
    const found: ThreadRecord[] = [];
    let startKey: Item | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: index.name,
          KeyConditionExpression: "#partition = :partition",
          ExpressionAttributeNames: { "#partition": index.partitionKey },
          ExpressionAttributeValues: { ":partition": partition },
          ScanIndexForward: false,
          // A few extra for records that turn out expired (TTL deletion lags) or in another status.
          Limit: Math.min(wanted - found.length + 5, 100),
          ExclusiveStartKey: startKey,
        }),
      );
      const items = inbox ? (page.Items ?? []) : await this.readRecords(page.Items ?? []);
      for (const item of items) {
        if (isExpired(item, now)) continue;
        const record = toRecord(item);
        if (input.status === undefined || record.status === input.status) found.push(record);
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey && found.length < wanted);
    return found.slice(input.offset, wanted);
  }

  /** The records behind keys-only index entries, in the entries' order. */
  private async readRecords(keys: Item[]): Promise<Item[]> {
    if (keys.length === 0) return [];
    const records = await batchGetAll(
      this.client,
      this.tableName,
      keys.map((key) => ({ [TABLE_KEYS.partitionKey]: key.pk, [TABLE_KEYS.sortKey]: key.sk })),
    );
    const byPk = new Map(records.map((record) => [String(record.pk), record]));
    return keys.flatMap((key): Item[] => {
      const record = byPk.get(String(key.pk));
      return record ? [record] : [];
    });
  }

  async lockForDelete(input: LockForDeleteInput): Promise<ThreadRecord | undefined> {
    try {
      const result = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: recordKey(input.tenantId, input.threadId),
          UpdateExpression: "SET #owner = :owner, #expires = :expires",
          // Like a run's lease: only an existing, unexpired thread that no run holds.
          ConditionExpression:
            "attribute_exists(#pk) AND (attribute_not_exists(#owner) OR #expires < :now) AND (attribute_not_exists(#ttl) OR #ttl > :now_seconds)",
          ExpressionAttributeNames: {
            "#pk": TABLE_KEYS.partitionKey,
            "#owner": A.leaseOwner,
            "#expires": A.leaseExpiresAt,
            "#ttl": A.ttl,
          },
          ExpressionAttributeValues: {
            ":owner": input.owner,
            ":expires": input.expiresAt,
            ":now": input.now,
            ":now_seconds": Math.floor(input.now / 1000),
          },
          ReturnValues: "ALL_OLD",
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
      );
      return toRecord(result.Attributes ?? {});
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const item = fromAttributeValues(error.Item);
      if (Object.keys(item).length === 0 || isExpired(item, input.now)) return undefined;
      throw new ThreadBusyError(input.threadId);
    }
  }

  async delete(tenantId: string, threadId: string, owner: string): Promise<void> {
    // Usually gone already with the saver's partition. The module grants no DeleteItem, so no conditional
    // delete: the record is removed only while this deletion still holds its lease (a consistent read first).
    const result = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: recordKey(tenantId, threadId),
        ConsistentRead: true,
      }),
    );
    if (result.Item?.[A.leaseOwner] !== owner) return;
    await batchWriteAll(this.client, this.tableName, [
      { DeleteRequest: { Key: recordKey(tenantId, threadId) } },
    ]);
  }

  private touch(tenantId: string, threadId: string, nowMs: number): UpdateFragment {
    return buildThreadTouch({
      tenantId,
      threadId,
      nowMs,
      ttlSeconds: this.ttlSeconds,
      newGeneration: randomBytes(8).toString("hex"),
    });
  }
}

function recordKey(tenantId: string, threadId: string): Item {
  return {
    [TABLE_KEYS.partitionKey]: buildPk(tenantId, threadId),
    [TABLE_KEYS.sortKey]: THREAD_RECORD_SK,
  };
}

function isConditionFailure(
  error: unknown,
): error is Error & { Item?: Record<string, AttributeValue> } {
  return error instanceof Error && error.name === "ConditionalCheckFailedException";
}

/** The record's attributes are strings and numbers only: enough to read `ReturnValuesOnConditionCheckFailure`. */
function fromAttributeValues(item: Record<string, AttributeValue> | undefined): Item {
  const plain: Item = {};
  for (const [name, value] of Object.entries(item ?? {})) {
    if (value.S !== undefined) plain[name] = value.S;
    else if (value.N !== undefined) plain[name] = Number(value.N);
  }
  return plain;
}

function isExpired(item: Item, now: number): boolean {
  const ttl = item[A.ttl] as number | undefined;
  return typeof ttl === "number" && ttl * 1000 <= now;
}

function toRecord(item: Item): ThreadRecord {
  const status = item[A.status] as string | undefined;
  const next = item[A.nextNode] as string | undefined;
  return {
    threadId: String(item[A.threadId] ?? ""),
    status: (THREAD_STATUSES as readonly string[]).includes(status ?? "")
      ? (status as ThreadStatus)
      : undefined,
    nextNodes: next ? next.split(",") : [],
    interrupts: parseJson<PendingInterrupt[]>(item[A.interrupts], []),
    metadata: parseJson<Record<string, unknown>>(item[A.metadata], {}),
    assistantId: item[A.assistantId] as string | undefined,
    createdAt: Number(item[A.createdAt] ?? 0),
    updatedAt: Number(item[A.updatedAt] ?? 0),
    leaseOwner: item[A.leaseOwner] as string | undefined,
    leaseExpiresAt:
      item[A.leaseExpiresAt] === undefined ? undefined : Number(item[A.leaseExpiresAt]),
  };
}

function parseJson<T>(text: unknown, fallback: T): T {
  if (typeof text !== "string") return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}
