import { Annotation, END, interrupt, START, StateGraph } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";

/**
 * The booking agent: propose a slot, pause for a human to approve the override, then finalize.
 * It is the example assistant `booking` of the handler, the dev server, the tests and the benchmarks.
 */
export const BookingState = Annotation.Root({
  request: Annotation<string>(),
  slot: Annotation<string | null>(),
  approved: Annotation<boolean | null>(),
  booked: Annotation<boolean | null>(),
});

export type BookingStateValues = typeof BookingState.State;

/** What the human is asked at the approval gate. */
export interface BookingApprovalRequest {
  question: string;
  slot: string | null;
}

/** What the human answers (the resume value). */
export interface BookingDecision {
  approve?: boolean;
}

export interface BookingGraphOptions {
  checkpointer?: BaseCheckpointSaver | false;
  /** Called when an approved override is performed: the irreversible side effect the gate protects. */
  onBooked?: (state: BookingStateValues) => void | Promise<void>;
}

export function buildBookingGraph(options: BookingGraphOptions = {}) {
  return new StateGraph(BookingState)
    .addNode("propose_slot", () => ({ slot: "2026-09-10T14:00" }))
    .addNode("human_approval", (state) => {
      // Execution stops here; a later invocation resumes on this line with the human's decision.
      const decision = interrupt<BookingApprovalRequest, BookingDecision | undefined>({
        question: "Override the customer's slot to this time?",
        slot: state.slot,
      });
      return { approved: Boolean(decision?.approve) };
    })
    .addNode("finalize", async (state) => {
      if (!state.approved) return { booked: false };
      await options.onBooked?.(state);
      return { booked: true };
    })
    .addEdge(START, "propose_slot")
    .addEdge("propose_slot", "human_approval")
    .addEdge("human_approval", "finalize")
    .addEdge("finalize", END)
    .compile({ checkpointer: options.checkpointer });
}
