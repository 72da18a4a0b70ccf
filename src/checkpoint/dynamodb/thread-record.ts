/**
 * The per-thread record (`sk = "m"`): operational metadata kept next to the checkpoints, in the same partition.
 * The saver maintains status, times and expiry; the HTTP runtime adds the run lease and the pending interrupts.
 * Attribute names are short because DynamoDB bills attribute names as item bytes.
 */
export const THREAD_STATUSES = ["RUNNING", "PAUSED_FOR_HUMAN", "COMPLETED", "ERROR"] as const;
export type ThreadStatus = (typeof THREAD_STATUSES)[number];

export const THREAD_ATTRIBUTES = {
  /** Tenant id (partition key of the threads-by-tenant index). */
  tenant: "tenant",
  /** `<tenant>#<STATUS>` (partition key of the threads-by-status index). */
  tenantStatus: "tenant_status",
  /** The thread id, unescaped. */
  threadId: "thread_id",
  status: "status",
  /** Comma-separated names of the nodes that run next (paused threads). */
  nextNode: "next_node",
  /** Epoch milliseconds. */
  createdAt: "created_at",
  /** Epoch milliseconds (sort key of both indexes). */
  updatedAt: "updated_at",
  /** Epoch seconds: when the whole thread expires (DynamoDB TTL attribute). */
  ttl: "ttl",
  /** Id of the run that holds the thread (HTTP runtime). */
  leaseOwner: "lease_owner",
  /** Epoch milliseconds at which the lease lapses (the Lambda deadline of its holder). */
  leaseExpiresAt: "lease_expires_at",
  /** JSON of the pending interrupts `[{id, value}]` (HTTP runtime, for the approvals inbox). */
  interrupts: "interrupts",
  /** Free-form JSON metadata of the thread (HTTP runtime: `threads.create({metadata})`). */
  metadata: "metadata",
} as const;

export function buildTenantStatus(tenantId: string, status: ThreadStatus): string {
  return `${tenantId}#${status}`;
}
