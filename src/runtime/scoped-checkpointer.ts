import { AsyncLocalStorage } from "node:async_hooks";
import { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { MemoryTableError } from "../shared/errors";
import type { AnySaver } from "./types";

/**
 * A checkpointer that forwards every call to the saver of the request in progress. Graphs are compiled once
 * per container with it, while each request still gets its own saver (bound to its tenant).
 */
export class RequestScope {
  private readonly storage = new AsyncLocalStorage<AnySaver>();
  readonly checkpointer: BaseCheckpointSaver;

  constructor() {
    const storage = this.storage;
    // The target only gives the proxy BaseCheckpointSaver's prototype (instanceof checks keep working).
    const target = Object.create(BaseCheckpointSaver.prototype) as BaseCheckpointSaver;
    this.checkpointer = new Proxy(target, {
      get(_target, property) {
        const current = storage.getStore();
        if (!current) {
          throw new MemoryTableError(
            "The handler's checkpointer was used outside a request: call it only while the graph runs",
          );
        }
        const value: unknown = Reflect.get(current, property, current);
        return typeof value === "function" ? value.bind(current) : value;
      },
    });
  }

  /** Runs `work` with `saver` as the target of {@link checkpointer}. */
  run<T>(saver: AnySaver, work: () => Promise<T>): Promise<T> {
    return this.storage.run(saver, work);
  }
}
