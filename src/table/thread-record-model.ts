import { randomBytes } from "node:crypto";
import type { CancelAction } from "../shared/runs";
import {
  INBOX_STATUSES,
  isThreadStatus,
  type PendingInterrupt,
  type ThreadRecord,
  type ThreadStatus,
} from "../shared/threads";
import type { Item, ItemKey } from "./client";
import { TABLE_KEYS, THREAD_ATTRIBUTES as A } from "./definition";
import type { ExpiryPolicy } from "./expiry";
import { expression, updateFragment, type Expression, type UpdateFragment } from "./expressions";
import { THREAD_RECORD_SK } from "./keys";

/**
 * The thread record's shape in the table: its key, its mapping to the runtime's ThreadRecord, and the named
 * update fragments and conditions the repository (thread-records.ts, with thread-rule-writer.ts) builds its
 * requests from.
 */
export function recordKey(pk: string): ItemKey {
  return { [TABLE_KEYS.partitionKey]: pk, [TABLE_KEYS.sortKey]: THREAD_RECORD_SK };
}

export function newGeneration(): string {
  return randomBytes(8).toString("hex");
}

export function tenantStatus(tenantId: string, status: ThreadStatus): string {
  return `${tenantId}#${status}`;
}

/** Sets the status (and, for inbox statuses, the inbox index key) and the next node; no next node removes it. */
export function statusFragment(
  tenantId: string,
  status: ThreadStatus,
  nextNode?: string,
): UpdateFragment {
  const inbox = INBOX_STATUSES.includes(status);
  return updateFragment({
    set: [
      "#status = :status",
      ...(inbox ? ["#tenant_status = :tenant_status"] : []),
      ...(nextNode ? ["#next_node = :next_node"] : []),
    ],
    remove: [...(inbox ? [] : ["#tenant_status"]), ...(nextNode ? [] : ["#next_node"])],
    names: { "#status": A.status, "#tenant_status": A.tenantStatus, "#next_node": A.nextNode },
    values: {
      ":status": status,
      ...(inbox ? { ":tenant_status": tenantStatus(tenantId, status) } : {}),
      ...(nextNode ? { ":next_node": nextNode } : {}),
    },
  });
}

/** Creates the record if needed and renews its expiry; the generation is kept when the record exists. */
export function touchFragment(
  tenantId: string,
  threadId: string,
  nowMs: number,
  expiry: ExpiryPolicy,
  generation: string,
): UpdateFragment {
  return updateFragment({
    set: [
      "#tenant = :tenant",
      "#thread_id = :thread_id",
      "#updated_at = :now_ms",
      "#created_at = if_not_exists(#created_at, :now_ms)",
      "#ttl = :ttl",
      "#gen = if_not_exists(#gen, :gen)",
    ],
    names: {
      "#tenant": A.tenant,
      "#thread_id": A.threadId,
      "#updated_at": A.updatedAt,
      "#created_at": A.createdAt,
      "#ttl": A.ttl,
      "#gen": A.generation,
    },
    values: {
      ":tenant": tenantId,
      ":thread_id": threadId,
      ":now_ms": nowMs,
      ":ttl": expiry.renewedExpiry(nowMs),
      ":gen": generation,
    },
  });
}

export function recordExists(): Expression {
  return expression("attribute_exists(#pk)", { "#pk": TABLE_KEYS.partitionKey });
}

export function recordAbsent(): Expression {
  return expression("attribute_not_exists(#pk)", { "#pk": TABLE_KEYS.partitionKey });
}

export function toRecord(item: Item): ThreadRecord {
  const status: unknown = item[A.status];
  const next = item[A.nextNode] as string | undefined;
  return {
    threadId: String(item[A.threadId] ?? ""),
    status: isThreadStatus(status) ? status : undefined,
    nextNodes: next ? next.split(",") : [],
    interrupts: parseJson<PendingInterrupt[]>(item[A.interrupts], []),
    metadata: parseJson<Record<string, unknown>>(item[A.metadata], {}),
    graphId: item[A.graphId] as string | undefined,
    createdAt: Number(item[A.createdAt] ?? 0),
    updatedAt: Number(item[A.updatedAt] ?? 0),
    leaseOwner: item[A.leaseOwner] as string | undefined,
    leaseExpiresAt:
      item[A.leaseExpiresAt] === undefined ? undefined : Number(item[A.leaseExpiresAt]),
    runQueue: Array.isArray(item[A.runQueue]) ? (item[A.runQueue] as string[]) : [],
    cancelAction: isCancelAction(item[A.cancelAction]) ? item[A.cancelAction] : undefined,
    continuing: item[A.continuing] as string | undefined,
  };
}

function isCancelAction(value: unknown): value is CancelAction {
  return value === "interrupt" || value === "rollback";
}

function parseJson<T>(text: unknown, fallback: T): T {
  if (typeof text !== "string") return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/** The attribute still holds what was read (absent when it was absent): an optimistic-concurrency check. */
export function unchanged(placeholder: string, attribute: string, value: unknown): Expression {
  const name = `#${placeholder}`;
  if (value === undefined)
    return expression(`attribute_not_exists(${name})`, { [name]: attribute });
  return expression(
    `${name} = :was_${placeholder}`,
    { [name]: attribute },
    { [`:was_${placeholder}`]: value },
  );
}
