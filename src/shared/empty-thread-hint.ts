/**
 * A saver that can be told a thread has no checkpoint yet, so that a run reading the thread's latest checkpoint
 * first (LangGraph does, at every start) sends no read for it. The runtime tells it only for a run whose claim
 * created the thread, while that run holds it: no one else writes to the thread then, so there is nothing to read.
 */
export interface EmptyThreadHint {
  /** `threadId` (as the saver sees it) has no checkpoint: the saver takes note as if it had read the thread. */
  assumeEmptyThread(threadId: string): void;
}

/** True for a saver with {@link EmptyThreadHint}. */
export function supportsEmptyThreadHint(saver: unknown): saver is EmptyThreadHint {
  return (
    typeof saver === "object" &&
    saver !== null &&
    typeof (saver as Partial<EmptyThreadHint>).assumeEmptyThread === "function"
  );
}
