import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph-checkpoint";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { Logger } from "pino";

/**
 * What the handler needs from a compiled graph: the methods every `StateGraph.compile()` result has.
 * Kept structural so any LangGraph version's compiled graph fits.
 */
export interface HandlerGraph {
  // LangGraph's own signatures are deeply generic; the handler only passes JSON in and reads JSON out.
  /* eslint-disable @typescript-eslint/no-explicit-any */
  stream(input: any, options?: any): Promise<AsyncIterable<any>>;
  /** Callback events (LangChain's streamEvents v2), for token and `events` streaming. */
  streamEvents?(input: any, options?: any): AsyncIterable<any>;
  getState(config: RunnableConfig, options?: any): Promise<any>;
  getStateHistory(config: RunnableConfig, options?: any): AsyncIterable<any>;
  /* eslint-enable @typescript-eslint/no-explicit-any */
}

/** What a {@link GraphFactory} receives. */
export interface GraphFactoryContext {
  /**
   * Compile the graph with this checkpointer. It is stable for the container and routes every call to the
   * current request's saver (bound to the caller's tenant), so a compiled graph can be reused across requests.
   * Undefined when the handler runs without a checkpointer (stateless).
   */
  checkpointer: BaseCheckpointSaver | undefined;
  /**
   * Compile the graph with this long-term memory store (`compile({ checkpointer, store })`; nodes read it from
   * `config.store` or `getStore()`). Like the checkpointer it is stable for the container and routes every call
   * to the current request's store, the caller's tenant's, so two tenants never see each other's items. Use it
   * only while the graph runs. Undefined when the handler runs without a store (`store: false`).
   */
  store: BaseStore | undefined;
  /** The caller's tenant (validated). */
  tenantId: string;
  /** The assistant id this factory is registered under. */
  assistantId: string;
  /** Container logger with the tenant and assistant bound; never log state or inputs with it. */
  logger: Logger;
}

/**
 * The one thing an app team writes: build and compile a LangGraph graph with the given checkpointer.
 * Called once per container for each (assistant, tenant) pair and cached; do request-independent work (clients,
 * prompts, tools) at module scope.
 *
 * @example
 * const agent: GraphFactory = ({ checkpointer }) => buildBookingGraph({ checkpointer });
 */
export type GraphFactory = (context: GraphFactoryContext) => HandlerGraph | Promise<HandlerGraph>;

/** Any LangGraph checkpoint saver, whatever its channel version type. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnySaver = BaseCheckpointSaver<any>;

/** A saver, or a function that builds the saver for one request's tenant. */
export type CheckpointerOption = AnySaver | ((tenantId: string) => AnySaver) | false;

/** A function that gives the long-term memory store of one request's tenant, or `false` for none. */
export type StoreOption = ((tenantId: string) => BaseStore) | false;

/** Minimal Lambda context the handler reads (the real one has more). */
export interface HandlerContext {
  awsRequestId?: string;
  getRemainingTimeInMillis?: () => number;
}
