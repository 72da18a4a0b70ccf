import { ThreadNotFoundError } from "../shared/errors";
import {
  isRunStatus,
  type ListRunsInput,
  type PutRunOptions,
  type RunChanges,
  type RunKwargs,
  type RunRecord,
  type RunStore,
} from "../shared/runs";
import type { Item, ItemKey, TableClient } from "./client";
import { RUN_ITEM_ATTRIBUTES as R, TABLE_KEYS } from "./definition";
import { expression, renderUpdate, sortKeyBeginsWith, updateFragment } from "./expressions";
import { RUN_PREFIX, runSortKey, THREAD_RECORD_SK, threadPartitionKey } from "./keys";
import type { ThreadLife } from "./thread-record-cache";
import { recordKey } from "./thread-record-model";
import type { ThreadRecords } from "./thread-records";

export const RUN_ITEM_KIND = "r";

/** A run's JSON body: what it was asked to do, its metadata, and why it failed. */
interface RunBody {
  kwargs: RunKwargs;
  metadata: Record<string, unknown>;
  error?: RunRecord["error"];
}

/**
 * Run records (`sk = r#<run id>`, in their thread's partition, after its checkpoints and record). Each carries
 * its thread's generation, so a deleted or expired thread's runs go with it and never come back.
 */
export class RunItems implements RunStore {
  constructor(
    private readonly table: TableClient,
    private readonly threads: ThreadRecords,
  ) {}

  async putRun(tenantId: string, run: RunRecord, options: PutRunOptions = {}): Promise<void> {
    // The thread's life gives the generation the run belongs to: created here when the run may create its
    // thread, else read (this container usually knows it already: no request).
    const life =
      options.createThread === false
        ? await this.threads.readLife(tenantId, run.threadId)
        : await this.threads.ensureWritable(tenantId, run.threadId);
    if (!life) throw new ThreadNotFoundError(run.threadId);
    const body: RunBody = { kwargs: run.kwargs, metadata: run.metadata };
    if (run.error) body.error = run.error;
    const item: Item = {
      [TABLE_KEYS.partitionKey]: threadPartitionKey(tenantId, run.threadId),
      [TABLE_KEYS.sortKey]: runSortKey(run.runId),
      [R.kind]: RUN_ITEM_KIND,
      [R.generation]: life.generation,
      [R.runId]: run.runId,
      [R.status]: run.status,
      [R.assistantId]: run.assistantId,
      [R.graphId]: run.graphId,
      [R.multitaskStrategy]: run.multitaskStrategy,
      [R.createdAt]: run.createdAt,
      [R.updatedAt]: run.updatedAt,
      [R.legs]: run.legs,
      [R.body]: JSON.stringify(body),
    };
    if (run.startedAt !== undefined) item[R.startedAt] = run.startedAt;
    if (options.soon) await this.table.batchWriteSoon({ PutRequest: { Item: item } });
    else await this.table.batchWrite([{ PutRequest: { Item: item } }]);
  }

  async getRun(tenantId: string, threadId: string, runId: string): Promise<RunRecord | undefined> {
    const known = this.threads.knownLife(tenantId, threadId);
    let life: ThreadLife | undefined = known;
    let item: Item | undefined;
    if (known) {
      item = await this.table.get(runKey(tenantId, threadId, runId));
    } else {
      // The thread record (whose generation the run must carry) and the run in one request; the record is
      // remembered, so a rule decided next on this thread (a worker's claim) needs no read of its own.
      const pk = threadPartitionKey(tenantId, threadId);
      const items = await this.table.batchGet([recordKey(pk), runKey(tenantId, threadId, runId)]);
      const sortKeyOf = (candidate: Item) => candidate[TABLE_KEYS.sortKey];
      life = this.threads.observe(
        pk,
        items.find((candidate) => sortKeyOf(candidate) === THREAD_RECORD_SK),
      );
      item = items.find((candidate) => sortKeyOf(candidate) === runSortKey(runId));
    }
    if (!life) return undefined;
    return item && item[R.generation] === life.generation ? toRun(threadId, item) : undefined;
  }

