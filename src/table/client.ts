import { DynamoDBClient, type ConsumedCapacity } from "@aws-sdk/client-dynamodb";
import {
  BatchGetCommand,
  BatchWriteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  UpdateCommand,
  type QueryCommandInput,
  type QueryCommandOutput,
} from "@aws-sdk/lib-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { TableRequestError } from "../shared/errors";
import { TABLE_KEYS } from "./definition";
import { projection, type UpdateParameters } from "./expressions";
import { sleep } from "../shared/sleep";
import { backoffDelay, MAX_ATTEMPTS, withThrottlingRetry } from "./retry";
import { WriteRiders } from "./write-riders";

// Items are plain objects of the document client; each repository types the kinds it reads.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Item = Record<string, any>;
export type ItemKey = { [TABLE_KEYS.partitionKey]: string; [TABLE_KEYS.sortKey]: string };

export const BATCH_WRITE_LIMIT = 25;
/**
 * How long a write that may wait (TableClient.batchWriteSoon) waits for another batch write to ride with: long
 * enough for a leg's first checkpoint (after one Query and, on a resume, its first node), short enough that a
 * reader hardly sees the difference.
 */
export const RIDE_WAIT_MS = 50;
export const BATCH_GET_LIMIT = 100;

/** Requests sent and capacity units DynamoDB reported, in all and by operation. */
export interface CapacityUsage {
  requests: number;
  capacityUnits: number;
  byOperation: Record<string, { requests: number; capacityUnits: number }>;
}

export type WriteRequest = { PutRequest: { Item: Item } } | { DeleteRequest: { Key: ItemKey } };

/** What a conditional UpdateItem did: applied (with the attributes asked for), or refused (with the item as it was). */
export type UpdateOutcome =
  { applied: true; attributes: Item | undefined } | { applied: false; current: Item | undefined };

export interface UpdateOptions {
  /** Attributes to return when applied: the item before or after the update. */
  returnValues?: "ALL_OLD" | "ALL_NEW" | "NONE";
}

/** A table and the client that reaches it, with the counts of what was sent. */
export interface TableConnection {
  readonly documents: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly counters: CapacityUsage;
}

/** A connection to `tableName` through `client` (a plain client is wrapped in a document client). */
export function connectTable(
  client: DynamoDBClient | DynamoDBDocumentClient,
  tableName: string,
): TableConnection {
  return {
    documents:
      client instanceof DynamoDBDocumentClient
        ? client
        : DynamoDBDocumentClient.from(client, {
            marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false },
          }),
    tableName,
    counters: { requests: 0, capacityUnits: 0, byOperation: {} },
  };
}

/*
 * The one door to the table: every request goes through these functions, so retries of throttling and of
 * unprocessed batch entries, consumed-capacity accounting and the reading of a failed condition are written
 * once. They are functions, not only methods, so that code needing a few operations (the cleaner) reaches
 * exactly those: its IAM role is checked against what its code can send.
 */

/** One item, read consistently; `attributes` limits what is read. */
export async function getItem(
  connection: TableConnection,
  key: ItemKey,
  attributes?: readonly string[],
): Promise<Item | undefined> {
  const response = await send(connection, "GetItem", () =>
    connection.documents.send(
      new GetCommand({
        TableName: connection.tableName,
        Key: key,
        ConsistentRead: true,
        ReturnConsumedCapacity: "TOTAL",
        ...(attributes ? projection(attributes) : {}),
      }),
    ),
  );
  return response.Item;
}

/** One page of a Query (consistent on the table; indexes can only be read eventually consistent). */
export function queryPage(
  connection: TableConnection,
  input: Omit<QueryCommandInput, "TableName">,
): Promise<QueryCommandOutput> {
  return send(connection, "Query", () =>
    connection.documents.send(
      new QueryCommand({
        ConsistentRead: input.IndexName === undefined,
        ...input,
        TableName: connection.tableName,
        ReturnConsumedCapacity: "TOTAL",
      }),
    ),
  );
}

