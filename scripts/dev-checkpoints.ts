import { InMemorySaver } from "../src/checkpoint/memory";
import type { HandlerOptions } from "../src/runtime/handler";

/**
 * Where the dev server keeps checkpoints: the handler options that select it, and a line for the banner. In
 * memory here; on DynamoDB in dev-table.ts, which the dev server imports only in that mode, so that the
 * in-memory mode never loads the AWS SDK.
 */
export interface DevCheckpoints {
  options: Pick<HandlerOptions, "checkpointer" | "tableName" | "dynamodbClient">;
  description: string;
  close(): void;
}

export function inMemoryCheckpoints(): DevCheckpoints {
  return {
    options: { checkpointer: new InMemorySaver() },
    description: "bounded in-memory saver (lost on restart)",
    close: () => undefined,
  };
}
