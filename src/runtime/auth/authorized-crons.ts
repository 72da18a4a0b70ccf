import { CronNotFoundError } from "../../shared/errors";
import type { CronRecord, CronRef, CronStore } from "../../shared/crons";
import { allows, currentAccess } from "./request-access";

/**
 * Crons under the request's auth handlers (`crons:*`), their filters matched against each cron's metadata, as
 * threads' are: a cron the user may not see is a missing one (404), and searches and counts leave it out before
 * paging. `crons:create` and `crons:update` may stamp metadata. Outside a request (sweeps, fires), the store itself.
 */
export class AuthorizedCronStore implements CronStore {
  constructor(private readonly inner: CronStore) {}

  async get(tenantId: string, cronId: string): Promise<CronRecord | undefined> {
    const access = currentAccess();
    if (!access) return this.inner.get(tenantId, cronId);
    const decision = await access.decide("crons:read", { cron_id: cronId });
    const cron = await this.inner.get(tenantId, cronId);
    return cron && allows(decision, cron.metadata) ? cron : undefined;
  }

  async list(tenantId: string): Promise<CronRecord[]> {
    const access = currentAccess();
    if (!access) return this.inner.list(tenantId);
    const decision = await access.decide("crons:search", {});
    return (await this.inner.list(tenantId)).filter((cron) => allows(decision, cron.metadata));
  }

  async save(record: CronRecord, expected: number | "new"): Promise<boolean> {
    const access = currentAccess();
    if (!access) return this.inner.save(record, expected);
    const fields = {
      cron_id: record.cronId,
      schedule: record.schedule,
      payload: record.payload,
      metadata: record.metadata,
    };
    if (expected === "new") {
      const { value } = await access.decide("crons:create", {
        ...fields,
        thread_id: record.threadId ?? null,
        end_time: record.endTime === undefined ? null : new Date(record.endTime).toISOString(),
      });
      // The caller's record takes the stamp too: it answers the request with it.
      record.metadata = value.metadata ?? {};
      return this.inner.save(record, expected);
    }
    const decision = await access.decide("crons:update", fields);
    if (decision.pattern) {
      const stored = await this.inner.get(record.tenantId, record.cronId);
      if (!stored || !allows(decision, stored.metadata)) {
        throw new CronNotFoundError(record.cronId);
      }
    }
    record.metadata = decision.value.metadata ?? record.metadata;
    return this.inner.save(record, expected);
  }

  async delete(tenantId: string, cronId: string): Promise<boolean> {
    const access = currentAccess();
    if (access) {
      const decision = await access.decide("crons:delete", { cron_id: cronId });
      if (decision.pattern) {
        const stored = await this.inner.get(tenantId, cronId);
        if (!stored || !allows(decision, stored.metadata)) return false;
      }
    }
    return this.inner.delete(tenantId, cronId);
  }

  due(now: number): AsyncIterable<CronRef> {
    return this.inner.due(now);
  }
}
