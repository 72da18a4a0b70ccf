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
  ) {
    super(`Invalid ${option}: ${reason}`);
  }
}

/** Root of the checkpoint store's errors. */
export class CheckpointStoreError extends MemoryTableError {}

/** A checkpoint (with its new channel values) larger than the saver's configured cap; nothing was written. */
export class CheckpointTooLargeError extends CheckpointStoreError {
  constructor(
    readonly limitBytes: number,
    readonly attemptedBytes: number,
  ) {
    super(
      `Checkpoint too large: ${attemptedBytes} serialized bytes exceed the cap of ${limitBytes} bytes; nothing was written`,
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
