import type { CronRecord, CronRef, CronStore } from "../shared/crons";
import { assertIdentifier, assertTenantId } from "../shared/identifiers";
import type { Item, ItemKey, TableClient } from "./client";
import {
  CRON_ITEM_ATTRIBUTES as A,
  DUE_CRON_SHARDS,
  TABLE_KEYS,
  THREADS_UNSETTLED_INDEX,
} from "./definition";
import {
  expression,
  indexPartitionUpTo,
  renderUpdate,
  sortKeyBeginsWith,
  updateFragment,
} from "./expressions";
import {
  CRON_PREFIX,
  cronSortKey,
  cronsPartitionKey,
  duePartition,
  dueShard,
  parseCronSortKey,
  parseCronsPartitionKey,
} from "./keys";

export const CRON_ITEM_KIND = "k";

/**
 * A tenant's crons in one partition of their own (`<tenant>##crons`), one item per cron, and the live ones in
 * the threads-unsettled index under partitions of their own (`c0`..`c9`, sort key: when a sweep should look at
 * the cron). Every write is one UpdateItem conditioned on the revision its writer read (no transactions, no
 * PutItem: the roles are granted neither), so a sweep's claim of a fire and a PATCH never overwrite each other.
 */
export class CronItems implements CronStore {
  constructor(private readonly table: TableClient) {}

  async get(tenantId: string, cronId: string): Promise<CronRecord | undefined> {
    const item = await this.table.get(cronKey(tenantId, cronId));
    return item ? toCron(tenantId, item) : undefined;
  }

  async list(tenantId: string): Promise<CronRecord[]> {
    const items = await this.table.queryAll({
      ...sortKeyBeginsWith(cronsPartitionKey(assertTenantId(tenantId)), CRON_PREFIX),
      ConsistentRead: true,
    });
    return items.map((item) => toCron(tenantId, item));
  }

  async save(record: CronRecord, expected: number | "new"): Promise<boolean> {
    const key = cronKey(record.tenantId, record.cronId);
    const { tenantId: _tenant, cronId: _id, revision, dueAt, ...body } = record;
    const due =
      dueAt === undefined
        ? updateFragment({ remove: ["#due_partition", "#due_at"] })
        : updateFragment({
            set: ["#due_partition = :due_partition", "#due_at = :due_at"],
            values: {
              ":due_partition": dueShard(key.pk, key.sk, DUE_CRON_SHARDS),
              ":due_at": dueAt,
            },
          });
    const outcome = await this.table.update(
      key,
      renderUpdate(
        [
          updateFragment({
            set: ["#kind = :kind", "#body = :body", "#revision = :revision"],
            names: {
              "#kind": A.kind,
              "#body": A.body,
              "#revision": A.revision,
              "#due_partition": A.duePartition,
              "#due_at": A.dueAt,
            },
            values: {
              ":kind": CRON_ITEM_KIND,
              ":body": JSON.stringify(body),
              ":revision": revision,
            },
          }),
          due,
        ],
        expected === "new"
          ? expression("attribute_not_exists(#pk)", { "#pk": TABLE_KEYS.partitionKey })
          : expression(
              "#revision = :expected",
              { "#revision": A.revision },
              { ":expected": expected },
            ),
      ),
    );
    return outcome.applied;
  }

  async delete(tenantId: string, cronId: string): Promise<boolean> {
    const key = cronKey(tenantId, cronId);
    if (!(await this.table.get(key, [TABLE_KEYS.partitionKey]))) return false;
    await this.table.batchWrite([{ DeleteRequest: { Key: key } }]);
    return true;
  }

  /** The index's due-crons partitions, each read up to `now` (keys only: the sweep reads each cron it claims). */
  async *due(now: number): AsyncIterable<CronRef> {
    for (let shard = 0; shard < DUE_CRON_SHARDS; shard++) {
      for await (const page of this.table.queryPages({
        IndexName: THREADS_UNSETTLED_INDEX.name,
        ...indexPartitionUpTo(
          THREADS_UNSETTLED_INDEX.partitionKey,
          duePartition(shard),
          THREADS_UNSETTLED_INDEX.sortKey,
          now,
        ),
      })) {
        for (const item of page) {
          const tenantId = parseCronsPartitionKey(String(item[TABLE_KEYS.partitionKey]));
          if (tenantId === undefined) continue;
          yield { tenantId, cronId: parseCronSortKey(String(item[TABLE_KEYS.sortKey])) };
        }
      }
    }
  }
}

function cronKey(tenantId: string, cronId: string): ItemKey {
  return {
    [TABLE_KEYS.partitionKey]: cronsPartitionKey(assertTenantId(tenantId)),
    [TABLE_KEYS.sortKey]: cronSortKey(assertIdentifier("cron_id", cronId)),
  };
}

function toCron(tenantId: string, item: Item): CronRecord {
  const body = JSON.parse(String(item[A.body])) as Omit<
    CronRecord,
    "tenantId" | "cronId" | "revision" | "dueAt"
  >;
  const dueAt = item[A.dueAt];
  return {
    ...body,
    threadId: body.threadId ?? undefined,
    onRunCompleted: body.onRunCompleted ?? undefined,
    timezone: body.timezone ?? undefined,
    endTime: body.endTime ?? undefined,
    nextRunAt: body.nextRunAt ?? undefined,
    pendingFire: body.pendingFire ?? undefined,
    tenantId,
    cronId: parseCronSortKey(String(item[TABLE_KEYS.sortKey])),
    revision: Number(item[A.revision]),
    dueAt: typeof dueAt === "number" ? dueAt : undefined,
  };
}
