import type { Logger } from "pino";
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph-checkpoint";
import { assertPathIdentifier } from "../../shared/identifiers";
import { InvalidConfigurationError } from "../../shared/errors";
import type { GraphFactory, HandlerGraph } from "../types";
import {
  checkSourceSchemas,
  type SourceGraphSchemas,
  type SourceSchemasByGraph,
} from "./graph-schemas";

/** Most compiled graphs kept per container (one per assistant and tenant); the oldest is dropped beyond it. */
const MAX_CACHED_GRAPHS = 256;

/**
 * The handler's assistants: builds each (assistant, tenant) graph once per container through its factory and
 * reuses it, so compilation is not paid per request.
 */
export class GraphRegistry {
  private readonly cache = new Map<string, Promise<HandlerGraph>>();
  readonly assistantIds: string[];
  /** The source schemas once given (and checked): a promise while they are still being read. */
  private readonly sourceSchemas: Promise<SourceSchemasByGraph>;

  constructor(
    private readonly factories: Readonly<Record<string, GraphFactory>>,
    private readonly checkpointer: BaseCheckpointSaver | undefined,
    private readonly logger: Logger,
    /** The graphs' long-term store (the request scope's); none by default. */
    private readonly store?: BaseStore,
    /**
     * JSON schemas read from the graphs' TypeScript ahead of time, by graph id (see graph-schemas.ts), or a
     * promise of them while they are being read (the dev server reads them in a worker thread as it serves).
     */
    sourceSchemas: SourceSchemasByGraph | Promise<SourceSchemasByGraph> = {},
  ) {
    this.assistantIds = Object.keys(factories);
    if (this.assistantIds.length === 0) {
      throw new InvalidConfigurationError("assistants", "expected at least one graph, got none");
    }
    for (const id of this.assistantIds) {
      assertPathIdentifier("assistant id", id);
      if (typeof factories[id] !== "function") {
        throw new InvalidConfigurationError(
          `assistants.${id}`,
          `expected a GraphFactory function, got ${typeof factories[id]}`,
        );
      }
    }
    this.sourceSchemas = readySourceSchemas(sourceSchemas, logger);
  }

  has(assistantId: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.factories, assistantId);
  }

  /**
   * What was read of a graph's TypeScript source ahead of time, if anything: once it has been read, so a graph's
   * schemas are never answered empty while they are still being read.
   */
  async schemasFromSource(graphId: string): Promise<SourceGraphSchemas | undefined> {
    const schemas = await this.sourceSchemas;
    return Object.hasOwn(schemas, graphId) ? schemas[graphId] : undefined;
  }

  /** The assistant used when a request names none: `agent`, else the only one. */
  get defaultAssistantId(): string | undefined {
    if (this.has("agent")) return "agent";
    return this.assistantIds.length === 1 ? this.assistantIds[0] : undefined;
  }

  get(assistantId: string, tenantId: string): Promise<HandlerGraph> {
    const key = `${assistantId}\u0000${tenantId}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    if (!this.has(assistantId)) {
      // Callers resolve assistants to registered graphs first: reaching here is a bug, not bad input.
      return Promise.reject(
        new RangeError(`No graph is registered as ${JSON.stringify(assistantId)}`),
      );
    }
    const factory = this.factories[assistantId]!;
    const built = Promise.resolve().then(() =>
      factory({
        checkpointer: this.checkpointer,
        store: this.store,
        tenantId,
        assistantId,
        logger: this.logger.child({ tenant: tenantId, assistant: assistantId }),
      }),
    );
    // A failed build is not cached: the next request tries again.
    built.catch(() => this.cache.delete(key));
    this.cache.set(key, built);
    if (this.cache.size > MAX_CACHED_GRAPHS) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    return built;
  }
}

/**
 * Source schemas checked as soon as they are there. Schemas given at once are checked now, so bad ones stop the
 * handler's creation; a promise's are checked when it settles, and a promise that rejects or gives bad schemas
 * is logged and fails the requests that need them (each with that error), never the process.
 */
function readySourceSchemas(
  given: SourceSchemasByGraph | Promise<SourceSchemasByGraph>,
  logger: Logger,
): Promise<SourceSchemasByGraph> {
  if (!isPromiseLike(given)) return Promise.resolve(checkSourceSchemas(given, "graphSchemas"));
  const checked = Promise.resolve(given).then((schemas) =>
    checkSourceSchemas(schemas, "graphSchemas"),
  );
  checked.catch((error: unknown) =>
    logger.error({ err: error }, "graph schemas could not be read: the schemas routes fail"),
  );
  return checked;
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}
