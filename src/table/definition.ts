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

/**
 * DynamoDB TTL attribute (epoch seconds). Of a thread's items only its record carries it (threads expire whole);
 * store items that expire carry their own (the cleaner acts on thread records only).
 */
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
  /**
   * `u<shard>` while a run is on the thread (RUNNING, queued or continuing), absent otherwise: the partition key of
   * the sparse threads-unsettled index the recovery sweep reads.
   */
  unsettled: "unsettled",
  /** Id of the run (or deletion) that holds the thread. */
  leaseOwner: "lease_owner",
  /** Epoch milliseconds at which the lease lapses (the Lambda deadline of its holder). */
  leaseExpiresAt: "lease_expires_at",
  /** JSON of the pending interrupts `[{id, value, taskId}]`. */
  interrupts: "interrupts",
  /** The graph the thread runs: its last run's (state reads and resumes need it). */
  graphId: "graph_id",
  /** JSON of the thread's metadata (`threads.create({metadata})`). */
  metadata: "metadata",
  /** Ids of the runs waiting for the thread, in order (the run holding the lease is not among them). */
  runQueue: "run_queue",
  /** `interrupt` or `rollback`: the run holding the lease was asked to stop. */
  cancelAction: "cancel_action",
  /** Id of the run that holds the thread between two legs (it continues from its last checkpoint). */
  continuing: "continuing",
  /**
   * How many times the run rulebook changed the record: each change is written only if this is still what its
   * decision was made on (optimistic concurrency over the whole run state: queue, lease, status, holder).
   */
  revision: "rev",
} as const;

/** Attribute names of run records (`sk = r#<run id>` in the thread's partition). */
export const RUN_ITEM_ATTRIBUTES = {
  /** Item kind: `r`. */
  kind: "k",
  /** The thread generation the run belongs to (removed with its thread). */
  generation: "g",
  runId: "run_id",
  /** pending, running, success, error, timeout, interrupted. */
  status: "status",
  assistantId: "assistant_id",
  /** The graph the run runs (its assistant's at creation). */
  graphId: "graph_id",
  multitaskStrategy: "multitask",
  /** Epoch milliseconds. */
  createdAt: "created_at",
  /** Epoch milliseconds. */
  updatedAt: "updated_at",
  /** Legs started so far. */
  legs: "legs",
  /** Epoch milliseconds at which the first leg started the graph. */
  startedAt: "started_at",
  /** Stream events its legs emitted so far. */
  eventCount: "events",
  /** JSON of what the run was asked to do (kwargs), its metadata and, once it failed, its error. */
  body: "body",
  /** Map: how the run's webhook delivery went (outcome, attempts, last status, when). */
  webhookDelivery: "webhook",
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

/**
 * Threads with a run on them (RUNNING, queued or continuing), for the recovery sweep that takes over runs whose
 * process died when nothing reads them. Sparse and keys only: a thread enters when a run takes or joins it and
 * leaves when the last one ends (two index writes per run; a lease renewal writes none), spread over
 * {@link UNSETTLED_SHARDS} partitions so no index partition takes every run's writes.
 */
export const THREADS_UNSETTLED_INDEX = {
  name: "threads-unsettled",
  partitionKey: THREAD_ATTRIBUTES.unsettled,
  sortKey: THREAD_ATTRIBUTES.createdAt,
  projection: "KEYS_ONLY",
} as const;

/** Partitions of the threads-unsettled index (`u0` to `u9`). */
export const UNSETTLED_SHARDS = 10;

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
    { name: THREADS_UNSETTLED_INDEX.partitionKey, type: "S" },
    { name: THREADS_BY_TENANT_INDEX.sortKey, type: "N" },
    { name: THREADS_BY_STATUS_INDEX.sortKey, type: "N" },
  ],
  globalSecondaryIndexes: [
    { ...THREADS_BY_TENANT_INDEX },
    { ...THREADS_BY_STATUS_INDEX },
    { ...THREADS_UNSETTLED_INDEX },
  ],
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

/**
 * Attribute names of the long-term memory store's items (`pk = <tenant>##store`, `sk = i#<namespace>##<key>`,
 * see keys.ts): one or two letters, since a search reads every item of a namespace range. The item shape and
 * its requests are in store-items.ts.
 *
 * | attribute | holds                                                                                 |
 * |-----------|---------------------------------------------------------------------------------------|
 * | `v`       | the value as JSON text, or its brotli bytes when those are smaller                    |
 * | `ca`      | creation time, epoch milliseconds (kept when the item is overwritten)                 |
 * | `ua`      | last write, epoch milliseconds                                                        |
 * | `ttl`     | expiry, epoch seconds (DynamoDB TTL removes the item; absent: the item never expires) |
 * | `tm`      | the item's TTL in minutes, which a refreshing read renews it by (present with `ttl`)  |
 * | `e`       | embedding vectors for semantic search, float32 little-endian, one after another       |
 */
export const STORE_ITEM_ATTRIBUTES = {
  value: "v",
  createdAt: "ca",
  updatedAt: "ua",
  ttl: TTL_ATTRIBUTE,
  ttlMinutes: "tm",
  vectors: "e",
} as const;

