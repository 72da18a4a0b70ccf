import type { RunEvent, RunEventStore } from "../../shared/run-events";

/** Run stream events in process memory, beside the in-memory run store (the dev server, tests). */
export class InMemoryRunEventStore implements RunEventStore {
  private readonly runs = new Map<string, RunEvent[]>();

  async append(
    tenantId: string,
    threadId: string,
    runId: string,
    events: RunEvent[],
  ): Promise<void> {
    const key = runKey(tenantId, threadId, runId);
    const stored = this.runs.get(key) ?? [];
    stored.push(...events.map((event) => ({ ...event })));
    this.runs.set(key, stored);
  }

  async read(
    tenantId: string,
    threadId: string,
    runId: string,
    afterSeq: number,
    limit: number,
  ): Promise<RunEvent[]> {
    const stored = this.runs.get(runKey(tenantId, threadId, runId)) ?? [];
    return stored.filter((event) => event.seq > afterSeq).slice(0, limit);
  }

  /** Drops a deleted thread's events. */
  async forgetThread(tenantId: string, threadId: string): Promise<void> {
    const prefix = runKey(tenantId, threadId, "");
    for (const key of this.runs.keys()) if (key.startsWith(prefix)) this.runs.delete(key);
  }
}

function runKey(tenantId: string, threadId: string, runId: string): string {
  return `${tenantId}\u0000${threadId}\u0000${runId}`;
}