  async listRuns(input: ListRunsInput): Promise<RunRecord[]> {
    const life = await this.threads.readLife(input.tenantId, input.threadId);
    if (!life) return [];
    const pk = threadPartitionKey(input.tenantId, input.threadId);
    const runs: RunRecord[] = [];
    const wanted = input.offset + input.limit;
    // Run ids are UUIDv7: descending key order is newest first.
    let startKey: Item | undefined;
    do {
      const page = await this.table.query({
        ...sortKeyBeginsWith(pk, RUN_PREFIX),
        ScanIndexForward: false,
        ExclusiveStartKey: startKey,
      });
      for (const item of page.Items ?? []) {
        if (item[R.generation] !== life.generation) continue;
        const run = toRun(input.threadId, item);
        if (input.status === undefined || run.status === input.status) runs.push(run);
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey && runs.length < wanted);
    return runs.slice(input.offset, wanted);
  }

  async updateRun(
    tenantId: string,
    threadId: string,
    runId: string,
    changes: RunChanges,
    now: number,
  ): Promise<RunRecord | undefined> {
    const fragments = [
      updateFragment({
        set: ["#updated_at = :updated_at"],
        names: { "#updated_at": R.updatedAt },
        values: { ":updated_at": now },
      }),
    ];
    if (changes.status !== undefined) {
      fragments.push(
        updateFragment({
          set: ["#status = :status"],
          names: { "#status": R.status },
          values: { ":status": changes.status },
        }),
      );
    }
    if (changes.legs !== undefined) {
      fragments.push(
        updateFragment({
          set: ["#legs = :legs"],
          names: { "#legs": R.legs },
          values: { ":legs": changes.legs },
        }),
      );
    }
    if (changes.startedAt !== undefined) {
      fragments.push(
        updateFragment({
          set: ["#started_at = :started_at"],
          names: { "#started_at": R.startedAt },
          values: { ":started_at": changes.startedAt },
        }),
      );
    }
    if (changes.eventCount !== undefined) {
      fragments.push(
        updateFragment({
          set: ["#events = :events"],
          names: { "#events": R.eventCount },
          values: { ":events": changes.eventCount },
        }),
      );
    }
    if (changes.webhookDelivery !== undefined) {
      fragments.push(
        updateFragment({
          set: ["#webhook = :webhook"],
          names: { "#webhook": R.webhookDelivery },
          values: { ":webhook": changes.webhookDelivery },
        }),
      );
    }
    if (changes.error !== undefined) {
      // The error goes into the body: read it, then write it back whole.
      const current = await this.table.get(runKey(tenantId, threadId, runId));
      if (!current) return undefined;
      const body = parseBody(current[R.body]);
      body.error = changes.error;
      fragments.push(
        updateFragment({
          set: ["#body = :body"],
          names: { "#body": R.body },
          values: { ":body": JSON.stringify(body) },
        }),
      );
    }
    const outcome = await this.table.update(
      runKey(tenantId, threadId, runId),
      renderUpdate(fragments, expression("attribute_exists(#sk)", { "#sk": TABLE_KEYS.sortKey })),
      { returnValues: "ALL_NEW" },
    );
    return outcome.applied && outcome.attributes ? toRun(threadId, outcome.attributes) : undefined;
  }

  async deleteRun(tenantId: string, threadId: string, runId: string): Promise<void> {
    await this.table.batchWrite([{ DeleteRequest: { Key: runKey(tenantId, threadId, runId) } }]);
  }

  /** Runs are items of their thread's partition: the thread's removal removes them. */
  async forgetThread(): Promise<void> {}
}

function runKey(tenantId: string, threadId: string, runId: string): ItemKey {
  return {
    [TABLE_KEYS.partitionKey]: threadPartitionKey(tenantId, threadId),
    [TABLE_KEYS.sortKey]: runSortKey(runId),
  };
}

function parseBody(text: unknown): RunBody {
  try {
    const body = JSON.parse(String(text)) as RunBody;
    return { kwargs: body.kwargs ?? {}, metadata: body.metadata ?? {}, error: body.error };
  } catch {
    return { kwargs: {}, metadata: {} };
  }
}

function toRun(threadId: string, item: Item): RunRecord {
  const body = parseBody(item[R.body]);
  const status: unknown = item[R.status];
  return {
    runId: String(item[R.runId]),
    threadId,
    assistantId: String(item[R.assistantId]),
    graphId: String(item[R.graphId]),
    status: isRunStatus(status) ? status : "error",
    kwargs: body.kwargs,
    metadata: body.metadata,
    multitaskStrategy: item[R.multitaskStrategy] as RunRecord["multitaskStrategy"],
    createdAt: Number(item[R.createdAt]),
    updatedAt: Number(item[R.updatedAt]),
    legs: Number(item[R.legs] ?? 0),
    ...(item[R.startedAt] !== undefined ? { startedAt: Number(item[R.startedAt]) } : {}),
    ...(item[R.eventCount] !== undefined ? { eventCount: Number(item[R.eventCount]) } : {}),
    ...(body.error ? { error: body.error } : {}),
    ...(item[R.webhookDelivery] !== undefined
      ? { webhookDelivery: item[R.webhookDelivery] as RunRecord["webhookDelivery"] }
      : {}),
  };
}
