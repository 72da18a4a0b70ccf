import { randomUUID } from "node:crypto";
import { BoundedInMemoryStore } from "../../../src/store/bounded-in-memory-store";
import { describeStoreBehaviour } from "../../store/store-behaviour";

// The shared store behaviour suite on the bounded in-memory store (DynamoDBStore runs it on DynamoDB Local).
// The idle TTL is this store's own guardrail (bounded-in-memory-store.test.ts): here it is out of the way of
// the suite's clock, which jumps years ahead.
const TEN_YEARS_SECONDS = 10 * 365 * 24 * 60 * 60;

describeStoreBehaviour("BoundedInMemoryStore", {
  create: (clock, options = {}) =>
    new BoundedInMemoryStore({
      now: clock.now,
      config: {
        idleTtlSeconds: TEN_YEARS_SECONDS,
        ...(options.maxValueBytes ? { maxValueBytes: options.maxValueBytes } : {}),
      },
      ...(options.ttl ? { ttl: options.ttl } : {}),
      ...(options.index ? { index: options.index } : {}),
    }).forTenant(`tenant-${randomUUID()}`),
  otherTenant: (store) => (store as BoundedInMemoryStore).forTenant(`tenant-${randomUUID()}`),
});
