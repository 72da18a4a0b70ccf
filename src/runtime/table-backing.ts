import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { BaseStore } from "@langchain/langgraph-checkpoint";
import { DynamoDBSaver } from "../checkpoint/dynamodb";
import type { AssistantStore } from "../shared/assistants";
import type { CronStore } from "../shared/crons";
import type { RunEventStore } from "../shared/run-events";
import type { RunStore } from "../shared/runs";
import type { ThreadStore } from "../shared/threads";
import { DynamoDBStore } from "../store/dynamodb-store";
import { TableContext } from "../table/context";
import type { TenantSaver } from "./graphs/engine";

export interface TableBackingOptions {
  tableName: string;
  /** Default: a client built from the environment, at `endpoint` when one is given (DynamoDB Local). */
  client?: DynamoDBClient;
  endpoint?: string;
  ttlSeconds?: number;
}

/** Everything a handler keeps in the table: one context, so every request's saver shares its record cache. */
export interface TableBacking {
  saverFor(tenantId: string): TenantSaver;
  storeFor(tenantId: string): BaseStore;
  threads: ThreadStore;
  runs: RunStore;
  runEvents: RunEventStore;
  assistants: AssistantStore;
  crons: CronStore;
}

/**
 * The handler's default state on a Memory Table table. The assembly loads this module only for a handler with a
 * table, so one on another checkpointer (the dev server's in-memory saver, tests) never loads the AWS SDK.
 */
export function openTableBacking(options: TableBackingOptions): TableBacking {
  const table = new TableContext({
    tableName: options.tableName,
    client:
      options.client ?? new DynamoDBClient(options.endpoint ? { endpoint: options.endpoint } : {}),
    ttlSeconds: options.ttlSeconds,
  });
  return {
    saverFor: (tenantId) => ({ saver: new DynamoDBSaver({ table, tenantId }), bound: true }),
    storeFor: (tenantId) => new DynamoDBStore({ table, tenantId }),
    threads: table.threads,
    runs: table.runs,
    runEvents: table.runEvents,
    assistants: table.assistants,
    crons: table.crons,
  };
}
