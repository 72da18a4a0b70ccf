import type { RouteContext } from "./route-context";

/**
 * A thread's current values as a run's result: the state's values, plus `__interrupt__` with the pending
 * interrupts when the thread waits for a human (as LangGraph Server's `runs.wait` and `runs.join` answer).
 */
export async function readThreadValues(
  context: RouteContext,
  threadId: string,
  graphId: string,
): Promise<Record<string, unknown>> {
  const scope = context.engine.tenant(context.tenantId);
  const graph = await context.engine.graph(graphId, context.tenantId);
  const snapshot = await context.engine.withSaver(scope, () =>
    graph.getState({ configurable: { thread_id: scope.saverThreadId(threadId) } }),
  );
  const values = (snapshot?.values ?? {}) as Record<string, unknown>;
  const interrupts = (
    (snapshot?.tasks ?? []) as Array<{ interrupts?: Array<{ id: string; value: unknown }> }>
  )
    .flatMap((task) => task.interrupts ?? [])
    .map(({ id, value }) => ({ id, value }));
  return interrupts.length > 0 ? { ...values, __interrupt__: interrupts } : values;
}
