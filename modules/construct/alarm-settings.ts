import { Op } from "../cdktf";
import { ALARM_THRESHOLDS, type AlarmThresholds, type FunctionLimits } from "./alarms";
import type { Flag } from "./expressions";
import { DEFAULTS, type MemoryTableProps } from "./props";
import { isLiteral } from "./rules";

/** What the alarms compare with, from the construct's props and their defaults. */

/** Whether the alias gets provisioned concurrency (1 or more), known now or at plan. */
export function provisionedConcurrency(props: MemoryTableProps): Flag {
  const concurrency =
    props.provisionedConcurrentExecutions ?? DEFAULTS.provisionedConcurrentExecutions;
  return isLiteral(concurrency) ? concurrency > 0 : Op.gte(concurrency, 1);
}

/** What the duration and concurrency alarms compare with, by function id. */
export function functionLimits(props: MemoryTableProps): Record<string, FunctionLimits> {
  return {
    function: {
      timeout: props.timeout ?? DEFAULTS.timeout,
      reservedConcurrentExecutions:
        props.reservedConcurrentExecutions ?? DEFAULTS.reservedConcurrentExecutions,
    },
    worker_function: {
      timeout: props.workerTimeout ?? DEFAULTS.workerTimeout,
      reservedConcurrentExecutions:
        props.workerReservedConcurrentExecutions ?? DEFAULTS.workerReservedConcurrentExecutions,
    },
    stream_function: {
      timeout: props.streamTimeout ?? DEFAULTS.streamTimeout,
      reservedConcurrentExecutions:
        props.streamReservedConcurrentExecutions ?? DEFAULTS.streamReservedConcurrentExecutions,
    },
    cleaner_function: {
      timeout: props.cleanerTimeout ?? DEFAULTS.cleanerTimeout,
      reservedConcurrentExecutions:
        props.cleanerReservedConcurrentExecutions ?? DEFAULTS.cleanerReservedConcurrentExecutions,
    },
  };
}

export function alarmThresholds(given: Partial<AlarmThresholds> | undefined): AlarmThresholds {
  return Object.fromEntries(
    Object.entries(ALARM_THRESHOLDS).map(([key, spec]) => [
      key,
      given?.[key as keyof AlarmThresholds] ?? spec.default,
    ]),
  ) as AlarmThresholds;
}
