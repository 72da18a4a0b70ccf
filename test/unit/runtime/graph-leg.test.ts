import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { InMemorySaver } from "../../../src/checkpoint/memory";
import { buildBookingGraph } from "../../../src/examples/booking";
import { runGraphLeg, type GraphLegInput } from "../../../src/runtime/graphs/graph-leg";
import type { HandlerGraph } from "../../../src/runtime/types";

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

/** A graph whose one node waits until LangGraph's signal aborts (or 10 s pass); `onStart` hears each start. */
function waitingGraph(onStart?: () => void): HandlerGraph {
  const State = Annotation.Root({ done: Annotation<boolean>() });
  return new StateGraph(State)
    .addNode("wait", async (_state, config) => {
      onStart?.();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 10_000);
        config.signal?.addEventListener("abort", () => {
          clearTimeout(timer);
          resolve();
        });
      });
      return { done: true };
    })
    .addEdge(START, "wait")
    .addEdge("wait", END)
    .compile({ checkpointer: new InMemorySaver() }) as unknown as HandlerGraph;
}

function leg(graph: HandlerGraph, overrides: Partial<GraphLegInput> = {}): GraphLegInput {
  return {
    graph,
    input: { request: "move my appointment" },
    config: { configurable: { thread_id: `leg-${Math.random()}` } },
    budgetMs: 60_000,
    withSaver: (work) => work(),
    ...overrides,
  };
}

describe("runGraphLeg: how one leg stops the graph", () => {
  it("leaves nothing behind once it ends: the signal LangGraph was given is collected", async () => {
    // LangGraph adds an abort listener to the signal it is given and never removes it; Node keeps a signal of
    // AbortSignal.any() with such a listener alive until it aborts, so a leg must not hand it one.
    const booking = buildBookingGraph({ checkpointer: new InMemorySaver() });
    const given: Array<WeakRef<AbortSignal>> = [];
    const spied = {
      stream: (input: unknown, options: { signal: AbortSignal }) => {
        given.push(new WeakRef(options.signal));
        return booking.stream(input as never, options as never);
      },
    } as unknown as HandlerGraph;
    for (let index = 0; index < 3; index += 1) {
      const cancel = new AbortController();
      const result = await runGraphLeg(leg(spied, { cancel: cancel.signal }));
      expect(result.outcome.kind).toBe("paused");
    }
    await new Promise((resolve) => setTimeout(resolve, 0));
    collectGarbage();
    await new Promise((resolve) => setTimeout(resolve, 0));
    collectGarbage();
    expect(given).toHaveLength(3);
    expect(given.filter((signal) => signal.deref() !== undefined)).toHaveLength(0);
  });

  it("stops for a cancel, with the cancel's action", async () => {
    const cancel = new AbortController();
    setTimeout(() => cancel.abort("rollback"), 50);
    const result = await runGraphLeg(leg(waitingGraph(), { cancel: cancel.signal }));
    expect(result.outcome).toEqual({ kind: "cancelled", action: "rollback" });
  });

  it("never starts the graph for a cancel that came before the leg", async () => {
    const cancel = new AbortController();
    cancel.abort("interrupt");
    let starts = 0;
    const graph = waitingGraph(() => (starts += 1));
    const result = await runGraphLeg(leg(graph, { cancel: cancel.signal }));
    expect(result.outcome).toEqual({ kind: "cancelled", action: "interrupt" });
    expect(starts).toBe(0);
  });

  it("stops at its deadline, and says so rather than cancelled", async () => {
    const cancel = new AbortController();
    const result = await runGraphLeg(leg(waitingGraph(), { cancel: cancel.signal, budgetMs: 50 }));
    expect(result.outcome).toEqual({ kind: "deadline" });
    expect(cancel.signal.aborted).toBe(false);
  });
});
