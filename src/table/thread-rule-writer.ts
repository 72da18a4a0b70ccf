import { ThreadExpiredError } from "../shared/errors";
import type * as rules from "../shared/run-rules";
import { sleep } from "../shared/sleep";
import type { ThreadRecord } from "../shared/threads";
import type { Item, TableClient } from "./client";
import { THREAD_ATTRIBUTES as A, UNSETTLED_SHARDS } from "./definition";
import { isExpired, notExpired, type ExpiryPolicy } from "./expiry";
import {
  allOf,
  renderUpdate,
  updateFragment,
  type Expression,
  type UpdateFragment,
} from "./expressions";
import { threadPartitionKey, unsettledShard } from "./keys";
import type { ThreadRecordCache } from "./thread-record-cache";
import {
  newGeneration,
  recordAbsent,
  recordExists,
  recordKey,
  statusFragment,
  toRecord,
  touchFragment,
  unchanged,
} from "./thread-record-model";

// Refused rule writes retried at once before pausing between attempts (the record changed meanwhile).
const CONTENTION_ATTEMPTS_BEFORE_PAUSE = 1;

export interface RuleWriteOptions {
  renewLife?: boolean;
  expired?: "throw";
  /** A record this container has not seen is first taken to be absent (a refused write says otherwise). */
  guessAbsent?: boolean;
}

/** Writes the rulebook's decisions (run-rules.ts) on the thread record, for ThreadRecords. */
export class ThreadRuleWriter {
  constructor(
    private readonly table: TableClient,
    private readonly cache: ThreadRecordCache,
    private readonly expiry: ExpiryPolicy,
  ) {}

  /**
   * Applies one rule of the rulebook (run-rules.ts): decides on the record as this container last saw it (or as
   * one consistent read finds it), and writes what changed only if the record is still the one decided on (same
   * life, same revision). A refused write returns the record as it is, and the rule decides again on it, after a
   * short random pause when others are writing too: contention delays a change, it never refuses one. A
   * decision to change nothing is made on a fresh read, never on a copy that may be stale.
   */
  async apply<Result>(
    tenantId: string,
    threadId: string,
    now: number,
    rule: (record: ThreadRecord | undefined) => rules.Decision<Result>,
    options: RuleWriteOptions = {},
  ): Promise<Result> {
    const pk = threadPartitionKey(tenantId, threadId);
    let item = this.cache.lastSeen(pk);
    let fresh = false;
    if (item === undefined && !options.guessAbsent) {
      item = await this.table.get(recordKey(pk));
      fresh = true;
    }
    for (let attempt = 0; ; attempt++) {
      const live = item && !isExpired(item[A.ttl], now) ? item : undefined;
      if (item && !live && options.expired === "throw") {
        throw new ThreadExpiredError(threadId);
      }
      const record = live ? toRecord(live) : undefined;
      const { next, result } = rule(record);
      if (!next) {
        if (fresh) return result;
        item = await this.table.get(recordKey(pk));
        fresh = true;
        continue;
      }
      // An expired record is a gone thread: a rule never writes over it (its items must go first).
      if (item && !live) return rule(undefined).result;
      const outcome = await this.table.update(
        recordKey(pk),
        renderUpdate(
          this.changeOf(tenantId, live, next, now, options.renewLife === true),
          live ? allOf(recordExists(), notExpired(now), sameRevision(live)) : recordAbsent(),
        ),
        { returnValues: "ALL_NEW" },
      );
      if (outcome.applied) {
        this.cache.observe(pk, outcome.attributes);
        return result;
      }
      item = outcome.current;
      fresh = true;
      if (attempt >= CONTENTION_ATTEMPTS_BEFORE_PAUSE) await contentionPause(attempt);
    }
  }

