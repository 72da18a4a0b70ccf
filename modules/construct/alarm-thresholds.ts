/** One alarm threshold: its key in the construct's props, in the module's variable, its default and meaning. */
interface ThresholdSpec {
  variable: string;
  default: number;
  description: string;
}

/**
 * The alarm thresholds, each overridable. Run failures are graph errors (the thread is left in ERROR); timed-out
 * runs are resumable by design, so only a burst of them alarms. The cleaner's iterator age must stay far below the
 * stream's 24 h retention: records older than that are lost and their threads' items are never removed.
 */
export const ALARM_THRESHOLDS = {
  api5xxRatePercent: {
    variable: "api_5xx_rate_percent",
    default: 5,
    description: "HTTP API 5xx responses, percent of requests in 5 minutes",
  },
  functionErrors: {
    variable: "function_errors",
    default: 1,
    description: "invocation errors (crashes, timeouts) of a function in 5 minutes",
  },
  functionThrottles: {
    variable: "function_throttles",
    default: 1,
    description: "throttled invocations of a function in 5 minutes",
  },
  runsFailed: {
    variable: "runs_failed",
    default: 1,
    description: "graph runs that failed, per function that runs graphs, in 5 minutes",
  },
  runsTimedOut: {
    variable: "runs_timed_out",
    default: 5,
    description:
      "graph runs stopped at the deadline (in the worker: legs handed over to a next one), per function that runs graphs, in 5 minutes",
  },
  cleanerIteratorAgeSeconds: {
    variable: "cleaner_iterator_age_seconds",
    default: 3600,
    description:
      "age of the oldest stream record the cleaner has yet to process (cleanup lag), seconds",
  },
  deadLetterMessages: {
    variable: "dead_letter_messages",
    default: 1,
    description:
      "messages waiting in the on-failure destination (stream batches the cleaner gave up on)",
  },
  workerFailedJobs: {
    variable: "worker_failed_jobs",
    default: 1,
    description:
      "background-run jobs Lambda gave up on after its retries (sent to the worker's failure queue; the worker records their runs as failed) in 5 minutes",
  },
  workerFailureQueueAgeSeconds: {
    variable: "worker_failure_queue_age_seconds",
    default: 3600,
    description:
      "age of the oldest message in the worker's failure queue (a failure the worker could not record: it is retried until SQS drops it after 14 days), seconds",
  },
  dynamodbThrottles: {
    variable: "dynamodb_throttles",
    default: 10,
    description: "throttled read and write requests of the table and its indexes in 5 minutes",
  },
  functionDurationPercentOfTimeout: {
    variable: "function_duration_percent_of_timeout",
    default: 90,
    description:
      "longest invocation of the API function or the cleaner in 5 minutes, percent of its timeout (the worker and the stream function run to their deadline by design: runs_timed_out covers them)",
  },
  functionConcurrencyPercentOfReserved: {
    variable: "function_concurrency_percent_of_reserved",
    default: 80,
    description:
      "most concurrent executions of a function in 5 minutes, percent of its reserved concurrency (above it, invocations are throttled)",
  },
  apiLatencyP99Ms: {
    variable: "api_latency_p99_ms",
    default: 10000,
    description: "99th percentile of the HTTP API's latency in 5 minutes, milliseconds",
  },
  provisionedConcurrencySpillover: {
    variable: "provisioned_concurrency_spillover",
    default: 1,
    description:
      "invocations of the API function's alias that found no provisioned environment (cold starts provisioned concurrency was meant to spare) in 5 minutes",
  },
  streamUrl5xxRatePercent: {
    variable: "stream_url_5xx_rate_percent",
    default: 5,
    description: "5xx responses of the stream function's URL, percent of its requests in 5 minutes",
  },
} as const satisfies Record<string, ThresholdSpec>;

export type AlarmThresholds = { [K in keyof typeof ALARM_THRESHOLDS]: number };