/**
 * Attribute names of a tenant's assistants (`pk = <tenant>##assistants`, see keys.ts). Two kinds of item: the
 * assistant (`sk = a#<assistant id>`), holding the content of the version it serves, and one item per version
 * (`sk = v#<assistant id>#<version>`). The assistant item is where every change commits (one conditional
 * UpdateItem); version items are copies written after it, so a version lost to a crash is rewritten from the
 * assistant item before that item moves on. The requests are in assistant-items.ts.
 *
 * | attribute | on        | holds                                                                            |
 * |-----------|-----------|----------------------------------------------------------------------------------|
 * | `k`       | both      | item kind: `a` the assistant, `v` a version                                      |
 * | `id`      | both      | the assistant id                                                                 |
 * | `gid`     | both      | the graph id                                                                     |
 * | `n`       | both      | the name                                                                         |
 * | `d`       | both      | the description (absent: none)                                                   |
 * | `cfg`     | both      | the config, as JSON text                                                         |
 * | `ctx`     | both      | the context, as JSON text                                                        |
 * | `md`      | both      | the metadata, as JSON text                                                       |
 * | `ver`     | both      | assistant: the version it serves; version: its number                            |
 * | `mv`      | assistant | the newest version's number (a patch makes `mv + 1`)                             |
 * | `ca`      | both      | creation time, epoch milliseconds (assistant: also names its life, see `g`)      |
 * | `ua`      | assistant | last change, epoch milliseconds                                                  |
 * | `vca`     | assistant | creation time of the version it serves, epoch milliseconds                       |
 * | `g`       | version   | the `ca` of the assistant it belongs to: versions left by a deleted assistant of  |
 * |           |           | the same id are never read, and never overwrite the versions of a newer one       |
 */
export const ASSISTANT_ITEM_ATTRIBUTES = {
  kind: "k",
  assistantId: "id",
  graphId: "gid",
  name: "n",
  description: "d",
  config: "cfg",
  context: "ctx",
  metadata: "md",
  version: "ver",
  newestVersion: "mv",
  createdAt: "ca",
  updatedAt: "ua",
  versionCreatedAt: "vca",
  life: "g",
} as const;

/**
 * Attribute names of a cron item (`pk = <tenant>##crons`, `sk = k#<cron id>`). A cron due for a sweep also
 * carries the threads-unsettled index's keys, with values no thread record has: `unsettled = c<shard>` (threads
 * use `u<shard>`) and `created_at` = when the sweep should look at it (epoch ms). A disabled or ended cron
 * carries neither, so the index holds exactly the live crons and the sweep reads only those due.
 */
export const CRON_ITEM_ATTRIBUTES = {
  /** Item kind: `k`. */
  kind: "k",
  /** JSON of the cron (its schedule, payload, metadata and times). */
  body: "d",
  /** The cron's revision: every write is conditioned on the one its writer read. */
  revision: "rev",
  /** `c<shard>` while the cron is live (partition key of the threads-unsettled index). */
  duePartition: THREAD_ATTRIBUTES.unsettled,
  /** When a sweep should look at the cron, epoch ms (sort key of the threads-unsettled index). */
  dueAt: THREAD_ATTRIBUTES.createdAt,
} as const;

/** Partitions of the due-crons entries of the threads-unsettled index (`c0` to `c9`). */
export const DUE_CRON_SHARDS = 10;

/** Attribute names of run stream event items (`sk = s#<run id>#<seq>#<part>` in the thread's partition). */
export const RUN_EVENT_ITEM_ATTRIBUTES = {
  /** Item kind: `s`. */
  kind: "k",
  /** The thread generation the event belongs to (removed with its thread). */
  generation: "g",
  /** The event's name (first part only). */
  event: "e",
  /** How many parts the event's data takes (first part only). */
  parts: "p",
  /** This part's bytes of the event's UTF-8 JSON data. */
  data: "d",
} as const;

/**
 * Attribute names of API key items (see keys.ts): the lookup item (`pk = #api-key#<key id>`, `sk = k`), the one
 * an authorizer reads, and the tenant's listing item (`pk = <tenant>##api-keys`, `sk = k#<key id>`), a copy of
 * its state without the hash for `list`. Only the SHA-256 of the key is stored, never the key. The requests are
 * in api-key-items.ts.
 *
 * | attribute | on      | holds                                                                          |
 * |-----------|---------|--------------------------------------------------------------------------------|
 * | `h`       | lookup  | SHA-256 of the whole key, hex                                                  |
 * | `t`       | lookup  | the tenant the key acts for                                                    |
 * | `id`      | listing | the key id                                                                     |
 * | `s`       | both    | the subject (who the key stands for inside the tenant)                        |
 * | `ca`      | both    | creation time, epoch milliseconds                                              |
 * | `xa`      | both    | expiry, epoch milliseconds: refused from then on                               |
 * | `ra`      | both    | revocation time, epoch milliseconds (absent: not revoked)                      |
 * | `ttl`     | both    | epoch seconds DynamoDB removes the item at: a week after the expiry            |
 */
export const API_KEY_ITEM_ATTRIBUTES = {
  hash: "h",
  tenant: "t",
  keyId: "id",
  subject: "s",
  createdAt: "ca",
  expiresAt: "xa",
  revokedAt: "ra",
  ttl: TTL_ATTRIBUTE,
} as const;