/** Every page of a Query, one at a time (past DynamoDB's 1 MB pages). */
export async function* queryPages(
  connection: TableConnection,
  input: Omit<QueryCommandInput, "TableName">,
): AsyncGenerator<Item[]> {
  let startKey: Item | undefined;
  do {
    const page = await queryPage(connection, { ...input, ExclusiveStartKey: startKey });
    yield page.Items ?? [];
    startKey = page.LastEvaluatedKey;
  } while (startKey);
}

/** One UpdateItem. With a condition, a refusal is an outcome carrying the item as it was, not an error. */
export async function updateItem(
  connection: TableConnection,
  key: ItemKey,
  parameters: UpdateParameters,
  options: UpdateOptions = {},
): Promise<UpdateOutcome> {
  try {
    const response = await send(connection, "UpdateItem", () =>
      connection.documents.send(
        new UpdateCommand({
          TableName: connection.tableName,
          Key: key,
          ...parameters,
          ReturnValues: options.returnValues ?? "NONE",
          ...(parameters.ConditionExpression
            ? { ReturnValuesOnConditionCheckFailure: "ALL_OLD" as const }
            : {}),
          ReturnConsumedCapacity: "TOTAL",
        }),
      ),
    );
    const attributes = response.Attributes;
    return {
      applied: true,
      attributes: attributes && Object.keys(attributes).length > 0 ? attributes : undefined,
    };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    return { applied: false, current: error.Item ? unmarshall(error.Item) : undefined };
  }
}

/** Puts and deletes, in batches of 25 sent together, until every entry is processed. */
export async function batchWrite(
  connection: TableConnection,
  requests: WriteRequest[],
): Promise<void> {
  await Promise.all(
    inBatches(requests, BATCH_WRITE_LIMIT).map((batch) =>
      untilProcessed("BatchWriteItem", "items", batch, async (pending) => {
        const response = await send(connection, "BatchWriteItem", () =>
          connection.documents.send(
            new BatchWriteCommand({
              RequestItems: { [connection.tableName]: pending },
              ReturnConsumedCapacity: "TOTAL",
            }),
          ),
        );
        return (response.UnprocessedItems?.[connection.tableName] ?? []) as WriteRequest[];
      }),
    ),
  );
}

/** Items by key, consistently, in batches of 100, until every key is answered (missing items are left out). */
export async function batchGet(
  connection: TableConnection,
  keys: ItemKey[],
  attributes?: readonly string[],
): Promise<Item[]> {
  const items: Item[] = [];
  await Promise.all(
    inBatches(keys, BATCH_GET_LIMIT).map((batch) =>
      untilProcessed("BatchGetItem", "keys", batch, async (pending) => {
        const response = await send(connection, "BatchGetItem", () =>
          connection.documents.send(
            new BatchGetCommand({
              RequestItems: {
                [connection.tableName]: {
                  Keys: pending,
                  ConsistentRead: true,
                  ...(attributes ? projection(attributes) : {}),
                },
              },
              ReturnConsumedCapacity: "TOTAL",
            }),
          ),
        );
        items.push(...((response.Responses?.[connection.tableName] ?? []) as Item[]));
        return (response.UnprocessedKeys?.[connection.tableName]?.Keys ?? []) as ItemKey[];
      }),
    ),
  );
  return items;
}

function inBatches<T>(entries: T[], size: number): T[][] {
  const batches: T[][] = [];
  for (let i = 0; i < entries.length; i += size) batches.push(entries.slice(i, i + size));
  return batches;
}

