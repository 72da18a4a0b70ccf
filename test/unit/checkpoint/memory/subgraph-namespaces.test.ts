import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { BoundedInMemorySaver } from "../../../../src/checkpoint/memory";
import { CheckpointCapacityError } from "../../../../src/shared/errors";

// LangGraph names a subgraph's namespace `node:<taskId>`: every run of a subgraph node opens a new namespace in the
// thread, so the namespace limit also bounds how often a thread can run subgraphs.
describe("subgraph namespaces on BoundedInMemorySaver", () => {
  const State = Annotation.Root({ n: Annotation<number>() });
  const child = new StateGraph(State)
    .addNode("increment", (state) => ({ n: state.n + 1 }))
    .addEdge(START, "increment")
    .addEdge("increment", END)
    .compile();

  it("counts one namespace per subgraph run and rejects the run that needs one too many", async () => {
    const saver = new BoundedInMemorySaver({ config: { maxNamespacesPerThread: 3 } });
    const graph = new StateGraph(State)
      .addNode("child", child)
      .addEdge(START, "child")
      .addEdge("child", END)
      .compile({ checkpointer: saver });
    const config = { configurable: { thread_id: "t" } };

    expect(await graph.invoke({ n: 1 }, config)).toEqual({ n: 2 });
    expect(await graph.invoke({ n: 10 }, config)).toEqual({ n: 11 });
    expect(saver.stats().namespaces).toBe(3);
    const namespaces = new Set<string>();
    for await (const tuple of saver.list(config)) {
      namespaces.add(String(tuple.config.configurable?.checkpoint_ns));
    }
    expect([...namespaces].filter((name) => /^child:[0-9a-f-]{36}$/.test(name))).toHaveLength(2);

    await expect(graph.invoke({ n: 20 }, config)).rejects.toThrow(CheckpointCapacityError);
    // The refused writes (the subgraph's put and its task writes) stored nothing.
    expect(saver.stats().namespaces).toBe(3);
    expect(saver.stats().rejections.maxNamespacesPerThread).toBeGreaterThanOrEqual(1);
  });
});
