/**
 * Memory Table: durable, human-in-the-loop LangGraph agents on AWS Lambda.
 *
 * The package root is what an app team needs: the Lambda handler and its graph contract, the two savers, the two
 * long-term memory stores and the errors. The rest lives in subpaths: `memory-table/dynamodb` (the saver's options
 * and the shared table context), `memory-table/memory` (the bounded in-memory saver's guardrails and stats),
 * `memory-table/store` (the stores' options), `memory-table/table` (the table definition and IAM actions, for
 * infrastructure as code), `memory-table/runtime` (the image's handlers, their options, `loadLangGraphConfig`) and
 * `memory-table/examples` (the example graphs).
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
