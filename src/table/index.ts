/**
 * `memory-table/table`: the DynamoDB table itself, for platform code and tools. Its definition (keys, indexes,
 * TTL, attribute legend), the IAM actions the code sends, the shared per-container table context, and the
 * expired-thread cleaner's building blocks.
 */
export {
  ASSISTANT_ITEM_ATTRIBUTES,
  CHECKPOINT_ITEM_ATTRIBUTES,
  RUN_EVENT_ITEM_ATTRIBUTES,
  RUN_ITEM_ATTRIBUTES,
  STORE_ITEM_ATTRIBUTES,
  TABLE_DEFINITION,
  TABLE_KEYS,
  THREAD_ATTRIBUTES,
  THREADS_BY_STATUS_INDEX,
  THREADS_BY_TENANT_INDEX,
  TTL_ATTRIBUTE,
  createTableInput,
  type AttributeDefinition,
  type GlobalSecondaryIndexDefinition,
  type TableDefinition,
} from "./definition";
export {
  DYNAMODB_CLEANER_ACTIONS,
  DYNAMODB_ITEM_ACTIONS,
  DYNAMODB_STREAM_ACTIONS,
} from "./iam-actions";
export { TableContext, type TableContextOptions } from "./context";
export type { CapacityUsage } from "./client";
export {
  isThreadRecordRemoval,
  removeThreadLeftovers,
  type ThreadStreamRecord,
} from "./thread-removal";
