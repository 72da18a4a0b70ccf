import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import {
  Annotation,
  END,
  MessagesAnnotation,
  START,
  StateGraph,
  type LangGraphRunnableConfig,
} from "@langchain/langgraph";
import type { GraphFactory } from "../../src/runtime/types";

/**
 * Small graphs the API tests run through the official SDK: a chat agent (messages in and out), a slow graph
 * (background runs, multitask strategies, long runs) and a loop (recursion limits).
 */

/** `agent` answers each human message with `echo: <content>` (and the configurable `suffix`, if any). */
export const chatGraph: GraphFactory = ({ checkpointer }) =>
  new StateGraph(MessagesAnnotation)
    .addNode("agent", (state, config: LangGraphRunnableConfig) => {
      const last = state.messages.at(-1) as BaseMessage | undefined;
      const suffix = (config.configurable?.suffix as string | undefined) ?? "";
      return { messages: [new AIMessage({ content: `echo: ${String(last?.content)}${suffix}` })] };
    })
    .addEdge(START, "agent")
    .addEdge("agent", END)
    .compile({ checkpointer });

const SlowState = Annotation.Root({
  steps: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
  delayMs: Annotation<number>(),
});

/** Records each step it takes; `work` sleeps `delayMs` (honouring the abort signal) `rounds` times. */
export function slowGraph(
  counts: { started: number; finished: number } = { started: 0, finished: 0 },
  rounds = 1,
): GraphFactory {
  return ({ checkpointer }) => {
    const graph = new StateGraph(SlowState)
      .addNode("prepare", () => ({ steps: ["prepare"] }))
      .addEdge(START, "prepare");
    let previous = "prepare";
    for (let round = 1; round <= rounds; round++) {
      const name = `work_${round}`;
      graph.addNode(name, async (state, config: LangGraphRunnableConfig) => {
        counts.started += 1;
        await sleep(state.delayMs ?? 0, config.signal);
        counts.finished += 1;
        return { steps: [name] };
      });
      graph.addEdge(previous as never, name as never);
      previous = name;
    }
    graph.addEdge(previous as never, END);
    return graph.compile({ checkpointer });
  };
}

const LoopState = Annotation.Root({
  laps: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
});

/** Loops forever: only the recursion limit stops it. */
export const loopGraph: GraphFactory = ({ checkpointer }) =>
  new StateGraph(LoopState)
    .addNode("lap", () => ({ laps: 1 }))
    .addEdge(START, "lap")
    .addConditionalEdges("lap", () => "lap")
    .compile({ checkpointer });

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error("aborted"));
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(new Error("aborted"));
    });
  });
}

/** `agent` answers with a chat model that streams its reply token by token (`reply`, or "hello there"). */
export function streamingChatGraph(reply = "hello there"): GraphFactory {
  return ({ checkpointer }) => {
    const model = new FakeListChatModel({ responses: [reply] });
    return new StateGraph(MessagesAnnotation)
      .addNode("agent", async (state, config: LangGraphRunnableConfig) => {
        config.writer?.({ progress: "thinking" });
        return { messages: [await model.invoke(state.messages, config)] };
      })
      .addEdge(START, "agent")
      .addEdge("agent", END)
      .compile({ checkpointer });
  };
}

/** `outer` runs `inner`, a compiled subgraph of two steps: its events carry the `inner:<task id>` namespace. */
export const nestedGraph: GraphFactory = ({ checkpointer }) => {
  const inner = new StateGraph(SlowState)
    .addNode("first", () => ({ steps: ["first"] }))
    .addNode("second", () => ({ steps: ["second"] }))
    .addEdge(START, "first")
    .addEdge("first", "second")
    .addEdge("second", END)
    .compile();
  return new StateGraph(SlowState)
    .addNode("inner", inner)
    .addNode("after", () => ({ steps: ["after"] }))
    .addEdge(START, "inner")
    .addEdge("inner", "after")
    .addEdge("after", END)
    .compile({ checkpointer });
};

const HeldState = Annotation.Root({
  steps: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
  label: Annotation<string>(),
});

/** A latch a test holds a run's `held` node on: it says when the node entered, and lets it go on release. */
export interface Latch {
  entered: Promise<void>;
  release(): void;
}

/**
 * Latches by run label: `hold(label)` makes the `held` node of a run whose input `label` is that one wait (until
 * `release()` or the run's abort signal), so a test decides when a run is mid-way, not a timer.
 */
export class Latches {
  private readonly latches = new Map<
    string,
    { entered: Promise<void>; enter(): void; released: Promise<void>; release(): void }
  >();

  hold(label: string): Latch {
    let enter: () => void = () => undefined;
    let release: () => void = () => undefined;
    const entered = new Promise<void>((resolve) => (enter = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    this.latches.set(label, { entered, enter, released, release });
    return { entered, release };
  }

  /** Where a `held` node waits: at once when its label is not held. */
  async pass(label: string, signal?: AbortSignal): Promise<void> {
    const latch = this.latches.get(label);
    if (!latch) return;
    latch.enter();
    await new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(new Error("aborted"));
      signal?.addEventListener("abort", () => reject(new Error("aborted")));
      void latch.released.then(resolve);
    });
  }

  releaseAll(): void {
    for (const latch of this.latches.values()) latch.release();
  }
}

/** `first` then `held` (which waits on the latch of the run's `label`); each appends `<node>:<label>` to `steps`. */
export function heldGraph(latches: Latches): GraphFactory {
  return ({ checkpointer }) =>
    new StateGraph(HeldState)
      .addNode("first", (state) => ({ steps: [`first:${state.label}`] }))
      .addNode("held", async (state, config: LangGraphRunnableConfig) => {
        await latches.pass(state.label, config.signal);
        return { steps: [`held:${state.label}`] };
      })
      .addEdge(START, "first")
      .addEdge("first", "held")
      .addEdge("held", END)
      .compile({ checkpointer });
}
