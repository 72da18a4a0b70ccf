import { InvalidRequestError, ThreadExistsError, ThreadNotFoundError } from "../../shared/errors";
import type {
  CancelRunInput,
  ClaimRunInput,
  ClaimRunOutcome,
  CreateThreadInput,
  EnqueueRunInput,
  EnqueueRunResult,
  FinishRunInput,
  FinishRunResult,
  LockThreadInput,
  PatchThreadInput,
  ReleaseLeaseInput,
  RenewRunLeaseInput,
  RunLeaseState,
  ScanThreadsInput,
  ThreadRecord,
  ThreadScan,
  ThreadStore,
} from "../../shared/threads";
import { allows, currentAccess, type RequestAccess } from "./request-access";

/**
 * Most records a search may pass over because the auth filters exclude them: a user with few threads in a tenant
 * with many is refused (422) rather than read the whole tenant on every search.
 */
export const MAX_FILTERED_OUT = 10_000;

/**
 * A thread store that applies the request's auth handlers (request-access.ts) to every thread it reads or
 * writes for a request; outside a request (the worker, cron fires, recovery) it is the store itself. A thread the
 * filters exclude is a missing thread (404), as another tenant's is; a search passes over it inside its own
 * read loop, so a page of N holds N of the user's threads when they exist. What a handler stamps on a value
 * (metadata, such as the owner) is what gets written.
 */
export class AuthorizedThreadStore implements ThreadStore {
  constructor(private readonly inner: ThreadStore) {}

  async get(tenantId: string, threadId: string): Promise<ThreadRecord | undefined> {
    const access = currentAccess();
    if (!access) return this.inner.get(tenantId, threadId);
    return this.readable(access, "threads:read", tenantId, threadId);
  }

  async create(input: CreateThreadInput): Promise<ThreadRecord> {
    const access = currentAccess();
    if (!access) return this.inner.create(input);
    const decision = await access.decide("threads:create", {
      thread_id: input.threadId,
      metadata: input.metadata,
      if_exists: input.ifExists,
    });
    const metadata = decision.value.metadata ?? {};
    const record = await this.inner.create({ ...input, metadata });
    // `do_nothing` answers with the thread already there: one the user may not see is taken (409), as on
    // LangGraph Server.
    if (record.createdAt !== input.now && !allows(decision, record.metadata)) {
      throw new ThreadExistsError(input.threadId);
    }
    return record;
  }

  scan(input: ScanThreadsInput): ThreadScan {
    const access = currentAccess();
    const scan = this.inner.scan(input);
    if (!access) return scan;
    return { orderedBy: scan.orderedBy, records: searchable(access, input, scan.records) };
  }

  async patchMetadata(input: PatchThreadInput): Promise<ThreadRecord> {
    const access = currentAccess();
    if (!access) return this.inner.patchMetadata(input);
    const { value } = await this.require(access, "threads:update", input.tenantId, input.threadId, {
      metadata: input.metadata,
    });
    return this.inner.patchMetadata({ ...input, metadata: value.metadata ?? {} });
  }

  async lockThread(input: LockThreadInput): Promise<ThreadRecord | undefined> {
    const access = currentAccess();
    if (!access) return this.inner.lockThread(input);
    const event = input.purpose === "delete" ? "threads:delete" : "threads:update";
    // Checked before the lock is written: a refused change writes nothing.
    await this.require(access, event, input.tenantId, input.threadId, {});
    return this.inner.lockThread(input);
  }

  async enqueueRun(input: EnqueueRunInput): Promise<EnqueueRunResult> {
    const access = currentAccess();
    if (!access) return this.inner.enqueueRun(input);
    const metadata = await runMetadata(access, this, input.tenantId, input.threadId);
    return this.inner.enqueueRun({ ...input, metadata: { ...metadata, ...input.metadata } });
  }

  async cancelRun(input: CancelRunInput): Promise<"running" | "queued" | "absent"> {
    const access = currentAccess();
    if (!access) return this.inner.cancelRun(input);
    await this.require(access, "threads:update", input.tenantId, input.threadId, {
      action: input.action,
    });
    return this.inner.cancelRun(input);
  }

  // The run machinery's own steps: they act on a thread a request already read through this store.
  releaseLease(input: ReleaseLeaseInput): Promise<boolean> {
    return this.inner.releaseLease(input);
  }
  unsettledThreads(): AsyncIterable<{ tenantId: string; threadId: string }> {
    return this.inner.unsettledThreads();
  }
  delete(tenantId: string, threadId: string, owner: string): Promise<void> {
    return this.inner.delete(tenantId, threadId, owner);
  }
  claimRun(input: ClaimRunInput): Promise<ClaimRunOutcome> {
    return this.inner.claimRun(input);
  }
  renewRunLease(input: RenewRunLeaseInput): Promise<RunLeaseState> {
    return this.inner.renewRunLease(input);
  }
  finishRun(input: FinishRunInput): Promise<FinishRunResult> {
    return this.inner.finishRun(input);
  }

