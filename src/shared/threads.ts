import type { CancelAction, MultitaskStrategy } from "./runs";

/**
 * The thread record's model: what every thread store (DynamoDB's thread records, the in-memory one) keeps per
 * thread, and the inputs of its run methods. The rules themselves are the rulebook's (run-rules.ts): stores differ
 * in where they keep a record, never in how it changes.
 */
export const THREAD_STATUSES = ["RUNNING", "PAUSED_FOR_HUMAN", "COMPLETED", "ERROR"] as const;
export type ThreadStatus = (typeof THREAD_STATUSES)[number];

/** Statuses that wait for a person: the approvals inbox lists them from an index of their own. */
export const INBOX_STATUSES: readonly ThreadStatus[] = ["PAUSED_FOR_HUMAN", "ERROR"];

export function isThreadStatus(value: unknown): value is ThreadStatus {
  return typeof value === "string" && (THREAD_STATUSES as readonly string[]).includes(value);
}

/** One interrupt a paused thread waits on, as kept on the thread record (the approvals inbox shows it). */
export interface PendingInterrupt {
  id: string;
  value: unknown;
  /** Task that raised it (the SDK's `Thread.interrupts` is keyed by task id). */
  taskId?: string;
}

/** A thread record as the runtime sees it. Times are epoch milliseconds. */
export interface ThreadRecord {
  threadId: string;
  /** Unset for a thread that was created but never run. */
  status?: ThreadStatus;
  nextNodes: string[];
  interrupts: PendingInterrupt[];
  metadata: Record<string, unknown>;
  /** The graph the thread runs (the one its last run used); unset for a thread never run. */
  graphId?: string;
  createdAt: number;
  updatedAt: number;
  leaseOwner?: string;
  leaseExpiresAt?: number;
  /** Runs waiting for the thread, in order (background runs). */
  runQueue: string[];
  /** The lease holder was asked to stop. */
  cancelAction?: CancelAction;
  /** A run between two legs: it holds the thread until its next leg starts. */
  continuing?: string;
}

export interface ReleaseLeaseInput {
  tenantId: string;
  threadId: string;
  owner: string;
  now: number;
  /** Status to leave the thread in; unset restores a never-run thread. */
  status: ThreadStatus | undefined;
  nextNodes: string[];
  interrupts: PendingInterrupt[];
  /** The graph the thread now runs (or had, restored after a run rejected once the lease was taken). */
  graphId?: string;
  /** Write the outcome but keep the lease until it lapses (an aborted node may still be running). */
  keepLease?: boolean;
  /** With keepLease: when the kept lease lapses (epoch ms); unset keeps its current expiry. */
  leaseUntil?: number;
}

export interface LockThreadInput {
  tenantId: string;
  threadId: string;
  owner: string;
  expiresAt: number;
  now: number;
  /** What the lock is for (default `update`): the stores ignore it; authorization asks the matching handler. */
  purpose?: "update" | "delete";
}

export interface CreateThreadInput {
  tenantId: string;
  threadId: string;
  metadata: Record<string, unknown>;
  now: number;
  ifExists: "raise" | "do_nothing";
}

/** Fields threads can be listed by (LangGraph Server's `sort_by`). */
export const THREAD_SORT_FIELDS = ["created_at", "updated_at", "thread_id", "status"] as const;
export type ThreadSortField = (typeof THREAD_SORT_FIELDS)[number];

export interface ScanThreadsInput {
  tenantId: string;
  /** Only threads in this status; all threads when unset. */
  status?: ThreadStatus;
  /** Only these threads (read directly, in this order); all of the tenant's when unset. */
  ids?: string[];
  order: "asc" | "desc";
  /**
   * The search as its client sent it, in LangGraph Server's words (metadata, values, the SDK's status, limit,
   * offset): the value a `threads:search` authorization handler is given. Stores filter by status and ids only.
   */
  asked?: Record<string, unknown>;
}

/**
 * A tenant's thread records, read page by page as they are consumed: stop iterating and nothing more is read.
 * `orderedBy` is the field the records come sorted by (in the requested order); another order needs them all.
 */
export interface ThreadScan {
  orderedBy: "created_at" | "updated_at" | undefined;
  records: AsyncIterable<ThreadRecord>;
}

export interface PatchThreadInput {
  tenantId: string;
  threadId: string;
  /** Merged into the thread's metadata, key by key (LangGraph Server's `threads.update`). */
  metadata: Record<string, unknown>;
  now: number;
}

/**
 * Thread records, run leases and statuses, always scoped by tenant. Every method takes the tenant explicitly,
 * so one store serves all tenants of a container and no call can reach another tenant's thread.
 */
