/**
 * Exactly the DynamoDB item actions Memory Table's code sends (saver, thread records, leases, inbox, cleaner).
 * The Terraform module grants these and nothing else; a test checks the code uses no other command.
 */
export const DYNAMODB_ITEM_ACTIONS = [
  "dynamodb:BatchGetItem",
  "dynamodb:BatchWriteItem",
  "dynamodb:GetItem",
  "dynamodb:Query",
  "dynamodb:UpdateItem",
] as const;

/** Actions the expired-thread cleaner needs on the table's stream (its event source mapping reads it). */
export const DYNAMODB_STREAM_ACTIONS = [
  "dynamodb:DescribeStream",
  "dynamodb:GetRecords",
  "dynamodb:GetShardIterator",
  "dynamodb:ListStreams",
] as const;

/**
 * Exactly the item actions the expired-thread cleaner sends (image/cleaner.ts -> thread-removal.ts): it queries
 * the base table for a thread's items and deletes them in batches, nothing else.
 */
export const DYNAMODB_CLEANER_ACTIONS = ["dynamodb:BatchWriteItem", "dynamodb:Query"] as const;

/**
 * Exactly the item action the API Gateway authorizer sends (image/authorizer.ts): GetItem of an API key's lookup
 * item. The module grants it on those items only (`dynamodb:LeadingKeys` like `#api-key#*`).
 */
export const DYNAMODB_AUTHORIZER_ACTIONS = ["dynamodb:GetItem"] as const;
