import type { Logger } from "pino";
import type { RunRecord } from "../../shared/runs";
import { runJson } from "./run-json";

/** Posts a run's outcome where the client asked, when it ends. */
export interface WebhookSender {
  /** `values`: the thread's values when the run ended, when this process knows them. */
  send(url: string, run: RunRecord, values?: Record<string, unknown>): Promise<void>;
  /** Why a webhook URL is refused (checked when the run is created), or undefined when it is allowed. */
  refusal(url: string): string | undefined;
}

const WEBHOOK_TIMEOUT_MS = 10_000;

/**
 * Webhooks only to `https://` URLs whose host an operator listed (WEBHOOK_ALLOWED_HOSTS): the server never
 * sends a request where a client points it (no server-side request forgery through webhooks). No redirects are
 * followed; a failed delivery is logged, never retried, and never changes the run.
 */
export class AllowListWebhookSender implements WebhookSender {
  private readonly hosts: ReadonlySet<string>;

  /** `allowedHosts`: `host` or `host:port`, lowercase (as the configuration reads WEBHOOK_ALLOWED_HOSTS). */
  constructor(
    allowedHosts: readonly string[],
    private readonly logger: Logger,
  ) {
    this.hosts = new Set(allowedHosts);
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

  async send(url: string, run: RunRecord, values?: Record<string, unknown>): Promise<void> {
    if (this.refusal(url) !== undefined) return;
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(webhookBody(run, values)),
        redirect: "error",
        signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
      });
      if (!response.ok) {
        this.logger.warn({ run: run.runId, status: response.status }, "webhook refused");
      }
    } catch (error) {
      this.logger.warn({ run: run.runId, err: { name: (error as Error)?.name } }, "webhook failed");
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
