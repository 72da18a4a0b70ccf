/**
 * Memory Table: durable, human-in-the-loop LangGraph agents on AWS Lambda.
 *
 * The package root is what an app team needs: the Lambda handler and its graph contract, the two savers, the two
 * long-term memory stores and the errors. The rest lives in subpaths: `memory-table/dynamodb` (saver options and defaults),
 * `memory-table/memory` (the bounded in-memory saver's guardrails), `memory-table/table` (the table definition,
 * IAM actions, the cleaner), `memory-table/runtime` (routes, configuration, thread stores) and
 * `memory-table/examples` (the booking example graph).
 */
export * from "./shared/errors";
export {
  createHandler,
  createWorkerHandler,
  type ApiHandler,
  type GraphFactory,
  type GraphFactoryContext,
  type HandlerGraph,
  type HandlerOptions,
  type StoreOption,
} from "./runtime";
export { DynamoDBSaver, type DynamoDBSaverOptions } from "./checkpoint/dynamodb";
export {
  BoundedInMemorySaver,
  InMemorySaver,
  type BoundedInMemorySaverOptions,
  type InMemoryCheckpointConfig,
} from "./checkpoint/memory";
export {
  BoundedInMemoryStore,
  DynamoDBStore,
  type BoundedInMemoryStoreOptions,
  type DynamoDBStoreOptions,
} from "./store";
