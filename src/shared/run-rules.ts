import { randomUUID } from "node:crypto";
import {
  AssistantMismatchError,
  NothingToResumeError,
  ThreadBusyError,
  ThreadNotFoundError,
  ThreadPausedError,
} from "./errors";
import type {
  CancelRunInput,
  ClaimRunInput,
  ClaimRunOutcome,
  EnqueueRunInput,
  EnqueueRunResult,
  FinishRunInput,
  FinishRunResult,
  LockThreadInput,
  RenewRunLeaseInput,
  ResumeCheck,
  RunLeaseState,
  ThreadRecord,
} from "./threads";

/**
 * The run rulebook: every change a run or a thread lock makes to a thread record, as pure functions
 * of the record and one event. A rule returns the record to write (or none when nothing changes) and what the
 * caller learns (its effects: runs to stop, whether to start now, a claimed run...), or throws a domain error
 * before anything is written. The thread stores (DynamoDB's thread records, the in-memory one) only read, apply
 * and write: neither decides a rule of its own, so both follow this one file.
 *
 * Terms, at a time `now` (epoch ms):
 * - leased: a lease is held and has not lapsed;
 * - holder: the run holding the thread (its lease), or continuing on it between two legs;
 * - busy: a holder, or runs waiting in the queue;
 * - stalled: nothing holds the lease, yet a run is still on the thread: one handed over whose next leg never
 *   came, or one that was RUNNING when its process died. Only a takeover of that run frees the thread.
 */

/** What a rule decided: the record to write (none: nothing changes) and the caller's result. */
export interface Decision<Result> {
  next?: ThreadRecord;
  result: Result;
}

export function isLeased(record: ThreadRecord, now: number): boolean {
  return record.leaseOwner !== undefined && (record.leaseExpiresAt ?? 0) >= now;
}

export function isBusy(record: ThreadRecord, now: number): boolean {
  return isLeased(record, now) || record.continuing !== undefined || record.runQueue.length > 0;
}

export function holderOf(record: ThreadRecord, now: number): string | undefined {
  return isLeased(record, now) ? record.leaseOwner : record.continuing;
}

/**
 * The run a thread waits on while nothing holds its lease (see the terms above), if any. A lapsed lease of a
 * lock (an owner from {@link lockOwner}) is no run to recover: it is simply free, and the next run or lock
 * takes the thread as it finds it.
 */
export function stalledRunOf(record: ThreadRecord, now: number): string | undefined {
  if (isLeased(record, now)) return undefined;
  if (record.continuing !== undefined) return record.continuing;
  const owner = record.leaseOwner;
  return record.status === "RUNNING" && owner !== undefined && !isLockOwner(owner)
    ? owner
    : undefined;
}

// Owners of locks (changes that are not runs) start with this; run ids never do.
const LOCK_OWNER_PREFIX = "~";

/** A lock's lease owner: never mistaken for a run's id. */
export function lockOwner(): string {
  return `${LOCK_OWNER_PREFIX}${randomUUID()}`;
}

export function isLockOwner(owner: string): boolean {
  return owner.startsWith(LOCK_OWNER_PREFIX);
}

export function newThreadRecord(
  threadId: string,
  now: number,
  metadata: Record<string, unknown> = {},
): ThreadRecord {
  return {
    threadId,
    nextNodes: [],
    interrupts: [],
    metadata: { ...metadata },
    createdAt: now,
    updatedAt: now,
    runQueue: [],
  };
}

/** A copy a rule may change freely (values are JSON data). */
export function copyRecord(record: ThreadRecord): ThreadRecord {
  return {
    ...record,
    nextNodes: [...record.nextNodes],
    interrupts: record.interrupts.map((item) => ({ ...item })),
    metadata: { ...record.metadata },
    runQueue: [...record.runQueue],
  };
}

// ------------------------------------------------------------------ background runs

/**
 * A run joins the thread's queue as its strategy says. `reject` refuses a busy thread; `interrupt` and
 * `rollback` replace the waiting runs and ask the holder to stop; `enqueue` appends. A resume on an idle thread
 * is checked here, so a resume that cannot apply is refused before a run record waits for it.
 */