/** Sends `batch`, then what each answer left unprocessed, with backoff, until nothing is left. */
async function untilProcessed<T>(
  operation: string,
  what: string,
  batch: T[],
  sendBatch: (pending: T[]) => Promise<T[]>,
): Promise<void> {
  let pending = batch;
  for (let attempt = 0; pending.length > 0; attempt += 1) {
    if (attempt >= MAX_ATTEMPTS) {
      throw new TableRequestError(
        operation,
        `${pending.length} ${what} left unprocessed after ${MAX_ATTEMPTS} attempts`,
      );
    }
    if (attempt > 0) await sleep(backoffDelay(attempt));
    pending = await sendBatch(pending);
  }
}

/** Sends with throttling retries and counts each attempt and the capacity the answer reports. */
async function send<T extends { ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[] }>(
  connection: TableConnection,
  operation: string,
  request: () => Promise<T>,
): Promise<T> {
  const counters = connection.counters;
  const entry = (counters.byOperation[operation] ??= { requests: 0, capacityUnits: 0 });
  const response = await withThrottlingRetry(() => {
    counters.requests += 1;
    entry.requests += 1;
    return request();
  });
  const consumed = response.ConsumedCapacity;
  for (const part of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) {
    counters.capacityUnits += part.CapacityUnits ?? 0;
    entry.capacityUnits += part.CapacityUnits ?? 0;
  }
  return response;
}

/** The table operations as methods of one object: what the repositories use. */
export class TableClient implements TableConnection {
  readonly documents: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly counters: CapacityUsage;
  private readonly riders = new WriteRiders<WriteRequest>(
    (requests) => batchWrite(this, requests),
    writtenKey,
    RIDE_WAIT_MS,
  );

  constructor(client: DynamoDBClient | DynamoDBDocumentClient, tableName: string) {
    const connection = connectTable(client, tableName);
    this.documents = connection.documents;
    this.tableName = connection.tableName;
    this.counters = connection.counters;
  }

  /** A copy of what this client has sent so far. */
  get usage(): CapacityUsage {
    return structuredClone(this.counters);
  }

  get(key: ItemKey, attributes?: readonly string[]): Promise<Item | undefined> {
    return getItem(this, key, attributes);
  }

  query(input: Omit<QueryCommandInput, "TableName">): Promise<QueryCommandOutput> {
    return queryPage(this, input);
  }

  queryPages(input: Omit<QueryCommandInput, "TableName">): AsyncGenerator<Item[]> {
    return queryPages(this, input);
  }

  async queryAll(input: Omit<QueryCommandInput, "TableName">): Promise<Item[]> {
    const items: Item[] = [];
    for await (const page of queryPages(this, input)) items.push(...page);
    return items;
  }

  update(
    key: ItemKey,
    parameters: UpdateParameters,
    options?: UpdateOptions,
  ): Promise<UpdateOutcome> {
    return updateItem(this, key, parameters, options);
  }

  /** Puts and deletes (with any writes waiting to ride along: batchWriteSoon). */
  batchWrite(requests: WriteRequest[]): Promise<void> {
    return this.riders.carry(requests, BATCH_WRITE_LIMIT);
  }

  /**
   * A put or delete that need not go out at once: it goes with this client's next batch write, or on its own
   * after RIDE_WAIT_MS. Resolves once it is stored.
   */
  batchWriteSoon(request: WriteRequest): Promise<void> {
    return this.riders.add(request);
  }

  batchGet(keys: ItemKey[], attributes?: readonly string[]): Promise<Item[]> {
    return batchGet(this, keys, attributes);
  }
}

/** The item a put or delete writes, as one string. */
function writtenKey(request: WriteRequest): string {
  const key = "PutRequest" in request ? request.PutRequest.Item : request.DeleteRequest.Key;
  return `${key[TABLE_KEYS.partitionKey]}\u0000${key[TABLE_KEYS.sortKey]}`;
}

/** True for DynamoDB's refusal of a conditional write. */
export function isConditionFailure(
  error: unknown,
): error is Error & { Item?: Parameters<typeof unmarshall>[0] } {
  return error instanceof Error && error.name === "ConditionalCheckFailedException";
}
