/**
 * Crons (LangGraph Platform's scheduled runs): what a cron is, and the store that keeps a tenant's crons. The
 * store knows nothing of schedules: the runtime computes every time it is given (src/runtime/crons).
 */

/** What becomes of a stateless cron's thread once its run ends (LangGraph's default: delete). */
export const ON_RUN_COMPLETED = ["delete", "keep"] as const;
export type OnRunCompleted = (typeof ON_RUN_COMPLETED)[number];

/** A tenant's crons at most, unless the operator says otherwise (MEMORY_TABLE_MAX_CRONS_PER_TENANT). */
export const DEFAULT_MAX_CRONS_PER_TENANT = 100;

export interface CronRecord {
  tenantId: string;
  cronId: string;
  assistantId: string;
  /** The thread each fire runs on; undefined for a stateless cron (each fire makes a thread). */
  threadId: string | undefined;
  /** Stateless crons only. */
  onRunCompleted: OnRunCompleted | undefined;
  /** A 5-field cron expression. */
  schedule: string;
  /** IANA time zone the schedule reads in; undefined: UTC. */
  timezone: string | undefined;
  /** Epoch ms after which the cron never fires again; undefined: never ends. */
  endTime: number | undefined;
  enabled: boolean;
  /** The run each fire creates, as a run request's body (snake_case fields, without assistant_id). */
  payload: Record<string, unknown>;
  metadata: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
  /** Next scheduled fire (epoch ms); undefined once the schedule has passed its end time. */
  nextRunAt: number | undefined;
  /**
   * A fire claimed by a sweeper (its scheduled time, epoch ms) whose run may not exist yet: a sweeper that
   * finds it set (the claimer crashed) makes sure the run exists before the cron moves on.
   */
  pendingFire: number | undefined;
  /**
   * When a sweeper should next look at the cron (epoch ms): its next fire, or a claimed fire's retry time; undefined
   * for a disabled or ended cron, which no sweep reads.
   */
  dueAt: number | undefined;
  /** Bumped by every write: each write is conditioned on the revision its writer read. */
  revision: number;
}

/** A cron due for a sweep, as the due-cron index names it. */
export interface CronRef {
  tenantId: string;
  cronId: string;
}

export interface CronStore {
  get(tenantId: string, cronId: string): Promise<CronRecord | undefined>;
  /** Every cron of the tenant (at most its quota, so one small read), in no particular order. */
  list(tenantId: string): Promise<CronRecord[]>;
  /**
   * Writes `record` if the stored cron is at revision `expected` ("new": if there is none); the record's own
   * revision is what is stored. False when another writer got there first (nothing written).
   */
  save(record: CronRecord, expected: number | "new"): Promise<boolean>;
  /** Removes the cron; false when there was none. */
  delete(tenantId: string, cronId: string): Promise<boolean>;
  /** Crons of every tenant whose `dueAt` is at or before `now`. */
  due(now: number): AsyncIterable<CronRef>;
}
