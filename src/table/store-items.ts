import type { QueryCommandInput } from "@aws-sdk/lib-dynamodb";
import type { ItemKey, TableClient } from "./client";
import { STORE_ITEM_ATTRIBUTES as S, TABLE_KEYS } from "./definition";
import { notExpired } from "./expiry";
import {
  expression,
  projection,
  renderUpdate,
  sortKeyBetween,
  updateFragment,
  type UpdateFragment,
} from "./expressions";

/**
 * The long-term memory store's items (layout in keys.ts, attributes in definition.ts): their shape and the
 * requests that read and write them. Values are opaque here (JSON text or its compressed bytes); the store
 * decides what they hold. Every read is consistent.
 */
export interface StoreItemRecord {
  pk: string;
  sk: string;
  /** JSON text, or its brotli bytes. */
  v: string | Uint8Array;
  ca: number;
  ua: number;
  ttl?: number;
  tm?: number;
  e?: Uint8Array;
}

/** What a put stores besides the key. */
export interface StoreItemWrite {
  value: string | Uint8Array;
  /** Epoch milliseconds of the write (updated time; created time for a new item). */
  nowMs: number;
  /** Expiry in epoch seconds and the TTL in minutes it came from; undefined: never expires. */
  expiry: { expiresAt: number; ttlMinutes: number } | undefined;
  /** Packed embedding vectors; undefined: none. */
  vectors: Uint8Array | undefined;
}

export interface StoreRangePage {
  items: StoreItemRecord[];
  /** Where the next page starts; undefined after the last page. */
  lastKey: ItemKey | undefined;
  /** Read capacity the page consumed (every item read, returned or not), when DynamoDB reported it. */
  capacityUnits: number | undefined;
}

/** Attributes a namespace walk needs: the key, and the expiry to skip expired items. */
const WALK_ATTRIBUTES = [TABLE_KEYS.sortKey, S.ttl] as const;

export class StoreItems {
  constructor(private readonly table: TableClient) {}

  /** One item (expired or not: the caller decides). */
  async get(pk: string, sk: string): Promise<StoreItemRecord | undefined> {
    return (await this.table.get(key(pk, sk))) as StoreItemRecord | undefined;
  }

  /** Several items of one partition, in no particular order (missing ones are left out). */
  async getMany(pk: string, sortKeys: readonly string[]): Promise<StoreItemRecord[]> {
    if (sortKeys.length === 0) return [];
    return (await this.table.batchGet(sortKeys.map((sk) => key(pk, sk)))) as StoreItemRecord[];
  }

  /**
   * One page of the items between `low` and `high` (both included), in key order. Items expired at `nowMs` are
   * left out by DynamoDB (they still count towards `limit` and capacity). `keysOnly` reads only what a
   * namespace walk needs (capacity is the same: DynamoDB bills whole items).
   */
  async range(
    pk: string,
    low: string,
    high: string,
    options: { limit?: number; startKey?: ItemKey; nowMs: number; keysOnly?: boolean },
  ): Promise<StoreRangePage> {
    const keyCondition = sortKeyBetween(pk, low, high);
    const live = notExpired(options.nowMs);
    const attributes = options.keysOnly ? projection(WALK_ATTRIBUTES) : undefined;
    const input: Omit<QueryCommandInput, "TableName"> = {
      KeyConditionExpression: keyCondition.KeyConditionExpression,
      FilterExpression: live.text,
      ExpressionAttributeNames: {
        ...keyCondition.ExpressionAttributeNames,
        ...live.names,
        ...attributes?.ExpressionAttributeNames,
      },
      ExpressionAttributeValues: { ...keyCondition.ExpressionAttributeValues, ...live.values },
      ...(attributes ? { ProjectionExpression: attributes.ProjectionExpression } : {}),
      ...(options.limit !== undefined ? { Limit: options.limit } : {}),
      ...(options.startKey ? { ExclusiveStartKey: options.startKey } : {}),
    };
    const page = await this.table.query(input);
    return {
      items: (page.Items ?? []) as StoreItemRecord[],
      lastKey: page.LastEvaluatedKey as ItemKey | undefined,
      capacityUnits: page.ConsumedCapacity?.CapacityUnits,
    };
  }

  /**
   * Writes an item whole, keeping its creation time when it exists and is live. One UpdateItem; a second only
   * when an expired item is still stored under the key (a new item: its creation time is the write's).
   */
  async put(pk: string, sk: string, write: StoreItemWrite): Promise<void> {
    const kept = await this.table.update(
      key(pk, sk),
      renderUpdate(itemFragments(write, false), notExpired(write.nowMs)),
    );
    if (kept.applied) return;
    await this.table.update(key(pk, sk), renderUpdate(itemFragments(write, true)));
  }

  /** Deletes items of one partition (missing ones are no error). */
  delete(pk: string, sortKeys: readonly string[]): Promise<void> {
    return this.table.batchWrite(sortKeys.map((sk) => ({ DeleteRequest: { Key: key(pk, sk) } })));
  }

  /**
   * Sets an item's expiry to `expiresAt`, only if it still has the expiry it was read with: a write or deletion
   * since the read wins, and a deleted item is never brought back. Returns whether it was renewed.
   */
  async renew(
    pk: string,
    sk: string,
    read: { expiresAt: number; ttlMinutes: number },
    expiresAt: number,
  ): Promise<boolean> {
    const outcome = await this.table.update(
      key(pk, sk),
      renderUpdate(
        [
          updateFragment({
            set: ["#ttl = :expires_at"],
            names: { "#ttl": S.ttl },
            values: { ":expires_at": expiresAt },
          }),
        ],
        expression(
          "#ttl = :read_expires_at AND #tm = :read_minutes",
          { "#ttl": S.ttl, "#tm": S.ttlMinutes },
          { ":read_expires_at": read.expiresAt, ":read_minutes": read.ttlMinutes },
        ),
      ),
    );
    return outcome.applied;
  }
}

function itemFragments(write: StoreItemWrite, fresh: boolean): UpdateFragment[] {
  const fragments = [
    updateFragment({
      set: ["#v = :v", "#ua = :now", fresh ? "#ca = :now" : "#ca = if_not_exists(#ca, :now)"],
      names: { "#v": S.value, "#ua": S.updatedAt, "#ca": S.createdAt },
      values: { ":v": write.value, ":now": write.nowMs },
    }),
  ];
  fragments.push(
    write.expiry
      ? updateFragment({
          set: ["#ttl = :ttl", "#tm = :tm"],
          names: { "#ttl": S.ttl, "#tm": S.ttlMinutes },
          values: { ":ttl": write.expiry.expiresAt, ":tm": write.expiry.ttlMinutes },
        })
      : updateFragment({ remove: ["#ttl", "#tm"], names: { "#ttl": S.ttl, "#tm": S.ttlMinutes } }),
  );
  fragments.push(
    write.vectors
      ? updateFragment({
          set: ["#e = :e"],
          names: { "#e": S.vectors },
          values: { ":e": write.vectors },
        })
      : updateFragment({ remove: ["#e"], names: { "#e": S.vectors } }),
  );
  return fragments;
}

function key(pk: string, sk: string): ItemKey {
  return { [TABLE_KEYS.partitionKey]: pk, [TABLE_KEYS.sortKey]: sk };
}
