import type { CreateTableCommandInput } from "@aws-sdk/client-dynamodb";

/**
 * The one definition of the Memory Table DynamoDB table: keys, secondary indexes, the TTL attribute and the
 * legend of every stored attribute. The tests create DynamoDB Local tables from it and the Terraform module
 * builds `aws_dynamodb_table` from it, so the code and the infrastructure cannot drift apart.
 *
 * Item layout: one partition per tenant thread, `pk = <tenant>#<thread id>` (ids encoded by keys.ts).
 *
 * | sk                                         | item                                                        |
 * |--------------------------------------------|-------------------------------------------------------------|
 * | `c#<checkpoint id>`                        | a root checkpoint: its new values inline, and the commit record |
 * | `c#<checkpoint id>#w#<seq>`                | pending writes of that checkpoint not stored inside it        |
 * | `c#<checkpoint id>#x#<seq>#<n>`            | chunk n of what one write (seq) could not hold inline         |
 * | `m`                                        | the thread record: status, expiry, generation, lease, inbox   |
 * | `n#<namespace>#<checkpoint id>[#w#…|#x#…]` | the same for a subgraph namespace                             |
 *
 * `#` sorts below every character of an encoded id, so one descending Query between `c#` and `m` returns the
 * thread record, then the latest root checkpoint's writes and chunks, then that checkpoint: the common read is
 * one round trip, and items of one checkpoint are one key range.
 */
export const TABLE_KEYS = {
  partitionKey: "pk",
  sortKey: "sk",
} as const;

/** DynamoDB TTL attribute (epoch seconds). Only thread records carry it: threads expire whole. */
export const TTL_ATTRIBUTE = "ttl";

/**
 * Attribute names of the thread record (`sk = "m"`). Names are what DynamoDB bills as item bytes, and what the
 * indexes and the Terraform module refer to.
 */
export const THREAD_ATTRIBUTES = {
  /** Tenant id (partition key of the threads-by-tenant index). */
  tenant: "tenant",
  /** `<tenant>#<STATUS>` for inbox statuses only (partition key of the sparse threads-by-status index). */
  tenantStatus: "tenant_status",
  /** The thread id as the client gave it. */
  threadId: "thread_id",
  /** RUNNING, PAUSED_FOR_HUMAN, COMPLETED or ERROR; absent for a thread never run. */
  status: "status",
  /** Comma-separated names of the nodes that run next (paused threads). */
  nextNode: "next_node",
  /** Epoch milliseconds (sort key of the threads-by-tenant index). */
  createdAt: "created_at",
  /** Epoch milliseconds (sort key of the threads-by-status index). */
  updatedAt: "updated_at",
  /** Epoch seconds after which the whole thread is gone (DynamoDB TTL attribute). */
  ttl: TTL_ATTRIBUTE,
  /**
   * Random id of the thread's current life. Every checkpoint, write and chunk item carries it; items of another
   * generation (an expired or deleted thread whose items the cleaner has not removed yet) are never read.
   */
  generation: "gen",
  /** Id of the run (or deletion) that holds the thread. */
  leaseOwner: "lease_owner",
  /** Epoch milliseconds at which the lease lapses (the Lambda deadline of its holder). */
  leaseExpiresAt: "lease_expires_at",
  /** JSON of the pending interrupts `[{id, value, taskId}]`. */
  interrupts: "interrupts",
  /** The assistant that last ran the thread (state reads need its graph). */
  assistantId: "assistant_id",
  /** JSON of the thread's metadata (`threads.create({metadata})`). */
  metadata: "metadata",
} as const;

/**
 * Attribute names of checkpoint, writes and chunk items: one or two letters, since every item repeats them.
 * The item shapes are in checkpoint-items.ts.
 */
export const CHECKPOINT_ITEM_ATTRIBUTES = {
  /** Item kind: `c` checkpoint, `w` writes, `x` chunk. */
  kind: "k",
  /** The thread generation the item belongs to (see THREAD_ATTRIBUTES.generation). */
  generation: "g",
  /** Checkpoint: parent checkpoint id. */
  parentId: "p",
  /** Checkpoint: id of this write (orders re-writes; names its chunks). */
  sequence: "q",
  /** Checkpoint: the checkpoint without channel values, serialized (absent when it went to chunks). */
  checkpoint: "cp",
  /** Checkpoint: the metadata, serialized (absent when it went to chunks). */
  metadata: "md",
  /** Checkpoint: which checkpoint holds each channel's value, serialized (absent when it went to chunks). */
  locations: "lc",
  /** Checkpoint: values new in this checkpoint that fit inline, by channel, with their version. */
  values: "vals",
  /** Checkpoint: number of chunks of the pack holding what did not fit inline (absent when none). */
  spill: "sp",
  /** Checkpoint: pending writes stored inside the checkpoint item (one record per putWrites call). */
  writes: "w",
  /** Writes item: the pending-write records it holds. */
  writeRecords: "ws",
  /** Chunk: its bytes. */
  data: "d",
} as const;

/**
 * Lists a tenant's threads, newest first (`list()` without a thread id, `threads/search`). Keys only, on a key
 * that never changes: after a thread's creation, no write to its record costs an index write here.
 */
export const THREADS_BY_TENANT_INDEX = {
  name: "threads-by-tenant",
  partitionKey: THREAD_ATTRIBUTES.tenant,
  sortKey: THREAD_ATTRIBUTES.createdAt,
  projection: "KEYS_ONLY",
} as const;

/**
 * The approvals inbox: a tenant's threads that wait for a person (`<tenant>#PAUSED_FOR_HUMAN`, and
 * `<tenant>#ERROR`), most recently updated first, with their pending interrupts. Sparse: only those statuses set
 * `tenant_status`, so running and completed threads cost no index writes.
 */
export const THREADS_BY_STATUS_INDEX = {
  name: "threads-by-status",
  partitionKey: THREAD_ATTRIBUTES.tenantStatus,
  sortKey: THREAD_ATTRIBUTES.updatedAt,
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