  /** The record when the handler of `event` lets the user see it, else undefined (as if missing). */
  private async readable(
    access: RequestAccess,
    event: "threads:read",
    tenantId: string,
    threadId: string,
  ): Promise<ThreadRecord | undefined> {
    const decision = await access.decide(event, { thread_id: threadId });
    const record = await this.inner.get(tenantId, threadId);
    if (!record || !allows(decision, record.metadata)) return undefined;
    access.notePassed(event, tenantId, threadId);
    return record;
  }

  /**
   * The handler's decision on a change of the thread, which must exist and pass its filters (ThreadNotFoundError
   * otherwise, before anything is written): one read of the record, unless this request checked it already.
   */
  async require<V extends Record<string, unknown>>(
    access: RequestAccess,
    event: "threads:update" | "threads:delete",
    tenantId: string,
    threadId: string,
    value: V,
  ) {
    const decision = await access.decide(event, { thread_id: threadId, ...value });
    // No filter: nothing to check the record against (the change itself finds a missing thread).
    if (decision.pattern && !access.hasPassed(event, tenantId, threadId)) {
      const record = await this.inner.get(tenantId, threadId);
      if (!record || !allows(decision, record.metadata)) throw new ThreadNotFoundError(threadId);
      access.notePassed(event, tenantId, threadId);
    }
    return decision as typeof decision & { value: V & { metadata?: Record<string, unknown> } };
  }

  /** Whether a run may be created on the thread (see {@link runMetadata}), and what it stamps. */
  async checkRunThread(
    access: RequestAccess,
    tenantId: string,
    threadId: string,
  ): Promise<Record<string, unknown>> {
    return runMetadata(access, this, tenantId, threadId);
  }

  /** Whether the user may read the thread (`threads:read`): one read of its record, unless done already. */
  async canRead(access: RequestAccess, tenantId: string, threadId: string): Promise<boolean> {
    if (access.hasPassed("threads:read", tenantId, threadId)) return true;
    const decision = await access.decide("threads:read", { thread_id: threadId });
    if (!decision.pattern) return true;
    return (await this.readable(access, "threads:read", tenantId, threadId)) !== undefined;
  }

  /** The record, unfiltered: for a check that decides itself. */
  unfiltered(tenantId: string, threadId: string): Promise<ThreadRecord | undefined> {
    return this.inner.get(tenantId, threadId);
  }
}

/**
 * The metadata `threads:create_run` stamps on a run's thread, after checking a thread that exists passes its
 * filters (ThreadNotFoundError otherwise: a run on another user's thread is a run on a missing one). The run's
 * record takes the same metadata (authorized-runs.ts): one handler call and one read serve both.
 */
async function runMetadata(
  access: RequestAccess,
  threads: AuthorizedThreadStore,
  tenantId: string,
  threadId: string,
): Promise<Record<string, unknown>> {
  const event = "threads:create_run";
  const decision = await access.decide(event, { thread_id: threadId, metadata: {} });
  if (decision.pattern && !access.hasPassed(event, tenantId, threadId)) {
    const existing = await threads.unfiltered(tenantId, threadId);
    if (existing && !allows(decision, existing.metadata)) throw new ThreadNotFoundError(threadId);
    access.notePassed(event, tenantId, threadId);
  }
  const stamped = decision.value.metadata;
  return typeof stamped === "object" && stamped !== null ? { ...stamped } : {};
}

async function* searchable(
  access: RequestAccess,
  input: ScanThreadsInput,
  records: AsyncIterable<ThreadRecord>,
): AsyncIterable<ThreadRecord> {
  const decision = await access.decide(
    "threads:search",
    input.asked ?? {
      ...(input.status !== undefined ? { status: input.status } : {}),
      ...(input.ids !== undefined ? { ids: input.ids } : {}),
    },
  );
  let passedOver = 0;
  for await (const record of records) {
    if (allows(decision, record.metadata)) {
      yield record;
      continue;
    }
    passedOver += 1;
    if (passedOver > MAX_FILTERED_OUT) {
      throw new InvalidRequestError(
        "search",
        `it would pass over more than ${MAX_FILTERED_OUT} threads the auth handlers exclude; narrow it with status, ids or metadata`,
      );
    }
  }
}
