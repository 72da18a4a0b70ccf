/** `memory-table/runtime`: the HTTP runtime's full surface (the package root re-exports what app teams need). */
export {
  createHandler,
  DEFAULT_REMAINING_MS,
  type ApiHandler,
  type HandlerOptions,
} from "./handler";
export { createWorkerHandler, type WorkerHandler, type WorkerResult } from "./worker";
export {
  InProcessDispatcher,
  RUN_JOB_KIND,
  parseRunJob,
  type RunJobEvent,
} from "./runs/dispatchers";
export { LambdaDispatcher } from "./runs/lambda-dispatcher";
export type { RunDispatcher, RunJob } from "./runs/run-manager";
export { InMemoryRunStore } from "./runs/in-memory-run-store";
export type { MultitaskStrategy, RunRecord, RunStatus, RunStore } from "../shared/runs";
export {
  API_GATEWAY_TIMEOUT_MS,
  DEFAULT_DEADLINE_MARGIN_MS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_TENANT_CLAIM,
  MAX_BODY_DEPTH,
} from "../shared/defaults";
export type {
  AnySaver,
  CheckpointerOption,
  GraphFactory,
  GraphFactoryContext,
  HandlerContext,
  HandlerGraph,
  StoreOption,
} from "./types";
export { HttpError, type HttpEvent, type HttpResult } from "./http/http";
export {
  InMemoryThreadStore,
  type InMemoryThreadStoreOptions,
} from "./runs/in-memory-thread-store";
export type { PendingInterrupt, ThreadRecord, ThreadStatus, ThreadStore } from "../shared/threads";
export type { MetricsSink } from "./observability";
export { ENVIRONMENT, IMAGE_HANDLERS, LANGGRAPH_ENVIRONMENT } from "./environment";
export {
  readRuntimeConfig,
  requireTableName,
  type AssistantDefaults,
  type RuntimeConfig,
} from "./config";
export { ERROR_STATUSES, ROUTES, type ApiFace, type RouteDefinition } from "./http/routes";
export { loadLangGraphConfig, type LangGraphConfigOptions } from "./graphs/langgraph-config";
export {
  createFunctionUrlHandler,
  type FunctionUrlEvent,
  type FunctionUrlOptions,
  type ResponseStream,
  type StreamingHandler,
} from "./function-url";
