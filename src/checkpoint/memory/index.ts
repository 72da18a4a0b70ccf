/** `memory-table/memory`: the bounded in-memory saver, its guardrails and what its stats and purge report. */
export { BoundedInMemorySaver, InMemorySaver } from "./bounded-in-memory-saver";
export type { BoundedInMemorySaverOptions } from "./bounded-in-memory-saver";
export type { InMemorySaverStats, PurgeResult, RejectingLimit } from "./bounded-thread-store";
export type { InMemoryCheckpointConfig } from "./in-memory-checkpoint-config";
