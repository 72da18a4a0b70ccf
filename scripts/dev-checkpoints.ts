import { InMemorySaver } from "../src/checkpoint/memory";
import type { HandlerOptions } from "../src/runtime/handler";
import type { ThreadRef } from "../src/runtime/runs/run-manager";

/**
 * Where the dev server keeps checkpoints: the handler options that select it, and a line for the banner. In
 * memory here; on DynamoDB in dev-table.ts, which the dev server imports only in that mode, so that the
 * in-memory mode never loads the AWS SDK.
 */
export interface DevCheckpoints {
  options: Pick<HandlerOptions, "checkpointer" | "tableName" | "dynamodbClient">;
  description: string;
  close(): void;
  /**
   * The threads whose runs are not at rest (one holds, continues on or waits for them, or they say RUNNING),
   * of every tenant: where a server that died left runs. Absent in memory, where nothing outlives the server.
   */
  unsettledThreads?(): AsyncIterable<ThreadRef>;
}

export function inMemoryCheckpoints(): DevCheckpoints {
  return {
    options: { checkpointer: new InMemorySaver() },
    description: "bounded in-memory saver (lost on restart)",
    close: () => undefined,
  };
}
