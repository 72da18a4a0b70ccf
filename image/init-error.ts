/**
 * Marks an error the container's init throws on purpose (bad configuration). The runtime interface client logs
 * it once as `Init Error`, posts it to the Runtime API, then leaves it as an unhandled rejection; bootstrap.mjs
 * exits quietly on a marked one instead of printing the same error a second time as a crash.
 */
const INIT_ERROR = Symbol.for("memory-table.init-error");

/** Runs the cold-start setup; anything it throws is marked as an init error and rethrown. */
export function atColdStart<T>(setup: () => T): T {
  try {
    return setup();
  } catch (error) {
    throw markInitError(error);
  }
}

/** Marks `error` as the container's init error (see above) and returns it. */
export function markInitError(error: unknown): unknown {
  if (typeof error === "object" && error !== null && !(INIT_ERROR in error)) {
    Object.defineProperty(error, INIT_ERROR, { value: true });
  }
  return error;
}

export function isInitError(error: unknown): boolean {
  return typeof error === "object" && error !== null && INIT_ERROR in error;
}
