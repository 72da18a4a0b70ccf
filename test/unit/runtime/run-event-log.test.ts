import pino from "pino";
import type { RunEvent } from "../../../src/shared/run-events";
import { InMemoryRunEventStore } from "../../../src/runtime/runs/in-memory-run-event-store";
import { RunEventLog } from "../../../src/runtime/runs/run-event-log";

const RUN = { tenantId: "tenant", threadId: "thread", runId: "run" };

/** The in-memory event store, counting reads: a follower of a leg in this process should need none. */
class CountingStore extends InMemoryRunEventStore {
  reads = 0;
  override async read(...args: Parameters<InMemoryRunEventStore["read"]>): Promise<RunEvent[]> {
    this.reads += 1;
    return super.read(...args);
  }
}

async function collect(events: AsyncGenerator<RunEvent>): Promise<number[]> {
  const seqs: number[] = [];
  for await (const event of events) seqs.push(event.seq);
  return seqs;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("RunEventLog.follow", () => {
  it("follows a leg running here from memory alone: no store read while caught up", async () => {
    const store = new CountingStore();
    const log = new RunEventLog(store, pino({ level: "silent" }));
    const writer = log.open(RUN, 0, false);
    let over = false;
    const followed = collect(log.follow(RUN, -1, async () => over, new AbortController().signal));
    for (let index = 0; index < 5; index += 1) {
      writer.emit("values", `{"step":${index}}`);
      await tick();
    }
    const readsWhileRunning = store.reads;
    over = true;
    await writer.close();
    expect(await followed).toEqual([0, 1, 2, 3, 4]);
    expect(readsWhileRunning).toBe(0);
  });

  it("reads an earlier leg's events from the store, then this leg's from memory, without a gap", async () => {
    const store = new CountingStore();
    const earlier = [0, 1, 2].map((seq) => ({
      seq,
      event: "values",
      data: `{"leg":1,"seq":${seq}}`,
    }));
    await store.append(RUN.tenantId, RUN.threadId, RUN.runId, earlier);
    const log = new RunEventLog(store, pino({ level: "silent" }));
    const writer = log.open(RUN, 3, false);
    let over = false;
    const followed = collect(log.follow(RUN, 0, async () => over, new AbortController().signal));
    await tick();
    writer.emit("values", '{"leg":2}');
    writer.emit("values", '{"leg":2}');
    await tick();
    over = true;
    await writer.close();
    expect(await followed).toEqual([1, 2, 3, 4]);
  });

  it("stores the events of a leg streamed only here when it hands over, and only then", async () => {
    const read = (store: InMemoryRunEventStore) =>
      store.read(RUN.tenantId, RUN.threadId, RUN.runId, -1, 100);
    const ended = new CountingStore();
    const endedLog = new RunEventLog(ended, pino({ level: "silent" }));
    const done = endedLog.open(RUN, 0, false);
    done.emit("values", "{}");
    await done.close(false);
    expect(await read(ended)).toEqual([]);

    const handedOver = new CountingStore();
    const log = new RunEventLog(handedOver, pino({ level: "silent" }));
    const leg = log.open(RUN, 0, false);
    leg.emit("metadata", "{}");
    leg.emit("values", "{}");
    await leg.close(true);
    // The next leg (another container) numbers from 2; its followers read 0 and 1 from the store first.
    expect((await read(handedOver)).map((event) => event.seq)).toEqual([0, 1]);
  });
});
