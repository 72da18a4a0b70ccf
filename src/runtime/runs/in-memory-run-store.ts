import { plainCopy } from "../../shared/plain-copy";
import type { ListRunsInput, RunChanges, RunRecord, RunStore } from "../../shared/runs";

/** Run records in process memory, beside the in-memory thread store. */
export class InMemoryRunStore implements RunStore {
  private readonly runs = new Map<string, RunRecord>();

  // A missing thread is refused by the queue's rule right after (and the run deleted): nothing here creates one.
  async putRun(tenantId: string, run: RunRecord): Promise<void> {
    this.runs.set(runKey(tenantId, run.threadId, run.runId), plainCopy(run));
  }

  async getRun(tenantId: string, threadId: string, runId: string): Promise<RunRecord | undefined> {
    const run = this.runs.get(runKey(tenantId, threadId, runId));
    return run && plainCopy(run);
  }

  async listRuns(input: ListRunsInput): Promise<RunRecord[]> {
    const prefix = runKey(input.tenantId, input.threadId, "");
    const runs = [...this.runs]
      .filter(
        ([key, run]) => key.startsWith(prefix) && (!input.status || run.status === input.status),
      )
      .map(([, run]) => run)
      // Run ids are UUIDv7: their order is creation order.
      .sort((a, b) => (a.runId < b.runId ? 1 : a.runId > b.runId ? -1 : 0));
    return plainCopy(runs.slice(input.offset, input.offset + input.limit));
  }

  async updateRun(
    tenantId: string,
    threadId: string,
    runId: string,
    changes: RunChanges,
    now: number,
  ): Promise<RunRecord | undefined> {
    const run = this.runs.get(runKey(tenantId, threadId, runId));
    if (!run) return undefined;
    Object.assign(run, plainCopy(changes), { updatedAt: now });
    return plainCopy(run);
  }

  async deleteRun(tenantId: string, threadId: string, runId: string): Promise<void> {
    this.runs.delete(runKey(tenantId, threadId, runId));
  }

  async forgetThread(tenantId: string, threadId: string): Promise<void> {
    const prefix = runKey(tenantId, threadId, "");
    for (const key of this.runs.keys()) if (key.startsWith(prefix)) this.runs.delete(key);
  }
}

function runKey(tenantId: string, threadId: string, runId: string): string {
  return `${tenantId}\u0000${threadId}\u0000${runId}`;
}