export interface ThreadStore {
  get(tenantId: string, threadId: string): Promise<ThreadRecord | undefined>;
  /** Throws ThreadExistsError (`ifExists: "raise"`) or ThreadExpiredError (the caller removes the old thread). */
  create(input: CreateThreadInput): Promise<ThreadRecord>;
  /** Writes the run's outcome and frees the lease in one write. False when the lease was no longer ours. */
  releaseLease(input: ReleaseLeaseInput): Promise<boolean>;
  /** The tenant's threads (optionally in one status, or only some ids), read lazily; see ThreadScan. */
  scan(input: ScanThreadsInput): ThreadScan;
  /**
   * Every tenant's threads with a run on them (RUNNING, queued or continuing), read lazily, for the recovery
   * sweep. A thread may be listed that settled meanwhile: the sweep reads each record before it acts.
   */
  unsettledThreads(): AsyncIterable<{ tenantId: string; threadId: string }>;
  /** Merges metadata into an existing thread's; throws ThreadNotFoundError. */
  patchMetadata(input: PatchThreadInput): Promise<ThreadRecord>;
  /**
   * Takes the lease for a change that is not a run (a deletion, a state update, a copy being filled), so no run
   * can start meanwhile; the status stays as it is. Returns the record as it was, or undefined when there is none
   * (or it expired). Throws ThreadBusyError while a run holds, continues on or waits for the thread.
   */
  lockThread(input: LockThreadInput): Promise<ThreadRecord | undefined>;
  /** Removes the record if the deletion still holds its lease (it may be gone already with the thread's items). */
  delete(tenantId: string, threadId: string, owner: string): Promise<void>;
  /**
   * Puts a run in the thread's queue as its strategy says: `reject` throws ThreadBusyError when a run holds,
   * continues on or waits for the thread; `interrupt`/`rollback` replace the waiting runs and ask the holder to
   * stop; `enqueue` appends. Throws ThreadNotFoundError when the thread is missing and may not be created.
   */
  enqueueRun(input: EnqueueRunInput): Promise<EnqueueRunResult>;
  /** Takes the thread for a run: the head of the queue, or (`runId`) a run's next leg. */
  claimRun(input: ClaimRunInput): Promise<ClaimRunOutcome>;
  /** Extends a run's lease; says whether it is still held and whether the run was asked to stop. */
  renewRunLease(input: RenewRunLeaseInput): Promise<RunLeaseState>;
  /** Asks a run to stop: removed from the queue when waiting, marked when holding the thread. */
  cancelRun(input: CancelRunInput): Promise<"running" | "queued" | "absent">;
  /** Ends a run's lease (a release, a hand-off to its next leg, or a rollback). False when it was not held. */
  finishRun(input: FinishRunInput): Promise<FinishRunResult>;
}

export interface EnqueueRunInput {
  tenantId: string;
  threadId: string;
  runId: string;
  strategy: MultitaskStrategy;
  now: number;
  /** Create the thread when it does not exist (`if_not_exists: "create"`, stateless runs). */
  createIfMissing: boolean;
  /** A resume: checked against the thread when it would start at once (nothing holds or waits for it). */
  resume?: ResumeCheck;
  /** Merged into the thread's metadata, key by key, in the same write (the graph and assistant it runs). */
  metadata?: Record<string, unknown>;
  /**
   * The caller runs the run itself when it may start at once: then the run takes the thread's lease until this
   * time (epoch ms) in the same write, instead of joining the queue for a claim (one write fewer).
   */
  claimUntil?: number;
  /** A run that is not a resume refuses a thread paused for a human (`/invoke`: a re-sent start keeps it). */
  rejectPaused?: boolean;
}

/** What a resume needs of a paused thread. */
export interface ResumeCheck {
  graphId: string;
  /** The interrupt ids a resume map names: each must be pending. */
  interruptIds?: string[];
}

export interface EnqueueRunResult {
  /** Runs this one cancels (`interrupt`/`rollback`): the one holding the thread, and those it replaces. */
  cancelled: Array<{ runId: string; state: "running" | "queued" }>;
  /** The run is first in the queue and no run holds the thread: a claim now takes it. */
  startsNow: boolean;
  /** With `claimUntil`: the run took the thread at once (it is not in the queue). */
  claimed?: ClaimedRun;
}

export interface ClaimRunInput {
  tenantId: string;
  threadId: string;
  now: number;
  /** When the lease lapses unless renewed (a short heartbeat lease, or the leg's deadline). */
  expiresAt: number;
  /** Continue this run (its next leg); undefined takes the run at the head of the queue. */
  runId?: string;
}

export interface ClaimedRun {
  runId: string;
  /** The record as it was before the claim (what a failed start restores). */
  previous: ThreadRecord;
  /** The claim created the thread: it has no checkpoint, and only this run may write one while it holds it. */
  createdThread?: boolean;
}

/**
 * What a claim got: the thread for a run; a wait (the run's previous leg keeps the lease until `until`, epoch
 * ms, because a node it aborted may still be running); a stalled run to take over before any queued one (its
 * process died: see run-rules.ts); or nothing to do (no run waits, or a live holder takes the next one itself).
 */
export type ClaimRunOutcome =
  | { kind: "claimed"; run: ClaimedRun }
  | { kind: "wait"; until: number }
  | { kind: "stalled"; runId: string }
  | { kind: "none" };

export interface RenewRunLeaseInput {
  tenantId: string;
  threadId: string;
  runId: string;
  expiresAt: number;
}

export interface RunLeaseState {
  /** False when the lease was lost (another holder, or the thread is gone). */
  held: boolean;
  /** Set when the run was asked to stop. */
  cancel?: CancelAction;
}

export interface CancelRunInput {
  tenantId: string;
  threadId: string;
  runId: string;
  action: CancelAction;
}

/** What a finish did: whether the lease was still the caller's, and whether runs wait in the queue now. */
export interface FinishRunResult {
  /** False when the lease was no longer the caller's: nothing was written. */
  applied: boolean;
  /** Runs wait for the thread after this finish: whoever finished takes the next (none: nothing to do). */
  waiting: boolean;
}

/** How a run's lease ends, beyond ReleaseLeaseInput: a hand-off to the next leg. */
export interface FinishRunInput extends ReleaseLeaseInput {
  /** Keep the thread for this run's next leg (the lease stays, marked as continuing). */
  handOff?: boolean;
}