  /** The update that turns `record` (undefined: none yet) into `next`: only the run fields that changed. */
  private changeOf(
    tenantId: string,
    live: Item | undefined,
    next: ThreadRecord,
    nowMs: number,
    renewLife: boolean,
  ): UpdateFragment[] {
    const record = live ? toRecord(live) : undefined;
    const fragments: UpdateFragment[] = [
      updateFragment({
        set: ["#rev = :rev"],
        names: { "#rev": A.revision },
        values: { ":rev": revisionOf(live) + 1 },
      }),
    ];
    if (renewLife || !record) {
      fragments.push(touchFragment(tenantId, next.threadId, nowMs, this.expiry, newGeneration()));
    } else if (next.updatedAt !== record.updatedAt) {
      fragments.push(setOrRemove("updated_at", A.updatedAt, next.updatedAt));
    }
    if (
      next.status !== record?.status ||
      next.nextNodes.join(",") !== (record?.nextNodes ?? []).join(",")
    ) {
      fragments.push(
        next.status === undefined
          ? updateFragment({
              remove: ["#status", "#tenant_status", "#next_node"],
              names: {
                "#status": A.status,
                "#tenant_status": A.tenantStatus,
                "#next_node": A.nextNode,
              },
            })
          : statusFragment(tenantId, next.status, next.nextNodes.join(",")),
      );
    }
    const interrupts = JSON.stringify(next.interrupts);
    if (interrupts !== JSON.stringify(record?.interrupts ?? [])) {
      fragments.push(setOrRemove("interrupts", A.interrupts, interrupts));
    }
    const metadata = JSON.stringify(next.metadata);
    if (metadata !== JSON.stringify(record?.metadata ?? {})) {
      fragments.push(setOrRemove("metadata", A.metadata, metadata));
    }
    const fields = [
      ["graph", A.graphId, next.graphId, record?.graphId],
      ["owner", A.leaseOwner, next.leaseOwner, record?.leaseOwner],
      ["expires", A.leaseExpiresAt, next.leaseExpiresAt, record?.leaseExpiresAt],
      ["cancel", A.cancelAction, next.cancelAction, record?.cancelAction],
      ["continuing", A.continuing, next.continuing, record?.continuing],
    ] as const;
    for (const [placeholder, attribute, value, was] of fields) {
      if (value !== was) fragments.push(setOrRemove(placeholder, attribute, value));
    }
    if (next.runQueue.join("\n") !== (record?.runQueue ?? []).join("\n")) {
      fragments.push(setOrRemove("queue", A.runQueue, next.runQueue));
    }
    // The recovery sweep's marker follows whether a run is on the thread; written only when that changes (a
    // record from before the marker existed gets it at its next write).
    const marked = live?.[A.unsettled] !== undefined;
    if (hasRunOn(next) !== marked) {
      const pk = threadPartitionKey(tenantId, next.threadId);
      fragments.push(
        setOrRemove(
          "unsettled",
          A.unsettled,
          marked ? undefined : unsettledShard(pk, UNSETTLED_SHARDS),
        ),
      );
    }
    return fragments;
  }
}

/** A run holds, continues on or waits for the thread (what the recovery sweep looks at). */
function hasRunOn(record: ThreadRecord): boolean {
  return (
    record.status === "RUNNING" || record.runQueue.length > 0 || record.continuing !== undefined
  );
}

/** The record's revision as read (0 before the rulebook first changed it). */
function revisionOf(item: Item | undefined): number {
  const revision = item?.[A.revision];
  return typeof revision === "number" ? revision : 0;
}

/** The record is still the life and the revision a decision was made on. */
function sameRevision(item: Item): Expression {
  return allOf(
    unchanged("gen", A.generation, item[A.generation]),
    unchanged("rev", A.revision, item[A.revision]),
  );
}

function setOrRemove(placeholder: string, attribute: string, value: unknown): UpdateFragment {
  const name = `#${placeholder}`;
  if (value === undefined) return updateFragment({ remove: [name], names: { [name]: attribute } });
  return updateFragment({
    set: [`${name} = :${placeholder}`],
    names: { [name]: attribute },
    values: { [`:${placeholder}`]: value },
  });
}

/** A random pause that grows with the attempts (full jitter, 5 ms doubling up to 250 ms). */
function contentionPause(attempt: number): Promise<void> {
  const ceiling = Math.min(250, 5 * 2 ** Math.min(attempt, 6));
  return sleep(Math.random() * ceiling);
}
