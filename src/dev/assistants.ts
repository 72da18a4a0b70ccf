import { buildBookingGraph } from "../examples/booking";
import type { GraphFactory } from "../runtime/types";

/** The dev server's assistants: the booking example. */
export const DEV_ASSISTANTS: Record<string, GraphFactory> = {
  booking: ({ checkpointer }) => buildBookingGraph({ checkpointer }),
};
