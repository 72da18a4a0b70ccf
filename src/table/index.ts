/**
 * `memory-table/table`: the DynamoDB table itself, for platform code and its own infrastructure as code: its
 * definition (keys, indexes, TTL attribute) and the IAM actions the code sends.
 */
export {
  TABLE_DEFINITION,
  TABLE_KEYS,
  THREADS_BY_STATUS_INDEX,
  THREADS_BY_TENANT_INDEX,
  THREADS_UNSETTLED_INDEX,
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
