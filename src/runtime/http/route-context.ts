import type { Logger } from "pino";
import { AssistantNotFoundError, InvalidRequestError } from "../../shared/errors";
import type { AssistantDirectory } from "./assistant-directory";
import type { CronStore } from "../../shared/crons";
import { assertPathIdentifier } from "../../shared/identifiers";
import type { RunEngine, RunOutcome } from "../graphs/engine";
import type { GraphRegistry } from "../graphs/graph-registry";
import { describe, type HttpResult } from "./http";
import type { RunMetrics } from "../observability";
import type { RunManager } from "../runs/run-manager";
import type { WebhookSender } from "../runs/webhooks";

/**
 * What became of a request's run, for its log line: how the run ended (as the engine names it; `cancelled` for a
 * run ended by a cancel), or, for a run that goes on after the request, `queued` (created for the background)
 * or `running` (the request's time, or its client, ran out first). docs/http-api.md lists them.
 */
export type RequestOutcome = RunOutcome["kind"] | "cancelled" | "queued" | "running";

/** Fields of the one log line per request; route handlers fill in what they learn. */
export interface RequestLogFields {
  thread?: string;
  assistant?: string;
  outcome?: RequestOutcome;
}

/** Everything a route handler gets: validated tenant, path parameters and the parsed body. */
export interface RouteContext {
  engine: RunEngine;
  registry: GraphRegistry;
  /** System and stored assistants, by assistant or graph id. */
  assistants: AssistantDirectory;
  metrics: RunMetrics;
  /** Background runs; undefined for a handler without a checkpointer. */
  runs: RunManager | undefined;
  webhooks: WebhookSender;
  /** The tenants' crons; undefined for a handler without a checkpointer. */
  crons: CronStore | undefined;
  /** False: the deployment fires no cron (CRONS_ENABLED=false), so none may be created or enabled. */
  cronsEnabled: boolean;
  /** Crons one tenant may have at most. */
  maxCronsPerTenant: number;
  /** Time a run leaves free before the Lambda deadline. */
  deadlineMarginMs: number;
  tenantId: string;
  params: Record<string, string>;
  body: Record<string, unknown>;
  query: Record<string, string | undefined>;
  /** Request headers, names lowercase (API Gateway and function URLs give them so). */
  headers: Record<string, string | undefined>;
  /** Time left before the request's deadline, as of this read: read it where the time is used. */
  readonly remainingMs: number;
  log: RequestLogFields;
  requestId: string;
  logger: Logger;
}

export type RouteHandler = (context: RouteContext) => Promise<HttpResult>;

/**
 * A validated thread id, usable on every route (a URL path segment, a key for every saver): a bad one throws
 * {@link InvalidIdentifierError}, which each face answers with its own status (routes.ts).
 */
export function threadIdFrom(value: unknown): string {
  return assertPathIdentifier("thread_id", value);
}

/**
 * A validated run id from a route's path, checked as a thread id is (a run's sort key holds it, and DynamoDB
 * refuses keys over 1,024 bytes): a bad one throws {@link InvalidIdentifierError}, which answers 422 before
 * any store is read or written.
 */
export function runIdFrom(value: unknown): string {
  return assertPathIdentifier("run_id", value);
}

/** The graph a request names (AssistantNotFoundError when unknown), or the default one. */
export function assistantFrom(registry: GraphRegistry, value: unknown): string {
  if (value === undefined || value === null) {
    const fallback = registry.defaultAssistantId;
    if (fallback === undefined) {
      throw new InvalidRequestError(
        "assistant_id",
        `expected one of ${registry.assistantIds.join(", ")}, got nothing`,
      );
    }
    return fallback;
  }
  if (typeof value !== "string") {
    throw new InvalidRequestError("assistant_id", `expected a string, got ${describe(value)}`);
  }
  if (!registry.has(value)) throw new AssistantNotFoundError(value);
  return value;
}
