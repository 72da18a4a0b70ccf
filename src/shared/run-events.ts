/**
 * The events of a run's stream, as LangGraph Server sends them over Server-Sent Events: a name (`metadata`,
 * `values`, `updates|<namespace>`, `messages/partial`, `error`, ...) and a JSON payload. Events are numbered from
 * 0 per run; a client that reconnects with `Last-Event-ID` gets those after it. Stores keep them for the run's
 * life (with its thread's expiry), so a stream can be joined from any container.
 */
export interface RunEvent {
  /** Position in the run's stream, from 0. */
  seq: number;
  event: string;
  /** The payload as wire JSON (already serialized: values' messages as dicts, the client's thread ids). */
  data: string;
}

/** Most bytes of events one run keeps; later events are still streamed live, but no longer stored. */
export const MAX_STORED_EVENT_BYTES_PER_RUN = 16 * 1024 * 1024;

/** Where a run's events are kept, always scoped by tenant and thread. */
export interface RunEventStore {
  /** Stores events (in order, each `seq` once). */
  append(tenantId: string, threadId: string, runId: string, events: RunEvent[]): Promise<void>;
  /** The events after `afterSeq` (-1: from the first), in order, at most `limit`. */
  read(
    tenantId: string,
    threadId: string,
    runId: string,
    afterSeq: number,
    limit: number,
  ): Promise<RunEvent[]>;
  /** Drops a deleted thread's events (a no-op where they go with the thread's own items). */
  forgetThread(tenantId: string, threadId: string): Promise<void>;
}
