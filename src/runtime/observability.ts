import pino, { type Logger } from "pino";
import { DEFAULT_LOG_LEVEL } from "../shared/defaults";
import type { RunOutcome } from "./graphs/engine";

/** The container logger. Callers never pass state, inputs, resume values or headers to it. */
export function createLogger(level: string = DEFAULT_LOG_LEVEL): Logger {
  return pino({
    level,
    base: { service: "memory-table" },
    // Defence in depth: should a header object ever reach a log call, its credentials are removed.
    redact: { paths: ["authorization", "headers.authorization", "*.authorization"], remove: true },
  });
}

export type MetricsSink = (line: string) => void;

/**
 * How a run (or one leg of a background run) ended, for metrics: `continued` is a leg that handed over to the
 * next one (not a stop), `deadline` a run stopped for good by time (a request's deadline, or its last leg).
 */
export type MetricOutcome = RunOutcome["kind"] | "rejected" | "continued" | "cancelled";

/**
 * CloudWatch Embedded Metric Format: one JSON line per run or leg, which CloudWatch Logs turns into metrics
 * (runs started, paused, completed, failed, timed out, legs handed over, and duration) per assistant.
 */
export class RunMetrics {
  constructor(
    private readonly sink: MetricsSink | undefined,
    private readonly namespace = "MemoryTable",
  ) {}

  /** `firstLeg`: false for a background run's later legs (the run was counted as started once). */
  record(assistantId: string, outcome: MetricOutcome, durationMs: number, firstLeg = true): void {
    if (!this.sink) return;
    const counts = {
      RunsStarted: outcome === "rejected" || !firstLeg ? 0 : 1,
      RunsPaused: outcome === "paused" ? 1 : 0,
      RunsCompleted: outcome === "completed" ? 1 : 0,
      RunsFailed: outcome === "failed" ? 1 : 0,
      RunsTimedOut: outcome === "deadline" ? 1 : 0,
      LegsContinued: outcome === "continued" ? 1 : 0,
    };
    const line = {
      _aws: {
        Timestamp: Date.now(),
        CloudWatchMetrics: [
          {
            Namespace: this.namespace,
            Dimensions: [["Assistant"]],
            Metrics: [
              ...Object.keys(counts).map((name) => ({ Name: name, Unit: "Count" })),
              { Name: "RunDuration", Unit: "Milliseconds" },
            ],
          },
        ],
      },
      Assistant: assistantId,
      ...counts,
      RunDuration: Math.round(durationMs),
    };
    this.sink(JSON.stringify(line));
  }
}

export const stdoutSink: MetricsSink = (line) => {
  process.stdout.write(`${line}\n`);
};
