import { plainCopy } from "../../shared/plain-copy";
import type { CronRecord, CronRef, CronStore } from "../../shared/crons";

/**
 * Crons in this process's memory (the dev server's in-memory backend, tests): the same contract as the table's
 * CronItems, revision conditions included, so a sweep's claim behaves alike on both.
 */
export class InMemoryCronStore implements CronStore {
  private readonly crons = new Map<string, CronRecord>();

  async get(tenantId: string, cronId: string): Promise<CronRecord | undefined> {
    const record = this.crons.get(keyOf(tenantId, cronId));
    return record ? plainCopy(record) : undefined;
  }

  async list(tenantId: string): Promise<CronRecord[]> {
    return [...this.crons.values()]
      .filter((record) => record.tenantId === tenantId)
      .map((record) => plainCopy(record));
  }

  async save(record: CronRecord, expected: number | "new"): Promise<boolean> {
    const key = keyOf(record.tenantId, record.cronId);
    const current = this.crons.get(key);
    if (expected === "new" ? current !== undefined : current?.revision !== expected) return false;
    this.crons.set(key, plainCopy(record));
    return true;
  }

  async delete(tenantId: string, cronId: string): Promise<boolean> {
    return this.crons.delete(keyOf(tenantId, cronId));
  }

  async *due(now: number): AsyncIterable<CronRef> {
    for (const record of [...this.crons.values()]) {
      if (record.dueAt !== undefined && record.dueAt <= now) {
        yield { tenantId: record.tenantId, cronId: record.cronId };
      }
    }
  }
}

// A tenant id never contains "#" (identifiers.ts), so the pair cannot collide.
function keyOf(tenantId: string, cronId: string): string {
  return `${tenantId}#${cronId}`;
}
