import { DynamoDBClient, type DynamoDBClientConfig } from "@aws-sdk/client-dynamodb";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { InvalidConfigurationError } from "../shared/errors";
import { AssistantItems } from "./assistant-items";
import { CheckpointItems } from "./checkpoint-items";
import { CronItems } from "./cron-items";
import { TableClient } from "./client";
import { ExpiryPolicy } from "./expiry";
import { RunEventItems } from "./run-event-items";
import { RunItems } from "./run-items";
import { ThreadRecords } from "./thread-records";

export interface TableContextOptions {
  /** Name of the Memory Table DynamoDB table. */
  tableName: string;
  /** A DynamoDB client shared by everything in the container. */
  client: DynamoDBClient | DynamoDBDocumentClient;
  /** Seconds a thread lives after its last write (default 30 days). */
  ttlSeconds?: number;
  /** Clock in epoch milliseconds (tests of expiry). */
  now?: () => number;
}

/**
 * One container's view of the table: the request client and one repository per item kind. Build it once and
 * share it, so the checkpoint savers of every request and the HTTP runtime's thread store use one cache of
 * thread records (a lease write that renewed a thread spares the savers their own renewal).
 */
export class TableContext {
  readonly client: TableClient;
  readonly expiry: ExpiryPolicy;
  readonly threads: ThreadRecords;
  readonly checkpoints: CheckpointItems;
  readonly runs: RunItems;
  readonly runEvents: RunEventItems;
  readonly assistants: AssistantItems;
  readonly crons: CronItems;
  readonly now: () => number;

  constructor(options: TableContextOptions) {
    if (typeof options.tableName !== "string" || options.tableName.length === 0) {
      throw new InvalidConfigurationError("tableName", "expected a non-empty string");
    }
    if (typeof options.client?.send !== "function") {
      throw new InvalidConfigurationError("client", "expected a DynamoDB client");
    }
    this.now = options.now ?? Date.now;
    this.client = new TableClient(options.client, options.tableName);
    this.expiry = new ExpiryPolicy(options.ttlSeconds);
    this.threads = new ThreadRecords(this.client, this.expiry, this.now);
    this.checkpoints = new CheckpointItems(this.client);
    this.runs = new RunItems(this.client, this.threads);
    this.runEvents = new RunEventItems(this.client, this.threads);
    this.assistants = new AssistantItems(this.client);
    this.crons = new CronItems(this.client);
  }

  get tableName(): string {
    return this.client.tableName;
  }
}

/** How a saver or a store names its table: a shared context, or a table name with a client or its config. */
export interface TableSource {
  /** The container's shared table context; it carries everything below, which must then be absent. */
  table?: TableContext;
  tableName?: string;
  client?: DynamoDBClient | DynamoDBDocumentClient;
  clientConfig?: DynamoDBClientConfig;
  /** Seconds a thread lives after its last write (savers). */
  ttlSeconds?: number;
  now?: () => number;
}

const CARRIED_BY_CONTEXT = ["tableName", "client", "clientConfig", "ttlSeconds", "now"] as const;

/**
 * The table context a saver's or a store's options name: the shared one they give, or a new one on their table
 * name and client. Options a context carries are refused beside one, rather than silently ignored.
 */
export function tableContextOf(source: TableSource): TableContext {
  if (source.table !== undefined) {
    if (!(source.table instanceof TableContext)) {
      throw new InvalidConfigurationError(
        "table",
        `expected a TableContext, got ${kindOf(source.table)}`,
      );
    }
    for (const name of CARRIED_BY_CONTEXT) {
      if (source[name] !== undefined) {
        throw new InvalidConfigurationError(
          name,
          "expected it absent when a table context is given (the context carries it)",
        );
      }
    }
    return source.table;
  }
  if (typeof source.tableName !== "string" || source.tableName.length === 0) {
    throw new InvalidConfigurationError(
      "tableName",
      `expected a non-empty string, got ${kindOf(source.tableName)}`,
    );
  }
  if (source.client !== undefined && typeof source.client?.send !== "function") {
    throw new InvalidConfigurationError(
      "client",
      `expected a DynamoDB client, got ${kindOf(source.client)}`,
    );
  }
  if (source.client !== undefined && source.clientConfig !== undefined) {
    throw new InvalidConfigurationError(
      "clientConfig",
      "expected either client or clientConfig, got both",
    );
  }
  return new TableContext({
    tableName: source.tableName,
    client: source.client ?? new DynamoDBClient(source.clientConfig ?? {}),
    ttlSeconds: source.ttlSeconds,
    now: source.now,
  });
}

/** What an option was given as, for messages: its kind, never its text (a table name may be anything). */
function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (value === "") return "an empty string";
  if (typeof value === "object") return "an object";
  return `a ${typeof value}`;
}
