/**
 * Every error Memory Table throws. One root class per layer, each subclass sets `name` and keeps `cause`,
 * so callers can branch on `instanceof` and logs show what went wrong without the state that caused it.
 */

/** Root of every error thrown by Memory Table. */
export class MemoryTableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** An identifier (tenant, thread, namespace, checkpoint or task id) that cannot be used in a key. */
export class InvalidIdentifierError extends MemoryTableError {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`Invalid ${field}: ${reason}`);
  }
}

/** A configuration value (saver options, handler options, environment) that is out of range. */
export class InvalidConfigurationError extends MemoryTableError {
  constructor(
    readonly option: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`Invalid ${option}: ${reason}`, options);
  }
}

/** An event a Lambda handler cannot act on (not the event source it is wired to); nothing was changed. */
export class InvalidEventError extends MemoryTableError {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`Invalid ${field}: ${reason}`);
  }
}

/** Root of the table layer's errors: requests DynamoDB kept refusing after every retry. */
export class TableError extends MemoryTableError {}

/** A batch request left items or keys unprocessed (or kept being throttled) after every retry. */
export class TableRequestError extends TableError {
  constructor(
    readonly operation: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${operation} failed: ${message}`, options);
  }
}

/** Root of the checkpoint store's errors. */
export class CheckpointStoreError extends MemoryTableError {}

/**
 * A stored checkpoint refers to an item that is not there (a concurrent deletion in another process, or damage
 * done outside Memory Table); the checkpoint is not returned half-read.
 */
export class IncompleteCheckpointError extends CheckpointStoreError {
  constructor(
    readonly threadId: string,
    readonly checkpointId: string,
    missing: string,
  ) {
    super(`Checkpoint ${checkpointId} of thread ${threadId} cannot be read whole: ${missing}`);
  }
}

/** A checkpoint (with its new channel values) larger than the saver's configured cap; nothing was written. */
export class CheckpointTooLargeError extends CheckpointStoreError {
  constructor(
    readonly limitBytes: number,
    readonly attemptedBytes: number,
    /** What was measured: the whole checkpoint by default. */
    readonly part = "checkpoint",
  ) {
    super(
      `Checkpoint too large: the ${part} takes ${attemptedBytes} bytes, over the limit of ${limitBytes} bytes; nothing was written`,
    );
  }
}

/** Names of the guardrails of the bounded in-memory saver. */
export type CapacityLimit =
  | "maxThreads"
  | "maxNamespacesPerThread"
  | "maxCheckpointsPerThread"
  | "maxCheckpointBytes"
  | "maxPendingWriteBytes"
  | "maxTotalBytes"
  | "maxIdentifierLength";

/** A write the bounded in-memory saver refused; the thread being written is exactly as it was. */
export class CheckpointCapacityError extends CheckpointStoreError {
  constructor(
    readonly limit: CapacityLimit,
    readonly configured: number,
    readonly attempted: number,
  ) {
    super(`Capacity exceeded: ${limit} is ${configured}, the write needed ${attempted}`);
  }
}

/** Root of the thread records' errors: leases, statuses and existence (the runtime maps each to a status code). */
export class ThreadError extends MemoryTableError {}

/** The thread does not exist for this tenant (a thread of another tenant is reported the same way). */
export class ThreadNotFoundError extends ThreadError {
  constructor(
    readonly threadId: string,
    /** Why it cannot exist, when that is known (a handler that keeps no threads). */
    detail?: string,
  ) {
    super(`Thread not found: ${threadId}${detail === undefined ? "" : ` (${detail})`}`);
  }
}

/**
 * A checkpoint the thread does not have (in that namespace, the root one by default): nothing was read from it,
 * run or written.
 */
export class CheckpointNotFoundError extends ThreadError {
  constructor(
    readonly threadId: string,
    readonly checkpointId: string,
    readonly namespace = "",
  ) {
    super(
      `Checkpoint not found: ${checkpointId} ${namespace === "" ? "" : `in namespace ${namespace} `}of thread ${threadId}`,
    );
  }
}

/** The thread's expiry passed (DynamoDB TTL deletes lazily): it is gone, and a new thread may reuse its id. */
export class ThreadExpiredError extends ThreadNotFoundError {}

/** Another run holds the thread's lease; nothing was run. */
export class ThreadBusyError extends ThreadError {
  constructor(
    readonly threadId: string,
    /** The run holding the thread although its process died (its takeover is due), when that is why. */
    readonly stalledRunId?: string,
  ) {
    super(`Thread busy: ${threadId} has a run in progress`);
  }
}

/** A thread created with a thread id that is already taken (`if_exists: "raise"`). */
export class ThreadExistsError extends ThreadError {
  constructor(readonly threadId: string) {
    super(`Thread already exists: ${threadId}`);
  }
}

/** A resume when the thread has no pending interrupt, or names an interrupt id that is not pending. */
export class NothingToResumeError extends ThreadError {
  constructor(
    readonly threadId: string,
    reason: string,
  ) {
    super(`Nothing to resume on thread ${threadId}: ${reason}`);
  }
}

/** A resume naming another assistant than the one the thread is paused in; nothing was run or written. */
export class AssistantMismatchError extends ThreadError {
  constructor(
    readonly threadId: string,
    expected: string | undefined,
    got: string,
  ) {
    super(
      `Invalid assistant_id: expected ${expected ?? "the thread's assistant"} (thread ${threadId} is paused in it), got ${got}`,
    );
  }
}

/** A start (with input) on a thread paused for a human: it would discard the pending approval. */
export class ThreadPausedError extends ThreadError {
  constructor(readonly threadId: string) {
    super(
      `Thread paused: ${threadId} waits for a human; resume it (send resume) or delete it to start over`,
    );
  }
}

/** Root of the HTTP runtime's run errors (the runtime maps each to a status code). */
export class RuntimeError extends MemoryTableError {}

/**
 * The project's `auth` handlers refused the request (an `HTTPException` they threw, or `false` from an `on`
 * handler): it answers with the status they chose (403 when they chose none) and their message; nothing was
 * written.
 */
export class AuthRefusedError extends RuntimeError {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly headers: Record<string, string> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A request that needs checkpoints (threads, resumes, interrupts) on a handler configured without a checkpointer. */
export class CheckpointerRequiredError extends RuntimeError {
  constructor(what: string) {
    super(`${what} needs a checkpointer: configure one (or set TABLE_NAME) to keep thread state`);
  }
}

/** A cron to create or enable where the deployment fires none (CRONS_ENABLED=false): it would never run. */
export class CronsDisabledError extends RuntimeError {
  constructor() {
    super(
      "Crons are turned off in this deployment (CRONS_ENABLED=false): a cron created or enabled now would never fire",
    );
  }
}

/** The request arrived with less time before the Lambda deadline than the run's margin: nothing ran or changed. */
export class RunBudgetExhaustedError extends RuntimeError {
  constructor(remainingMs: number, marginMs: number) {
    super(
      `Invalid request timing: expected more than ${marginMs} ms before the Lambda deadline, got ${remainingMs} ms. Nothing ran and nothing was written: re-send the original request (raise the function timeout if this repeats)`,
    );
  }
}

/** The run was stopped before the Lambda deadline; the thread can continue from its last checkpoint. */
export class RunDeadlineError extends RuntimeError {
  constructor(readonly threadId: string) {
    super(
      `Run stopped early: the Lambda deadline was near. Thread ${threadId} continues from its last checkpoint with a new run without input`,
    );
  }
}

/** A run its request was waiting for was cancelled meanwhile (a cancel or another run's `interrupt`/`rollback`). */
export class RunCancelledError extends RuntimeError {
  constructor(readonly runId: string) {
    super(
      `Run cancelled: ${runId} was stopped by a cancel before it ended; the thread keeps what it wrote`,
    );
  }
}

/**
 * A request field (of the body, the query or a header) the runtime cannot use; nothing was read or written. The
 * simple face answers it 400, the LangGraph Server face 422 (as LangGraph Server does).
 */
export class InvalidRequestError extends RuntimeError {
  constructor(
    readonly field: string,
    readonly reason: string,
    /** The item of a batch the field belongs to (`Run 2`), named before the refusal. */
    readonly item?: string,
  ) {
    super(`${item === undefined ? "" : `${item}: `}Invalid ${field}: ${reason}`);
  }

  /** The same refusal, naming the batch item it was found in. */
  within(item: string): InvalidRequestError {
    return new InvalidRequestError(this.field, this.reason, item);
  }
}

/** A request whose verified token carries no tenant claim: it cannot be scoped to anyone's data. */
export class MissingTenantClaimError extends RuntimeError {
  constructor() {
    super("Unauthorized: no tenant claim in the verified token");
  }
}

/** A tenant claim that is not a usable tenant id (a number, a key-breaking string): refused, never coerced. */
export class InvalidTenantClaimError extends RuntimeError {
  constructor(cause: InvalidIdentifierError) {
    super(`Forbidden: ${cause.message}`, { cause });
  }
}

/** A request for the long-term store on a handler configured without one (`store: false`). */
export class StoreRequiredError extends RuntimeError {
  constructor(what: string) {
    super(
      `${what} needs a long-term store: this handler runs without one (its store option is false)`,
    );
  }
}

/** A run the tenant does not have on that thread (or one whose record is gone). */
export class RunNotFoundError extends RuntimeError {
  constructor(readonly runId: string) {
    super(`Run ${runId} not found`);
  }
}

/** A run still going, which cannot be deleted: it must be cancelled first. */
export class RunActiveError extends RuntimeError {
  constructor(readonly runId: string) {
    super(`Run ${runId} is running: cancel it first`);
  }
}

/** A join that ran out of the request's time before its run ended; the run goes on in the background. */
export class RunNotFinishedError extends RuntimeError {
  constructor(
    readonly runId: string,
    status: string,
  ) {
    super(`Run ${runId} is still ${status}: join it again`);
  }
}

/** A run refused by its `multitask_strategy` (`reject`, the default) because its thread has a run going. */
export class MultitaskRejectedError extends RuntimeError {
  constructor(readonly threadId: string) {
    super(
      "Thread is already running a task. Wait for it to finish or choose a different multitask strategy.",
    );
  }
}

/** Root of the assistants' errors (stored and system assistants). */
export class AssistantError extends MemoryTableError {}

/** No assistant of the tenant has this id, and no registered graph this graph id. */
export class AssistantNotFoundError extends AssistantError {
  constructor(
    readonly assistantId: string,
    /** The refusal in the words of the route (runs answer as LangGraph Server words it). */
    message = `Assistant not found: ${assistantId}`,
  ) {
    super(message);
  }
}

/** A version the assistant never had. */
export class AssistantVersionNotFoundError extends AssistantError {
  constructor(
    readonly assistantId: string,
    readonly version: number,
  ) {
    super(`Assistant version not found: ${assistantId} has no version ${version}`);
  }
}

/** An assistant created with an assistant id that is already taken (`if_exists: "raise"`). */
export class AssistantExistsError extends AssistantError {
  constructor(readonly assistantId: string) {
    super(`Assistant already exists: ${assistantId}`);
  }
}

/** A change to a graph's own assistant: it is registered in code, never stored, so it cannot change. */
export class SystemAssistantError extends AssistantError {
  constructor(
    readonly assistantId: string,
    graphId: string,
    change: string,
  ) {
    super(
      `System assistant: ${assistantId} is graph ${graphId} as registered in code and cannot be ${change}; create an assistant of that graph instead`,
    );
  }
}

/** An assistant whose content is over the size one record holds; nothing was written. */
export class AssistantTooLargeError extends AssistantError {
  constructor(
    readonly limitBytes: number,
    readonly attemptedBytes: number,
  ) {
    super(
      `Assistant too large: its config, context, metadata, name and description take ${attemptedBytes} bytes as JSON, over the limit of ${limitBytes}; nothing was written`,
    );
  }
}

/** A drawing of a graph that cannot draw itself (a graph object without `getGraphAsync`). */
export class GraphDrawingUnavailableError extends AssistantError {
  constructor(readonly graphId: string) {
    super(`Graph drawing not available: graph ${graphId} has none`);
  }
}

/** Root of the long-term memory store's errors (DynamoDBStore, BoundedInMemoryStore). */
export class StoreError extends MemoryTableError {}

/**
 * An operation the store cannot accept: a malformed namespace, key, value, filter, page, TTL or query. Thrown
 * before any request, so nothing of the batch holding it was read or written.
 */
export class InvalidStoreOperationError extends StoreError {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`Invalid ${field}: ${reason}`);
  }
}

/** A value (with its embedding vectors) over the store's size limit; nothing of its batch was written. */
export class StoreValueTooLargeError extends StoreError {
  constructor(
    readonly limitBytes: number,
    readonly attemptedBytes: number,
    /** What was measured: the value's JSON, or the value with its embedding vectors. */
    readonly part: string,
  ) {
    super(
      `Store value too large: the ${part} takes ${attemptedBytes} bytes, over the limit of ${limitBytes} bytes; nothing was written`,
    );
  }
}

/** Names of the guardrails of the bounded in-memory store. */
export type StoreCapacityLimit = "maxItems" | "maxTotalBytes";

/** A write the bounded in-memory store refused; the store is exactly as it was. */
export class StoreCapacityError extends StoreError {
  constructor(
    readonly limit: StoreCapacityLimit,
    readonly configured: number,
    readonly attempted: number,
  ) {
    super(`Store capacity exceeded: ${limit} is ${configured}, the write needed ${attempted}`);
  }
}

/**
 * A semantic search (`query`) over more items than the store compares: vectors are compared in the function, so
 * each such search reads every item under its prefix, at most the index's `maxCandidates`. Nothing is returned
 * rather than a ranking of some of the items.
 */
export class StoreSearchTooBroadError extends StoreError {
  constructor(readonly maxCandidates: number) {
    super(
      `Semantic search too broad: more than ${maxCandidates} items under the namespace prefix (the filter applies after reading); narrow the prefix, or raise index.maxCandidates`,
    );
  }
}

/** The embeddings model returned vectors the index cannot use; nothing of the batch was written. */
export class StoreEmbeddingError extends StoreError {
  constructor(reason: string, options?: { cause?: unknown }) {
    super(`Invalid embeddings: ${reason}`, options);
  }
}

/** Root of the crons' errors (scheduled runs). */
export class CronError extends MemoryTableError {}

/** No cron of the tenant has this id (another tenant's is just as absent). */
export class CronNotFoundError extends CronError {
  constructor(readonly cronId: string) {
    super(`Cron not found: ${cronId}`);
  }
}

/** A new cron over the tenant's quota: nothing was stored. */
export class CronQuotaExceededError extends CronError {
  constructor(readonly maxCrons: number) {
    super(
      `Cron quota exceeded: this tenant already has ${maxCrons} crons (the most allowed); delete one first`,
    );
  }
}
