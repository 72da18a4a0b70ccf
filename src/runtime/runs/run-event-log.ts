import { EventEmitter } from "node:events";
import type { Logger } from "pino";
import {
  MAX_STORED_EVENT_BYTES_PER_RUN,
  type RunEvent,
  type RunEventStore,
} from "../../shared/run-events";

/** Where a run's events go: its tenant, thread and id. */
export interface RunAddress {
  tenantId: string;
  threadId: string;
  runId: string;
}

/** A batch of events is written after this long, or once it holds this many. */
const FLUSH_AFTER_MS = 100;
const FLUSH_AT_EVENTS = 25;

/**
 * A run's stream events: published in this process to whoever follows the run here, and stored (in batches,
 * up to a per-run size) when a client may follow it from elsewhere (a leg in the worker function, a resumable
 * stream). Followers read what this process published while the run's leg is here, else the store.
 */
export class RunEventLog {
  private readonly live = new Map<string, LiveRun>();

  constructor(
    private readonly store: RunEventStore,
    private readonly logger: Logger,
  ) {}

  /** A leg's writer: numbers events from `nextSeq`; `persist` stores them for followers elsewhere. */
  open(run: RunAddress, nextSeq: number, persist: boolean): RunEventWriter {
    const live = this.liveRun(run.runId);
    live.legRunning = true;
    live.legStartSeq = nextSeq;
    return new RunEventWriter(run, nextSeq, this.store, persist, live, this.logger, () => {
      live.legRunning = false;
      live.changes += 1;
      live.emitter.emit("change");
      // Late local followers still find the tail for a moment; then the store (or the run) answers.
      setTimeout(() => {
        if (!live.legRunning) this.live.delete(run.runId);
      }, 60_000).unref?.();
    });
  }

  /** Drops a deleted thread's stored events. */
  forgetThread(tenantId: string, threadId: string): Promise<void> {
    return this.store.forgetThread(tenantId, threadId);
  }

  /**
   * Events after `afterSeq`, as they come: from this process while the run's leg runs here, else from the store.
   * Ends when `isOver` says the run ended (and everything before its end was read) or `signal` aborts.
   */
  async *follow(
    run: RunAddress,
    afterSeq: number,
    isOver: () => Promise<boolean>,
    signal: AbortSignal,
  ): AsyncGenerator<RunEvent> {
    let last = afterSeq;
    let delay = 50;
    while (!signal.aborted) {
      const live = this.live.get(run.runId);
      const seen = live?.changes ?? 0;
      const local = live?.events.filter((event) => event.seq > last) ?? [];
      // Caught up with a leg running here: that leg is the run's only writer, so the store holds nothing newer
      // and a read would only delay the next event.
      const caughtUpHere =
        live?.legRunning === true && local.length === 0 && last >= live.legStartSeq - 1;
      const events =
        local.length > 0 && local[0]!.seq === last + 1
          ? local
          : caughtUpHere
            ? []
            : await this.store.read(run.tenantId, run.threadId, run.runId, last, 500);
      for (const event of events) {
        yield event;
        last = event.seq;
      }
      if (events.length > 0) {
        delay = 50;
        continue;
      }
      if (!live?.legRunning && (await isOver())) {
        // One more read: the last events may have been stored just before the run ended.
        const tail = await this.store.read(run.tenantId, run.threadId, run.runId, last, 500);
        const liveTail = this.live.get(run.runId)?.events.filter((event) => event.seq > last) ?? [];
        for (const event of tail.length > 0 ? tail : liveTail) yield event;
        return;
      }
      // An event published during the awaits above found no listener: look again rather than wait for the next.
      if ((this.live.get(run.runId)?.changes ?? 0) !== seen) continue;
      await this.changed(run.runId, live?.legRunning ? 1_000 : delay, signal);
      delay = Math.min(delay * 2, 1_000);
    }
  }

  /** Waits `ms`, or less when the run's leg here publishes; a run with no leg here gets no entry for it. */
  private changed(runId: string, ms: number, signal: AbortSignal): Promise<void> {
    const emitter = this.live.get(runId)?.emitter;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        emitter?.off("change", done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      emitter?.once("change", done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  private liveRun(runId: string): LiveRun {
    let live = this.live.get(runId);
    if (!live) {
      const emitter = new EventEmitter();
      emitter.setMaxListeners(0);
      live = { events: [], legRunning: false, legStartSeq: 0, changes: 0, emitter };
      this.live.set(runId, live);
    }
    return live;
  }
}

interface LiveRun {
  /** What this process published of the run (its legs here). */
  events: RunEvent[];
  legRunning: boolean;
  /** The first sequence number of the leg running here (earlier events came from earlier legs). */
  legStartSeq: number;
  /** Counts publications and leg ends, so a follower can tell whether it missed one while it awaited. */
  changes: number;
  emitter: EventEmitter;
}

/** Numbers, publishes and (optionally) stores one leg's events. */
export class RunEventWriter {
  private buffer: RunEvent[] = [];
  /** A leg that does not persist keeps its events here, stored only if the run goes on elsewhere. */
  private unstored: RunEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private storedBytes = 0;
  private full = false;

  constructor(
    private readonly run: RunAddress,
    private seq: number,
    private readonly store: RunEventStore,
    private readonly persist: boolean,
    private readonly live: LiveRun,
    private readonly logger: Logger,
    private readonly onClose: () => void,
  ) {}

  /** How many events the run has emitted so far, this leg's included (the next leg numbers from here). */
  get nextSeq(): number {
    return this.seq;
  }

  emit(event: string, data: string): void {
    const entry: RunEvent = { seq: this.seq++, event, data };
    this.live.events.push(entry);
    this.live.changes += 1;
    this.live.emitter.emit("change");
    if (!this.persist) {
      this.unstored.push(entry);
      return;
    }
    this.queue(entry);
  }

  private queue(entry: RunEvent): void {
    if (this.full) return;
    this.storedBytes += Buffer.byteLength(entry.data) + entry.event.length;
    if (this.storedBytes > MAX_STORED_EVENT_BYTES_PER_RUN) {
      this.full = true;
      this.logger.warn(
        { run: this.run.runId },
        "run events over the stored size: later events are live only",
      );
      return;
    }
    this.buffer.push(entry);
    if (this.buffer.length >= FLUSH_AT_EVENTS) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), FLUSH_AFTER_MS);
  }

  /**
   * Stores what is buffered and ends the leg's publishing; resolves once every event is stored. `handingOver`:
   * the run goes on in another leg, maybe in another container, whose followers read the events before its own
   * from the store; a leg that streamed only to its own request stores them now, or they would be a gap there.
   */
  async close(handingOver = false): Promise<void> {
    if (handingOver) for (const entry of this.unstored.splice(0)) this.queue(entry);
    this.flush();
    try {
      await this.writing;
    } finally {
      this.onClose();
    }
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.buffer.length === 0) return;
    const batch = this.buffer;
    this.buffer = [];
    const { tenantId, threadId, runId } = this.run;
    // One write at a time, in order: followers elsewhere read the stored events without gaps.
    this.writing = this.writing
      .then(() => this.store.append(tenantId, threadId, runId, batch))
      .catch((error: unknown) => {
        // Readers stop at a gap: store nothing more of this leg, so the gap is at its end, not before events.
        this.full = true;
        this.logger.warn(
          { run: runId, err: { name: (error as Error)?.name } },
          "run events not stored: followers elsewhere miss them",
        );
      });
  }
}
