/**
 * `memory-table/dynamodb`: the DynamoDB checkpoint saver, its options, and the per-container table context a
 * saver, a store and the handler can share.
 */
export { DynamoDBSaver } from "./saver";
export type { DynamoDBSaverOptions } from "./options";
export type { Compression } from "./codec";
export { TableContext, type TableContextOptions } from "../../table/context";
