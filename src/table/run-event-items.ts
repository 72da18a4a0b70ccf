import type { RunEvent, RunEventStore } from "../shared/run-events";
import type { Item, TableClient } from "./client";
import { RUN_EVENT_ITEM_ATTRIBUTES as E, TABLE_KEYS } from "./definition";
import { sortKeyBetween } from "./expressions";
import { parseRunEventSortKey, runEventRange, runEventSortKey, threadPartitionKey } from "./keys";
import type { ThreadRecords } from "./thread-records";

export const RUN_EVENT_ITEM_KIND = "s";

/** Bytes of event data per item: under DynamoDB's 400 KB item limit with room for the keys. */
export const EVENT_PART_BYTES = 350 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * A run's stream events (`sk = s#<run id>#<seq>#<part>`, in its thread's partition). Each carries its thread's
 * generation, so a deleted or expired thread's events go with it. Writes are BatchWriteItem (25 parts per
 * request); a read is one Query from the position asked for.
 */
export class RunEventItems implements RunEventStore {
  constructor(
    private readonly table: TableClient,
    private readonly threads: ThreadRecords,
  ) {}

  async append(
    tenantId: string,
    threadId: string,
    runId: string,
    events: RunEvent[],
  ): Promise<void> {
    if (events.length === 0) return;
    const life = await this.threads.ensureWritable(tenantId, threadId);
    const pk = threadPartitionKey(tenantId, threadId);
    const items: Item[] = [];
    for (const event of events) {
      const bytes = encoder.encode(event.data);
      const parts = Math.max(1, Math.ceil(bytes.byteLength / EVENT_PART_BYTES));
      for (let part = 0; part < parts; part++) {
        const item: Item = {
          [TABLE_KEYS.partitionKey]: pk,
          [TABLE_KEYS.sortKey]: runEventSortKey(runId, event.seq, part),
          [E.kind]: RUN_EVENT_ITEM_KIND,
          [E.generation]: life.generation,
          [E.data]: bytes.subarray(part * EVENT_PART_BYTES, (part + 1) * EVENT_PART_BYTES),
        };
        if (part === 0) {
          item[E.event] = event.event;
          item[E.parts] = parts;
        }
        items.push(item);
      }
    }
    await this.table.batchWrite(items.map((Item) => ({ PutRequest: { Item } })));
  }

  /** Events are items of their thread's partition: the thread's removal removes them. */
  async forgetThread(): Promise<void> {}

  async read(
    tenantId: string,
    threadId: string,
    runId: string,
    afterSeq: number,
    limit: number,
  ): Promise<RunEvent[]> {
    const life = await this.threads.readLife(tenantId, threadId);
    if (!life) return [];
    const pk = threadPartitionKey(tenantId, threadId);
    const { low, high } = runEventRange(runId, afterSeq + 1);
    const events: RunEvent[] = [];
    let pending: { seq: number; event: string; parts: Uint8Array[]; expected: number } | undefined;
    for await (const page of this.table.queryPages(sortKeyBetween(pk, low, high))) {
      for (const item of page) {
        if (item[E.generation] !== life.generation) continue;
        const { seq, part } = parseRunEventSortKey(runId, String(item[TABLE_KEYS.sortKey]));
        // Parts and events are written in parallel batches: stop at the first gap, the rest comes next read.
        const expectedSeq = afterSeq + 1 + events.length;
        if (seq !== expectedSeq || part !== (pending?.parts.length ?? 0)) return events;
        if (part === 0) {
          pending = {
            seq,
            event: String(item[E.event]),
            parts: [],
            expected: Number(item[E.parts]),
          };
        }
        pending!.parts.push(item[E.data] as Uint8Array);
        if (pending!.parts.length === pending!.expected) {
          events.push({ seq, event: pending!.event, data: decoder.decode(concat(pending!.parts)) });
          pending = undefined;
          if (events.length >= limit) return events;
        }
      }
    }
    return events;
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const whole = new Uint8Array(parts.reduce((size, part) => size + part.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    whole.set(part, offset);
    offset += part.byteLength;
  }
  return whole;
}
