import { randomUUID } from "node:crypto";
import { isUnknownInterruptError } from "@langchain/langgraph";
import type { CancelAction } from "../../shared/runs";
import type { PendingInterrupt } from "../../shared/threads";
import {
  libraryModes,
  StreamTranslator,
  type StreamEvent,
  type StreamRequest,
} from "./stream-translator";
import type { HandlerGraph } from "../types";

/** How LangGraph is to run a graph for one leg: its input and the options of `graph.stream`. */
export interface GraphLegInput {
  graph: HandlerGraph;
  /** The input, a Command, or null (continue from the last checkpoint). */
  input: unknown;
  /** `configurable` (with the thread id the saver sees), recursion limit, tags, metadata, run id. */
  config: Record<string, unknown>;
  context?: unknown;
  interruptBefore?: string[] | "*";
  interruptAfter?: string[] | "*";
  durability?: "sync" | "async" | "exit";
  /** The leg stops (as `deadline`) this long after it started. */
  budgetMs: number;
  /** Aborted with a CancelAction as its reason when the run is asked to stop. */
  cancel?: AbortSignal;
  /** Runs `work` with the request's saver behind the graph's checkpointer. */
  withSaver: <T>(work: () => Promise<T>) => Promise<T>;
  /** What the client streams, and where its events go as they come. */
  streaming?: { request: StreamRequest; emit: (events: StreamEvent[]) => void };
}

/**
 * Modes the leg reads itself: the state (and LangGraph's marker of a stop at a breakpoint), where it pauses and
 * what still runs. Not `checkpoints`: mapping every step's checkpoint for the stream costs about a fifth of a
 * small graph's own run time, and the leg needs a checkpoint's next nodes only after a breakpoint, which it then
 * reads once.
 */
const LEG_MODES = ["values", "tasks"] as const;

/** How a leg ended. */
export type LegOutcome =
  | {
      kind: "paused";
      values: Record<string, unknown>;
      interrupts: PendingInterrupt[];
      nextNodes: string[];
    }
  | { kind: "completed"; values: Record<string, unknown> }
  | { kind: "failed"; errorName: string; message: string; errorId: string }
  | { kind: "deadline" }
  | { kind: "cancelled"; action: CancelAction };

export interface LegResult {
  outcome: LegOutcome;
  /** Tasks had started without reporting a result when the leg stopped: their node code may still run. */
  nodesRunning: boolean;
  /** The graph never started (it could not be built): nothing of the thread changed. */
  notStarted?: boolean;
}

/**
 * Runs a graph until it ends, pauses, fails, is cancelled or its budget is spent. What the graph streams is
 * read as it comes: `values` for the state, `tasks` for where it pauses and what still runs, `checkpoints` for
 * where it started; with `streaming`, the client's stream events are emitted as they come.
 */
