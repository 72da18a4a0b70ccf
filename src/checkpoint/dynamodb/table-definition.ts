import type { CreateTableCommandInput } from "@aws-sdk/client-dynamodb";

/**
 * The one definition of the Memory Table DynamoDB table: keys, secondary indexes and the TTL attribute.
 * The tests create DynamoDB Local tables from it and the Terraform module builds `aws_dynamodb_table` from it,
 * so the code and the infrastructure cannot drift apart.
 *
 * Item layout (one partition per tenant thread, `pk = <tenant>#<escaped thread id>`):
 *
 * | sk                                   | item                                                         |
 * |--------------------------------------|--------------------------------------------------------------|
 * | `c#<checkpoint id>`                  | a root-namespace checkpoint, with its new channel values inline |
 * | `c#<checkpoint id>#w#<seq>`          | pending writes of that checkpoint not committed with it        |
 * | `<owner sk>#x#<part>#<n>`            | chunk n of a value too large for its owner item                |
 * | `m`                                  | the thread record: status, next node, expiry, lease, inbox     |
 * | `n#<ns>#<checkpoint id>[#w#...]`     | the same for a subgraph namespace                              |
 *
 * Sort-key prefixes are ordered so that one descending Query between `c#` and `m` returns the thread record,
 * then the latest root checkpoint's pending writes, then that checkpoint: the common read is one round trip.
 */
export const TABLE_KEYS = {
  partitionKey: "pk",
  sortKey: "sk",
} as const;

/** DynamoDB TTL attribute (epoch seconds). Only thread records carry it: threads expire whole. */
export const TTL_ATTRIBUTE = "ttl";

/**
 * Lists a tenant's threads, newest first (`list()` without a thread id, `threads/search`). Keys only, on a key
 * that never changes: after a thread's creation, no write to its record costs an index write here.
 */
export const THREADS_BY_TENANT_INDEX = {
  name: "threads-by-tenant",
  partitionKey: "tenant",
  sortKey: "created_at",
  projection: "KEYS_ONLY",
} as const;

/**
 * The approvals inbox: a tenant's threads that wait for a person (`<tenant>#PAUSED_FOR_HUMAN`, and
 * `<tenant>#ERROR`), most recently updated first, with their pending interrupts. Sparse: only those statuses set
 * `tenant_status`, so running and completed threads cost no index writes.
 */
export const THREADS_BY_STATUS_INDEX = {
  name: "threads-by-status",
  partitionKey: "tenant_status",
  sortKey: "updated_at",
  projection: "ALL",
} as const;

export interface AttributeDefinition {
  name: string;
  type: "S" | "N" | "B";
}

export interface GlobalSecondaryIndexDefinition {
  name: string;
  partitionKey: string;
  sortKey: string;
  projection: "ALL" | "KEYS_ONLY";
}

export interface TableDefinition {
  partitionKey: string;
  sortKey: string;
  attributes: AttributeDefinition[];
  globalSecondaryIndexes: GlobalSecondaryIndexDefinition[];
  ttlAttribute: string;
  /** Stream view the expired-thread cleaner needs (keys of the removed thread record). */
  streamViewType: "KEYS_ONLY";
}

export const TABLE_DEFINITION: TableDefinition = {
  partitionKey: TABLE_KEYS.partitionKey,
  sortKey: TABLE_KEYS.sortKey,
  attributes: [
    { name: TABLE_KEYS.partitionKey, type: "S" },
    { name: TABLE_KEYS.sortKey, type: "S" },
    { name: THREADS_BY_TENANT_INDEX.partitionKey, type: "S" },
    { name: THREADS_BY_STATUS_INDEX.partitionKey, type: "S" },
    { name: THREADS_BY_TENANT_INDEX.sortKey, type: "N" },
    { name: THREADS_BY_STATUS_INDEX.sortKey, type: "N" },
  ],
  globalSecondaryIndexes: [{ ...THREADS_BY_TENANT_INDEX }, { ...THREADS_BY_STATUS_INDEX }],
  ttlAttribute: TTL_ATTRIBUTE,
  streamViewType: "KEYS_ONLY",
};

/** `CreateTable` input for the definition (on-demand billing), as the tests and local tools use it. */
export function createTableInput(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: "PAY_PER_REQUEST",
    AttributeDefinitions: TABLE_DEFINITION.attributes.map((attribute) => ({
      AttributeName: attribute.name,
      AttributeType: attribute.type,
    })),
    KeySchema: [
      { AttributeName: TABLE_DEFINITION.partitionKey, KeyType: "HASH" },
      { AttributeName: TABLE_DEFINITION.sortKey, KeyType: "RANGE" },
    ],
    GlobalSecondaryIndexes: TABLE_DEFINITION.globalSecondaryIndexes.map((index) => ({
      IndexName: index.name,
      KeySchema: [
        { AttributeName: index.partitionKey, KeyType: "HASH" },
        { AttributeName: index.sortKey, KeyType: "RANGE" },
      ],
      Projection: { ProjectionType: index.projection },
    })),
    StreamSpecification: { StreamEnabled: true, StreamViewType: TABLE_DEFINITION.streamViewType },
  };
}
