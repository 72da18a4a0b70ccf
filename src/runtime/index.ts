/** The HTTP runtime's public surface (re-exported from the package root). */
export {
  createHandler,
  DEFAULT_DEADLINE_MARGIN_MS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_REMAINING_MS,
  DEFAULT_TENANT_CLAIM,
  type ApiHandler,
  type HandlerOptions,
} from "./handler";
export type {
  AnySaver,
  CheckpointerOption,
  GraphFactory,
  GraphFactoryContext,
  HandlerContext,
  HandlerGraph,
} from "./types";
export type { HttpEvent, HttpResult } from "./http";
export { HttpError } from "./http";
export { DynamoDBThreadStore, type DynamoDBThreadStoreOptions } from "./thread-store/dynamodb";
export { InMemoryThreadStore, type InMemoryThreadStoreOptions } from "./thread-store/memory";
export type { PendingInterrupt, ThreadRecord, ThreadStore } from "./thread-store/types";
export type { MetricsSink } from "./observability";
export { ENVIRONMENT } from "./environment";
export { ROUTES, type RouteDefinition } from "./routes";
