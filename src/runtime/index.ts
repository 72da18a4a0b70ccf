/**
 * `memory-table/runtime`: the handlers the image serves (API Gateway, function URL, worker), their options and
 * the types those mention, `loadLangGraphConfig` and `loadLangGraphAuth`, and LangGraph auth's ready-made `ownerOnly`
 * policy (the package root re-exports what app teams need most).
 */
export { createHandler, type ApiHandler, type HandlerOptions } from "./handler";
export { createWorkerHandler, type WorkerHandler, type WorkerResult } from "./worker";
export {
  createFunctionUrlHandler,
  type FunctionUrlEvent,
  type FunctionUrlOptions,
  type ResponseStream,
  type StreamingHandler,
} from "./function-url";
export { loadLangGraphConfig, type LangGraphConfigOptions } from "./graphs/langgraph-config";
export { loadLangGraphAuth } from "./graphs/langgraph-auth-config";
export { ownerOnly, OWNER_METADATA_KEY } from "./auth/owner-only";
export { verifiedCredential } from "./request-auth";
export type { AuthUser, LangGraphAuth, VerifiedCredential } from "./auth/langgraph-auth";
export type {
  AnySaver,
  CheckpointerOption,
  GraphFactory,
  GraphFactoryContext,
  HandlerContext,
  HandlerGraph,
  StoreOption,
} from "./types";
export { readRuntimeConfig, type AssistantDefaults, type RuntimeConfig } from "./config";
export type { HttpEvent, HttpResult } from "./http/http";
export type { MetricsSink } from "./observability";
export type { RunDispatcher, RunJob, ThreadRef } from "./runs/run-manager";
export type { MultitaskStrategy, RunRecord, RunStatus, RunStore } from "../shared/runs";
export type { PendingInterrupt, ThreadRecord, ThreadStatus, ThreadStore } from "../shared/threads";
