/**
 * Memory Table: durable, human-in-the-loop LangGraph agents on AWS Lambda.
 * The public API; everything else under src/ is internal.
 */
export * from "./shared/errors";
export { assertIdentifier, MAX_IDENTIFIER_LENGTH } from "./shared/identifiers";
export {
  TABLE_DEFINITION,
  THREADS_BY_STATUS_INDEX,
  THREADS_BY_TENANT_INDEX,
  TTL_ATTRIBUTE,
  createTableInput,
} from "./checkpoint/dynamodb/table-definition";
export {
  BoundedInMemorySaver,
  DEFAULT_IN_MEMORY_CHECKPOINT_CONFIG,
  InMemorySaver,
} from "./checkpoint/memory";
export type {
  BoundedInMemorySaverOptions,
  InMemoryCheckpointConfig,
  InMemorySaverStats,
  PurgeResult,
} from "./checkpoint/memory";
export { buildBookingGraph } from "./examples/booking";
export {
  DynamoDBSaver,
  DEFAULT_MAX_CHECKPOINT_BYTES,
  DEFAULT_TTL_SECONDS,
  type DynamoDBSaverOptions,
} from "./checkpoint/dynamodb/saver";
export { THREAD_STATUSES, type ThreadStatus } from "./checkpoint/dynamodb/thread-record";
export {
  isThreadRecordRemoval,
  removeExpiredThreadItems,
} from "./checkpoint/dynamodb/expired-threads";
export type { Compression } from "./checkpoint/dynamodb/codec";
export * from "./runtime";