export function decideEnqueue(
  record: ThreadRecord | undefined,
  event: EnqueueRunInput,
): Decision<EnqueueRunResult> {
  if (!record && !event.createIfMissing) throw new ThreadNotFoundError(event.threadId);
  const next = record ? copyRecord(record) : newThreadRecord(event.threadId, event.now);
  const busy = isBusy(next, event.now);
  // A stalled run is still the thread's (its takeover comes first), as LangGraph Server's `running` run is.
  if (event.strategy === "reject") {
    if (busy) throw new ThreadBusyError(event.threadId);
    const stalled = stalledRunOf(next, event.now);
    if (stalled !== undefined) throw new ThreadBusyError(event.threadId, stalled);
  }
  if (event.resume && !busy) {
    const rejection = resumeRejection(next, event.resume);
    if (rejection) throw rejection;
  }
  if (!event.resume && event.rejectPaused && next.status === "PAUSED_FOR_HUMAN") {
    throw new ThreadPausedError(event.threadId);
  }
  const cancelled: EnqueueRunResult["cancelled"] = [];
  const holder = holderOf(next, event.now);
  if (event.strategy === "interrupt" || event.strategy === "rollback") {
    for (const runId of next.runQueue) cancelled.push({ runId, state: "queued" });
    next.runQueue = [];
    if (holder !== undefined) {
      cancelled.push({ runId: holder, state: "running" });
      next.cancelAction = event.strategy;
    }
  }
  const startsNow = next.runQueue.length === 0 && holder === undefined;
  if (event.metadata) next.metadata = { ...next.metadata, ...event.metadata };
  next.updatedAt = event.now;
  // A stalled run is taken over before this one starts: the run queues and a claim finds the stalled one.
  if (startsNow && event.claimUntil !== undefined && stalledRunOf(next, event.now) === undefined) {
    // What a failed start restores: the record as it was, or as this write creates it.
    const previous = record ?? copyRecord(next);
    next.leaseOwner = event.runId;
    next.leaseExpiresAt = event.claimUntil;
    next.status = "RUNNING";
    delete next.cancelAction;
    const claimed = { runId: event.runId, previous, ...(record ? {} : { createdThread: true }) };
    return { next, result: { cancelled, startsNow, claimed } };
  }
  next.runQueue.push(event.runId);
  return { next, result: { cancelled, startsNow } };
}

/**
 * Takes the thread for a run. With a run id: that run's next leg (after a hand-over), or the takeover of that run
 * when it stalled; a run a live lease holds is never claimed twice. Without: the head of the queue, unless a
 * stalled run must be taken over first (the queue behind it waits for it).
 */
export function decideClaim(
  record: ThreadRecord | undefined,
  event: ClaimRunInput,
): Decision<ClaimRunOutcome> {
  if (!record) return { result: { kind: "none" } };
  const leased = isLeased(record, event.now);
  let runId: string;
  const next = copyRecord(record);
  if (event.runId !== undefined) {
    if (record.continuing === event.runId) {
      if (leased) return { result: { kind: "wait", until: record.leaseExpiresAt! + 1 } };
    } else if (record.leaseOwner !== event.runId || leased || record.status !== "RUNNING") {
      return { result: { kind: "none" } };
    }
    runId = event.runId;
    delete next.continuing;
  } else {
    if (leased) return { result: { kind: "none" } };
    const stalled = stalledRunOf(record, event.now);
    if (stalled !== undefined) return { result: { kind: "stalled", runId: stalled } };
    const head = record.runQueue[0];
    if (head === undefined) return { result: { kind: "none" } };
    runId = head;
    next.runQueue.shift();
    delete next.cancelAction;
  }
  next.leaseOwner = runId;
  next.leaseExpiresAt = event.expiresAt;
  next.status = "RUNNING";
  next.updatedAt = event.now;
  return { next, result: { kind: "claimed", run: { runId, previous: record } } };
}

