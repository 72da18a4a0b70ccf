import { Command } from "@langchain/langgraph";
import { BoundedInMemorySaver } from "../../../../src/checkpoint/memory";
import { buildBookingGraph, type BookingStateValues } from "../../../../src/examples/booking";

describe("the booking graph on BoundedInMemorySaver", () => {
  it("pauses at the approval gate and resumes to book exactly once", async () => {
    const saver = new BoundedInMemorySaver();
    const booked: BookingStateValues[] = [];
    const graph = buildBookingGraph({
      checkpointer: saver,
      onBooked: (state) => void booked.push(state),
    });
    const config = { configurable: { thread_id: "booking-1" } };

    // invoke() does not throw on interrupt(): the pending interrupts come back next to the state.
    const paused = (await graph.invoke(
      { request: "move my appointment" },
      config,
    )) as BookingStateValues & {
      __interrupt__?: Array<{ id?: string; value?: unknown }>;
    };
    expect(paused.__interrupt__).toHaveLength(1);
    expect(paused.__interrupt__?.[0]?.value).toEqual({
      question: "Override the customer's slot to this time?",
      slot: "2026-09-10T14:00",
    });
    expect(booked).toHaveLength(0);
    const waiting = await graph.getState(config);
    expect(waiting.next).toEqual(["human_approval"]);

    // A second graph instance on the same saver stands in for a later invocation.
    const resumedGraph = buildBookingGraph({
      checkpointer: saver,
      onBooked: (state) => void booked.push(state),
    });
    const finished = await resumedGraph.invoke(new Command({ resume: { approve: true } }), config);
    expect(finished).toMatchObject({ slot: "2026-09-10T14:00", approved: true, booked: true });
    expect(booked).toHaveLength(1);
    expect((await resumedGraph.getState(config)).next).toEqual([]);

    const stats = saver.stats();
    expect(stats.threads).toBe(1);
    expect(stats.checkpoints).toBeGreaterThanOrEqual(4);
    expect(Object.values(stats.rejections).every((count) => count === 0)).toBe(true);
  });

  it("records a declined override without booking", async () => {
    const saver = new BoundedInMemorySaver();
    let bookings = 0;
    const graph = buildBookingGraph({ checkpointer: saver, onBooked: () => void (bookings += 1) });
    const config = { configurable: { thread_id: "booking-2" } };
    await graph.invoke({ request: "move my appointment" }, config);
    const finished = await graph.invoke(new Command({ resume: { approve: false } }), config);
    expect(finished).toMatchObject({ approved: false, booked: false });
    expect(bookings).toBe(0);
  });
});
