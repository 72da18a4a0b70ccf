import { InMemoryThreadStore } from "../../../src/runtime/runs/in-memory-thread-store";
import { describeThreadStoreContract } from "../../support/thread-store-contract";

// The model-based test runs 300 schedules of at most 40 steps each here (about 1.5 s on a store that follows
// the model; DynamoDB Local's runs 60 of at most 25).
describeThreadStoreContract(
  "InMemoryThreadStore",
  () => new InMemoryThreadStore(),
  "tenant-memory",
  {
    numRuns: 300,
    maxSteps: 40,
    timeoutMs: 120_000,
  },
);
