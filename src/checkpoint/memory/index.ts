export { BoundedInMemorySaver, InMemorySaver } from "./bounded-in-memory-saver";
export type { BoundedInMemorySaverOptions } from "./bounded-in-memory-saver";
export type { InMemorySaverStats, PurgeResult, RejectingLimit } from "./bounded-thread-store";
export {
  DEFAULT_IN_MEMORY_CHECKPOINT_CONFIG,
  resolveInMemoryCheckpointConfig,
} from "./in-memory-checkpoint-config";
export type { InMemoryCheckpointConfig } from "./in-memory-checkpoint-config";
