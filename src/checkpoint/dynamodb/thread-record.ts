import { InvalidIdentifierError } from "../../shared/errors";

/**
 * The per-thread record (`sk = "m"`): operational metadata kept next to the checkpoints, in the same partition.
 * The saver maintains status, times and expiry; the HTTP runtime adds the run lease and the pending interrupts.
 * Attribute names are short because DynamoDB bills attribute names as item bytes.
 */
export const THREAD_STATUSES = ["RUNNING", "PAUSED_FOR_HUMAN", "COMPLETED", "ERROR"] as const;
export type ThreadStatus = (typeof THREAD_STATUSES)[number];

/** Statuses that wait for a person, served by the threads-by-status index (the approvals inbox). */
export const INBOX_STATUSES: readonly ThreadStatus[] = ["PAUSED_FOR_HUMAN", "ERROR"];

export const THREAD_ATTRIBUTES = {
  /** Tenant id (partition key of the threads-by-tenant index). */
  tenant: "tenant",
  /** `<tenant>#<STATUS>` for statuses in INBOX_STATUSES only (partition key of the sparse inbox index). */
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
  /**
   * Random id of the thread's current life. Every checkpoint, write and chunk carries it; items of an earlier
   * generation (an expired thread whose items the cleaner has not removed yet) are invisible and never revived.
   */
  generation: "gen",
  /** Id of the run that holds the thread (HTTP runtime). */
  leaseOwner: "lease_owner",
  /** Epoch milliseconds at which the lease lapses (the Lambda deadline of its holder). */
  leaseExpiresAt: "lease_expires_at",
  /** JSON of the pending interrupts `[{id, value}]` (HTTP runtime, for the approvals inbox). */
  interrupts: "interrupts",
  /** The assistant that last ran the thread (HTTP runtime: state reads need its graph). */
  assistantId: "assistant_id",
  /** Free-form JSON metadata of the thread (HTTP runtime: `threads.create({metadata})`). */
  metadata: "metadata",
} as const;

export function buildTenantStatus(tenantId: string, status: ThreadStatus): string {
  return `${tenantId}#${status}`;
}

/** An UpdateItem fragment: SET/REMOVE clauses with their attribute names and values. */
export interface UpdateFragment {
  set: string[];
  remove: string[];
  names: Record<string, string>;
  values: Record<string, unknown>;
}

export function emptyUpdate(): UpdateFragment {
  return { set: [], remove: [], names: {}, values: {} };
}

/** Merges fragments and renders the UpdateExpression. */
export function renderUpdate(...fragments: UpdateFragment[]): {
  UpdateExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
} {
  const set = fragments.flatMap((fragment) => fragment.set);
  const remove = fragments.flatMap((fragment) => fragment.remove);
  const values = Object.assign({}, ...fragments.map((fragment) => fragment.values));
  const parts = [];
  if (set.length > 0) parts.push(`SET ${set.join(", ")}`);
  if (remove.length > 0) parts.push(`REMOVE ${remove.join(", ")}`);
  return {
    UpdateExpression: parts.join(" "),
    ExpressionAttributeNames: Object.assign({}, ...fragments.map((fragment) => fragment.names)),
    ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
  };
}

/**
 * Creates the thread record if needed and renews its expiry: identity, times, `ttl`, and a generation that is
 * kept when the record exists. The saver sends it on a thread's first write; the runtime merges it into the
 * conditional update that takes the run lease, so a run pays for one record write, not two.
 */
export function buildThreadTouch(input: {
  tenantId: string;
  threadId: string;
  nowMs: number;
  ttlSeconds: number;
  newGeneration: string;
}): UpdateFragment {
  const a = THREAD_ATTRIBUTES;
  return {
    set: [
      "#tenant = :tenant",
      "#thread_id = :thread_id",
      "#updated_at = :now",
      "#created_at = if_not_exists(#created_at, :now)",
      "#ttl = :ttl",
      "#gen = if_not_exists(#gen, :gen)",
    ],
    remove: [],
    names: {
      "#tenant": a.tenant,
      "#thread_id": a.threadId,
      "#updated_at": a.updatedAt,
      "#created_at": a.createdAt,
      "#ttl": a.ttl,
      "#gen": a.generation,
    },
    values: {
      ":tenant": input.tenantId,
      ":thread_id": input.threadId,
      ":now": input.nowMs,
      ":ttl": Math.floor(input.nowMs / 1000) + input.ttlSeconds,
      ":gen": input.newGeneration,
    },
  };
}

/** Sets the status (and the inbox index key) and the next node; a status without a next node removes it. */
export function buildStatusUpdate(
  tenantId: string,
  status: ThreadStatus,
  nextNode?: string,
): UpdateFragment {
  const a = THREAD_ATTRIBUTES;
  const fragment: UpdateFragment = {
    set: ["#status = :status", "#tenant_status = :tenant_status"],
    remove: [],
    names: { "#status": a.status, "#tenant_status": a.tenantStatus, "#next_node": a.nextNode },
    values: { ":status": status, ":tenant_status": buildTenantStatus(tenantId, status) },
  };
  if (nextNode !== undefined && nextNode !== "") {
    fragment.set.push("#next_node = :next_node");
    fragment.values[":next_node"] = nextNode;
  } else {
    fragment.remove.push("#next_node");
  }
  return fragment;
}

export function assertThreadStatus(status: unknown): ThreadStatus {
  if (typeof status === "string" && (THREAD_STATUSES as readonly string[]).includes(status)) {
    return status as ThreadStatus;
  }
  throw new InvalidIdentifierError(
    "status",
    `expected one of ${THREAD_STATUSES.join(", ")}, got ${JSON.stringify(status)}`,
  );
}