/** A running leg extends its lease, and learns whether it was asked to stop. */
export function decideRenew(
  record: ThreadRecord | undefined,
  event: RenewRunLeaseInput,
): Decision<RunLeaseState> {
  if (!record || record.leaseOwner !== event.runId) return { result: { held: false } };
  const next = copyRecord(record);
  next.leaseExpiresAt = event.expiresAt;
  return {
    next,
    result: record.cancelAction ? { held: true, cancel: record.cancelAction } : { held: true },
  };
}

/** Asks a run to stop: a waiting run leaves the queue; the holder is marked (it stops at its next renewal). */
export function decideCancel(
  record: ThreadRecord | undefined,
  event: CancelRunInput,
): Decision<"running" | "queued" | "absent"> {
  if (!record) return { result: "absent" };
  const position = record.runQueue.indexOf(event.runId);
  if (position >= 0) {
    const next = copyRecord(record);
    next.runQueue.splice(position, 1);
    return { next, result: "queued" };
  }
  if (record.leaseOwner === event.runId || record.continuing === event.runId) {
    const next = copyRecord(record);
    next.cancelAction = event.action;
    return { next, result: "running" };
  }
  return { result: "absent" };
}

/**
 * Writes a holder's outcome and frees (or hands over) the thread; not applied when the lease was no longer its
 * own. Says whether runs wait in the queue, so the holder knows whether to take the next one.
 */
export function decideFinish(
  record: ThreadRecord | undefined,
  event: FinishRunInput,
): Decision<FinishRunResult> {
  if (!record || record.leaseOwner !== event.owner) {
    return { result: { applied: false, waiting: false } };
  }
  const next = copyRecord(record);
  if (event.status === undefined) delete next.status;
  else next.status = event.status;
  next.nextNodes = [...event.nextNodes];
  next.interrupts = event.interrupts.map((item) => ({ ...item }));
  next.updatedAt = event.now;
  if (event.graphId !== undefined) next.graphId = event.graphId;
  if (event.keepLease && event.leaseUntil !== undefined) next.leaseExpiresAt = event.leaseUntil;
  const result = { applied: true, waiting: next.runQueue.length > 0 };
  if (event.handOff) {
    next.continuing = event.owner;
    return { next, result };
  }
  delete next.continuing;
  delete next.cancelAction;
  if (!event.keepLease) {
    delete next.leaseOwner;
    delete next.leaseExpiresAt;
  }
  return { next, result };
}

// ------------------------------------------------------------------ locks

/**
 * A change that is not a run (a deletion, a state update, a copy being filled) takes the lease so no run starts
 * meanwhile; the status stays. Result: the record as it was, or undefined when there is none.
 */
export function decideLock(
  record: ThreadRecord | undefined,
  event: LockThreadInput,
): Decision<ThreadRecord | undefined> {
  if (!record) return { result: undefined };
  if (isBusy(record, event.now) || stalledRunOf(record, event.now) !== undefined) {
    throw new ThreadBusyError(event.threadId);
  }
  const next = copyRecord(record);
  next.leaseOwner = event.owner;
  next.leaseExpiresAt = event.expiresAt;
  return { next, result: record };
}

/** Why a resume may not apply to `record`, or undefined when it may. */
export function resumeRejection(
  record: ThreadRecord,
  resume: ResumeCheck,
): NothingToResumeError | AssistantMismatchError | undefined {
  if (record.status !== "PAUSED_FOR_HUMAN") {
    return new NothingToResumeError(record.threadId, "the thread is not paused at an interrupt");
  }
  if (record.graphId !== undefined && record.graphId !== resume.graphId) {
    return new AssistantMismatchError(record.threadId, record.graphId, resume.graphId);
  }
  const pending = new Set(record.interrupts.map((item) => item.id));
  const unknown = (resume.interruptIds ?? []).find((id) => !pending.has(id));
  if (unknown !== undefined) {
    return new NothingToResumeError(record.threadId, `interrupt ${unknown} is not pending`);
  }
  return undefined;
}
