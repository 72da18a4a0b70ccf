import type { RunRecord, WebhookDeliveryRecord } from "../../shared/runs";

/** A run as LangGraph Server shows it (the SDK's `Run`): in responses and in webhook payloads. */
export function runJson(run: RunRecord): Record<string, unknown> {
  return {
    run_id: run.runId,
    thread_id: run.threadId,
    assistant_id: run.assistantId,
    created_at: new Date(run.createdAt).toISOString(),
    updated_at: new Date(run.updatedAt).toISOString(),
    status: run.status,
    metadata: run.metadata,
    kwargs: kwargsJson(run),
    multitask_strategy: run.multitaskStrategy,
    // Not in LangGraph Server's run: how the run's webhook delivery went (clients ignore fields they do not know).
    ...(run.webhookDelivery ? { webhook_delivery: webhookDeliveryJson(run.webhookDelivery) } : {}),
  };
}

function webhookDeliveryJson(delivery: WebhookDeliveryRecord): Record<string, unknown> {
  return {
    outcome: delivery.outcome,
    attempts: delivery.attempts,
    status_code: delivery.statusCode ?? null,
    at: new Date(delivery.at).toISOString(),
  };
}

function kwargsJson(run: RunRecord): Record<string, unknown> {
  const { kwargs } = run;
  return {
    input: kwargs.input ?? null,
    command: kwargs.command ?? null,
    config: kwargs.config ?? {},
    context: kwargs.context ?? null,
    stream_mode: kwargs.streamMode ?? ["values"],
    interrupt_before: kwargs.interruptBefore ?? null,
    interrupt_after: kwargs.interruptAfter ?? null,
    webhook: kwargs.webhook ?? null,
    temporary: kwargs.temporary ?? false,
    subgraphs: kwargs.streamSubgraphs ?? false,
  };
}
