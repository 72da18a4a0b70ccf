import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation";
import { BoundedInMemorySaver } from "../../../../src/checkpoint/memory";

// The official conformance suite, under this saver's own name (so no test is skipped as "MemorySaver").
// Every createCheckpointer() is a fresh saver, so the suite's reused thread ids never see each other.
const initializer = {
  checkpointerName: "BoundedInMemorySaver",
  createCheckpointer: () => new BoundedInMemorySaver(),
};

validate(initializer);
deltaChannelHistoryTests(initializer);
