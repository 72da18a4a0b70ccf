import { SSE_KEEP_ALIVE_MS } from "../../shared/limits";
import type { HttpResult } from "./http";

/** A comment line every this often keeps proxies and clients from closing a quiet stream. */
export const KEEP_ALIVE_MS = SSE_KEEP_ALIVE_MS;

/**
 * The comment alone, with no blank line after it: a blank line ends an event, and SDK 2.0.0 (the 1.6 client)
 * hands its caller an empty event for one once the stream has given an event id. Frames end with their blank
 * line, so the comment always starts a line of its own, and the next frame's blank line ends only that frame.
 */
const KEEP_ALIVE_COMMENT = ": keep-alive\n";

/** One Server-Sent Event, as LangGraph Server frames it: `event`, `data` (one line of JSON), then `id`. */
export function sseFrame(event: string, data: string, id?: number | string): string {
  return `event: ${event}\ndata: ${data}\n${id === undefined ? "" : `id: ${id}\n`}\n`;
}

/**
 * A Server-Sent Events response: its frames as they come, with keep-alive comments while none does. `gone` is
 * aborted when the transport reports its client went away.
 */
export function sseResponse(
  frames: AsyncIterable<string>,
  headers: Record<string, string> = {},
  gone?: AbortController,
  keepAliveMs = KEEP_ALIVE_MS,
): HttpResult {
  return {
    ...(gone ? { clientGone: () => gone.abort() } : {}),
    statusCode: 200,
    headers: {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      ...headers,
    },
    stream: withKeepAlive(frames, keepAliveMs),
  };
}

/** The frames of `source`, and a `:` comment whenever `intervalMs` pass without one. */
async function* withKeepAlive(
  source: AsyncIterable<string>,
  intervalMs: number,
): AsyncGenerator<string> {
  const iterator = source[Symbol.asyncIterator]();
  let pending: Promise<IteratorResult<string>> | undefined;
  try {
    for (;;) {
      pending ??= iterator.next();
      let timer: NodeJS.Timeout | undefined;
      const tick = new Promise<"tick">((resolve) => {
        timer = setTimeout(() => resolve("tick"), intervalMs);
      });
      const next = await Promise.race([pending, tick]);
      clearTimeout(timer);
      if (next === "tick") {
        yield KEEP_ALIVE_COMMENT;
        continue;
      }
      pending = undefined;
      if (next.done) return;
      yield next.value;
    }
  } finally {
    // The client went away (or the stream ended): the source's own cleanup runs (a cancel on disconnect).
    await iterator.return?.();
  }
}
