import type { Logger } from "pino";
import { isRecord } from "./config-values";

/** Where `getLogger()` of `@langchain/langgraph-sdk/logging` finds the logger the server registered. */
const SDK_LOGGER = Symbol.for("langgraph.api.sdk-logger");

/** The SDK logger's (winston's) levels, as pino levels. */
const SDK_LEVELS = {
  error: "error",
  warn: "warn",
  info: "info",
  help: "info",
  data: "info",
  prompt: "info",
  input: "info",
  http: "debug",
  verbose: "debug",
  debug: "debug",
  silly: "trace",
} as const;

type LogLevel = (typeof SDK_LEVELS)[keyof typeof SDK_LEVELS];

/**
 * Registers the logger graphs reach through the LangGraph SDK's `getLogger()`, as the LangGraph server does
 * before it loads graphs (a module may call it on its first line; without a registered logger it throws). Its
 * calls, `(message, ...meta)` or `(object)`, go to `logger` as pino calls, else to the console. A logger
 * registered already (by an earlier load, or the host) is kept: there is one per process.
 */
export function registerGraphLogger(logger: Logger | undefined): void {
  const global = globalThis as Record<symbol, unknown>;
  if (global[SDK_LOGGER] !== undefined) return;
  const write = (level: LogLevel, fields: object, message: string | undefined): void => {
    if (logger) return logger[level](fields, message);
    const print = console[level === "trace" ? "debug" : level];
    if (Object.keys(fields).length === 0) print(message ?? "");
    else print(message ?? "", fields);
  };
  const sdkLogger: Record<string, unknown> = {};
  for (const [sdkLevel, level] of Object.entries(SDK_LEVELS)) {
    sdkLogger[sdkLevel] = (message: unknown, ...meta: unknown[]) => {
      const fields = Object.assign({}, ...meta.filter(isRecord)) as Record<string, unknown>;
      if (isRecord(message)) write(level, { ...fields, ...message }, undefined);
      else write(level, fields, typeof message === "string" ? message : String(message));
      return sdkLogger;
    };
  }
  global[SDK_LOGGER] = sdkLogger;
}
