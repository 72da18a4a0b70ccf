import {
  cronSortKey,
  cronsPartitionKey,
  dueShard,
  parseAnyThreadPartitionKey,
  parseCronSortKey,
  parseCronsPartitionKey,
  threadPartitionKey,
  tenantPartitionKey,
} from "../../../src/table/keys";

describe("cron keys", () => {
  it("reads the tenant and the cron id back, and no tenant from a thread's or another kind's partition", () => {
    for (const cronId of ["plain", "with#hash", "ünïcode/slash", "$dollar"]) {
      const pk = cronsPartitionKey("tenant-1");
      expect(parseCronsPartitionKey(pk)).toBe("tenant-1");
      expect(parseCronSortKey(cronSortKey(cronId))).toBe(cronId);
    }
    expect(parseCronsPartitionKey(threadPartitionKey("tenant-1", "crons"))).toBeUndefined();
    expect(parseCronsPartitionKey(tenantPartitionKey("tenant-1", "assistants"))).toBeUndefined();
    // A crons partition is no thread's, so the run-recovery sweep could never take it for one.
    expect(parseAnyThreadPartitionKey(cronsPartitionKey("tenant-1"))).toBeUndefined();
    expect(() => parseCronSortKey("r#run")).toThrow(RangeError);
  });

  it("spreads crons over the c-partitions of the threads-unsettled index, never a thread's u-partition", () => {
    const shards = new Set<string>();
    const pk = cronsPartitionKey("tenant-1");
    for (let index = 0; index < 300; index++) {
      const sk = cronSortKey(`cron-${index}`);
      expect(dueShard(pk, sk, 10)).toBe(dueShard(pk, sk, 10));
      shards.add(dueShard(pk, sk, 10));
    }
    expect([...shards].sort()).toEqual(
      Array.from({ length: 10 }, (_, shard) => `c${shard}`).sort(),
    );
  });
});
