import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { InvalidConfigurationError } from "../shared/errors";
import { AssistantItems } from "./assistant-items";
import { CheckpointItems } from "./checkpoint-items";
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
  }

  get tableName(): string {
    return this.client.tableName;
  }
}
