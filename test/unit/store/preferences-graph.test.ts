import { InMemoryStore } from "@langchain/langgraph-checkpoint";
import { BoundedInMemorySaver } from "../../../src/checkpoint/memory/bounded-in-memory-saver";
import { buildPreferencesGraph } from "../../../src/examples/preferences";
import { BoundedInMemoryStore } from "../../../src/store/bounded-in-memory-store";

// The preferences example on the in-memory parts (its DynamoDB run is test/store/preferences-graph.test.ts).
describe("the preferences graph in memory", () => {
  it.each([
    ["BoundedInMemoryStore", () => new BoundedInMemoryStore().forTenant("acme")],
    ["LangGraph's InMemoryStore", () => new InMemoryStore()],
  ])("remembers a preference across threads with %s", async (_name, createStore) => {
    const graph = buildPreferencesGraph({
      checkpointer: new BoundedInMemorySaver(),
      store: createStore(),
    });
    const run = (threadId: string, message: string) =>
      graph.invoke({ userId: "ada", message }, { configurable: { thread_id: threadId } });
    expect((await run("t1", "What do I like?")).reply).toBe(
      "I don't know your preference yet: tell me what you prefer.",
    );
    expect((await run("t2", "I prefer oat milk")).reply).toBe("Noted: you prefer oat milk.");
    expect((await run("t3", "What do I like?")).reply).toBe("You prefer oat milk.");
  });

  it("explains a missing store", async () => {
    const graph = buildPreferencesGraph({ store: undefined as never });
    await expect(graph.invoke({ userId: "ada", message: "hi" })).rejects.toThrow(
      "The preferences graph needs a store",
    );
  });
});
