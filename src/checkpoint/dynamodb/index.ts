/** `memory-table/dynamodb`: the DynamoDB checkpoint saver. */
export { DynamoDBSaver } from "./saver";
export {
  DEFAULT_MAX_CHECKPOINT_BYTES,
  DEFAULT_MAX_WRITES_BYTES,
  type DynamoDBSaverOptions,
} from "./options";
export { COMPRESSIONS, type Compression } from "./codec";
export { DEFAULT_TTL_SECONDS } from "../../shared/defaults";
export { TableContext, type TableContextOptions } from "../../table/context";