export async function runGraphLeg(input: GraphLegInput): Promise<LegResult> {
  // One plain controller stops the graph, for the deadline or a cancel. Not AbortSignal.any: LangGraph adds an
  // abort listener to the signal it is given and never removes it, and Node keeps a composite signal with a
  // listener alive until it aborts, so each leg's signal (and what LangGraph hung on it) would stay forever.
  const halt = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    halt.abort("deadline");
  }, input.budgetMs);
  const onCancel = () => halt.abort(input.cancel!.reason);
  if (input.cancel?.aborted) onCancel();
  else input.cancel?.addEventListener("abort", onCancel, { once: true });
  const signal = halt.signal;
  const started = new Set<string>();
  let values: Record<string, unknown> = {};
  const interrupts: PendingInterrupt[] = [];
  const nextNodes: string[] = [];
  // The nodes the latest checkpoint runs next, when `checkpoints` is streamed (or read after a breakpoint).
  let pendingNodes: string[] | undefined;
  // LangGraph streamed its marker of a stop at a breakpoint (interrupt_before/after): an empty `__interrupt__`.
  let breakpoint = false;
  const stopped = (): LegOutcome | undefined => {
    if (input.cancel?.aborted)
      return { kind: "cancelled", action: input.cancel.reason as CancelAction };
    return timedOut ? { kind: "deadline" } : undefined;
  };
  const result = (outcome: LegOutcome): LegResult => ({
    outcome,
    nodesRunning: started.size > 0,
  });
  const translator = input.streaming ? new StreamTranslator(input.streaming.request) : undefined;
  const emit = (events: StreamEvent[]) => {
    if (events.length > 0) input.streaming!.emit(events);
  };
  /** One chunk of the root graph's stream: the leg reads its own namespace's, the client gets its modes. */
  const onChunk = (namespace: string[], mode: string, payload: Record<string, unknown>) => {
    if (translator) emit(translator.fromChunk(namespace, mode, payload));
    if (namespace.length > 0) return;
    if (mode === "values") {
      if (!("__interrupt__" in payload)) values = payload;
      else if (Array.isArray(payload.__interrupt__) && payload.__interrupt__.length === 0) {
        breakpoint = true;
      }
    } else if (mode === "checkpoints") {
      pendingNodes = Array.isArray(payload.next) ? (payload.next as string[]) : [];
    } else if (mode === "tasks") {
      // A task's start event carries its input; its end event its result, error or interrupts.
      if ("input" in payload) started.add(String(payload.id));
      else started.delete(String(payload.id));
      if (Array.isArray(payload.interrupts) && payload.interrupts.length > 0) {
        // A task's end event with interrupts: that node is where the thread waits.
        if (!nextNodes.includes(String(payload.name))) nextNodes.push(String(payload.name));
        for (const raised of payload.interrupts as Array<{ id?: string; value?: unknown }>) {
          interrupts.push({
            id: String(raised.id),
            value: raised.value,
            taskId: String(payload.id),
          });
        }
      }
    }
  };
  const subgraphs = input.streaming?.request.subgraphs ?? false;
  // A run started in a subgraph's checkpoint (time travel) has LangGraph stream a breakpoint's marker in that
  // subgraph's namespace, which the root stream does not carry: there the leg reads every step's checkpoint.
  const legModes: readonly string[] = (input.config.configurable as Record<string, unknown>)
    ?.checkpoint_ns
    ? [...LEG_MODES, "checkpoints"]
    : LEG_MODES;
  const { modes, callbackEvents } = input.streaming
    ? libraryModes(input.streaming.request, legModes)
    : { modes: [...legModes], callbackEvents: false };
  const split = (chunk: unknown): [string[], string, Record<string, unknown>] => {
    const parts = chunk as unknown[];
    return subgraphs
      ? [parts[0] as string[], parts[1] as string, parts[2] as Record<string, unknown>]
      : [[], parts[0] as string, parts[1] as Record<string, unknown>];
  };
  try {
    await input.withSaver(async () => {
      const options = {
        ...input.config,
        streamMode: modes,
        ...(subgraphs ? { subgraphs: true } : {}),
        signal,
        ...(input.context !== undefined ? { context: input.context } : {}),
        ...(input.interruptBefore ? { interruptBefore: input.interruptBefore } : {}),
        ...(input.interruptAfter ? { interruptAfter: input.interruptAfter } : {}),
        ...(input.durability ? { durability: input.durability } : {}),
      };
      if (callbackEvents && input.graph.streamEvents) {
        // Tokens and callback events (the `messages` and `events` modes) come through streamEvents; the root
        // graph's own stream chunks arrive there as its `on_chain_stream` events.
        const rootRunId = input.config.runId;
        for await (const event of input.graph.streamEvents(input.input, {
          ...options,
          version: "v2",
        })) {
          if (event?.event === "on_chain_stream" && event.run_id === rootRunId) {
            onChunk(...split(event.data?.chunk));
          } else {
            emit(translator!.fromCallbackEvent(event));
          }
        }
      } else {
        const stream = await input.graph.stream(input.input, options);
        for await (const chunk of stream) onChunk(...split(chunk));
      }
      // Stopped at a breakpoint: where it waits is the latest checkpoint's next nodes (LangGraph has written it
      // when its stream ends). Not the run's own config: a fork's checkpoint_id would name where it started.
      if (breakpoint && interrupts.length === 0 && pendingNodes === undefined && !stopped()) {
        const threadId = (input.config.configurable as Record<string, unknown>).thread_id;
        const state = (await input.graph.getState({ configurable: { thread_id: threadId } })) as {
          next?: string[];
        };
        pendingNodes = state.next ?? [];
      }
    });
  } catch (error) {
    const stop = stopped();
    if (stop) return result(stop);
    if (isUnknownInterruptError(error)) throw error;
    return result({
      kind: "failed",
      errorName: (error as Error)?.name ?? "Error",
      message: (error as Error)?.message ?? String(error),
      errorId: randomUUID(),
    });
  } finally {
    clearTimeout(timer);
    input.cancel?.removeEventListener("abort", onCancel);
  }
  const stop = stopped();
  if (stop) return result(stop);
  if (interrupts.length > 0) return result({ kind: "paused", values, interrupts, nextNodes });
  // interrupt_before/after (the run's or the compiled graph's): waiting with no interrupt to answer.
  if (pendingNodes && pendingNodes.length > 0) {
    return result({ kind: "paused", values, interrupts: [], nextNodes: pendingNodes });
  }
  return result({ kind: "completed", values });
}
