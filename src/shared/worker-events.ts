/**
 * Marks a scheduled invocation of the worker function that sweeps for stalled runs (the module's EventBridge rule
 * sends `{"kind": RECOVERY_SWEEP_KIND}`): the worker tells it from a run job and from a failed-job record.
 */
export const RECOVERY_SWEEP_KIND = "memory-table.recovery-sweep";

export interface RecoverySweepEvent {
  kind: typeof RECOVERY_SWEEP_KIND;
}
