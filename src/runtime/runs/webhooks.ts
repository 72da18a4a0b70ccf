import type { Logger } from "pino";
import type { RunRecord, WebhookDeliveryRecord } from "../../shared/runs";
import { sleep } from "../../shared/sleep";
import { runJson } from "./run-json";
import { webhookSignature } from "../../shared/webhook-signature";

/** Posts a run's outcome where the client asked, when it ends. */
export interface WebhookSender {
  /**
   * `values`: the thread's values when the run ended, when this process knows them. Undefined when nothing was
   * sent (the URL is not allowed).
   */
  send(
    url: string,
    run: RunRecord,
    values?: Record<string, unknown>,
  ): Promise<WebhookDeliveryRecord | undefined>;
  /** Why a webhook URL is refused (checked when the run is created), or undefined when it is allowed. */
  refusal(url: string): string | undefined;
}

export interface WebhookSenderOptions {
  /** `host` or `host:port`, lowercase (as the configuration reads WEBHOOK_ALLOWED_HOSTS). */
  allowedHosts: readonly string[];
  /** Key bytes of the signing secret (WEBHOOK_SIGNING_SECRET): deliveries are signed when it is set. */
  signingKey?: Buffer;
  /** Pauses before the second and later attempts. */
  retryDelaysMs?: readonly number[];
  /** Time all attempts of one delivery may take together (the run's caller may be waiting for its answer). */
  budgetMs?: number;
}

const DEFAULT_RETRY_DELAYS_MS = [500, 2_000];
const DEFAULT_BUDGET_MS = 10_000;

/**
 * Webhooks only to `https://` URLs whose host an operator listed (WEBHOOK_ALLOWED_HOSTS): the server never
 * sends a request where a client points it (no server-side request forgery through webhooks). No redirects are
 * followed. Each delivery is signed when a secret is configured (Standard Webhooks headers, see
 * webhook-signature.ts), retried after a pause while the receiver is unreachable, times out, or answers 408, 429
 * or 5xx, within one time budget; the outcome is returned for the run's record and never changes the run.
 */
export class AllowListWebhookSender implements WebhookSender {
  private readonly hosts: ReadonlySet<string>;
  private readonly retryDelaysMs: readonly number[];
  private readonly budgetMs: number;

  constructor(
    private readonly options: WebhookSenderOptions,
    private readonly logger: Logger,
  ) {
    this.hosts = new Set(options.allowedHosts);
    this.retryDelaysMs = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    this.budgetMs = options.budgetMs ?? DEFAULT_BUDGET_MS;
  }

  refusal(url: string): string | undefined {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return "expected an absolute URL";
    }
    if (parsed.protocol !== "https:") return "expected an https:// URL";
    if (parsed.username || parsed.password) return "expected a URL without credentials";
    if (!this.hosts.has(parsed.host)) {
      return this.hosts.size === 0
        ? "webhooks are off: the operator allows no host (WEBHOOK_ALLOWED_HOSTS)"
        : `expected a host the operator allows (WEBHOOK_ALLOWED_HOSTS), got ${parsed.host}`;
    }
    return undefined;
  }

  async send(
    url: string,
    run: RunRecord,
    values?: Record<string, unknown>,
  ): Promise<WebhookDeliveryRecord | undefined> {
    if (this.refusal(url) !== undefined) return undefined;
    const body = JSON.stringify(webhookBody(run, values));
    // One id for every attempt of one status change: a receiver drops a delivery it already took.
    const id = `${run.runId}:${run.status}`;
    const deadline = Date.now() + this.budgetMs;
    let attempts = 0;
    let statusCode: number | undefined;
    for (;;) {
      attempts += 1;
      const answer = await this.attempt(url, id, body, deadline - Date.now());
      statusCode = answer.statusCode;
      if (answer.kind === "delivered") {
        return { outcome: "delivered", attempts, statusCode, at: Date.now() };
      }
      const pause = this.retryDelaysMs[attempts - 1];
      // A refusal that a retry cannot change (4xx but 408 and 429), or no attempt left in the budget.
      if (answer.kind === "final" || pause === undefined || Date.now() + pause >= deadline) break;
      await sleep(pause);
    }
    this.logger.warn({ run: run.runId, status: statusCode, attempts }, "webhook not delivered");
    return {
      outcome: "failed",
      attempts,
      ...(statusCode !== undefined ? { statusCode } : {}),
      at: Date.now(),
    };
  }

  private async attempt(
    url: string,
    id: string,
    body: string,
    timeoutMs: number,
  ): Promise<{ kind: "delivered" | "retry" | "final"; statusCode?: number }> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.options.signingKey) {
      const timestamp = Math.floor(Date.now() / 1000);
      headers["webhook-id"] = id;
      headers["webhook-timestamp"] = String(timestamp);
      headers["webhook-signature"] = webhookSignature(this.options.signingKey, id, timestamp, body);
    }
    try {
      const response = await fetch(url, {
        method: "POST",
        headers,
        body,
        redirect: "error",
        signal: AbortSignal.timeout(Math.max(1, timeoutMs)),
      });
      await response.body?.cancel();
      if (response.ok) return { kind: "delivered", statusCode: response.status };
      const retryable =
        response.status === 408 || response.status === 429 || response.status >= 500;
      return { kind: retryable ? "retry" : "final", statusCode: response.status };
    } catch (error) {
      this.logger.warn(
        { err: { name: (error as Error)?.name } },
        "webhook attempt failed (unreachable or timed out)",
      );
      return { kind: "retry" };
    }
  }
}

/**
 * What a webhook receives, as LangGraph Server sends it: the run, when it started and ended, its final values
 * (when known) and its error message.
 */
function webhookBody(
  run: RunRecord,
  values: Record<string, unknown> | undefined,
): Record<string, unknown> {
  return {
    ...runJson(run),
    run_started_at: new Date(run.startedAt ?? run.createdAt).toISOString(),
    run_ended_at: new Date(run.updatedAt).toISOString(),
    webhook_sent_at: new Date().toISOString(),
    ...(values ? { values } : {}),
    ...(run.error ? { error: run.error.message } : {}),
  };
}
