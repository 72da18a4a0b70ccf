import { v5 as uuid5, v7 as uuid7 } from "@langchain/core/utils/uuid";
import {
  assistantContentBytes,
  assistantOrder,
  MAX_ASSISTANT_BYTES,
  patchedAssistant,
  searchPage,
  versionOf,
  versionPage,
  type AssistantChanges,
  type AssistantFilter,
  type AssistantPage,
  type AssistantRecord,
  type AssistantSearch,
  type AssistantStore,
  type AssistantVersion,
  type AssistantVersionQuery,
} from "../../shared/assistants";
import {
  AssistantExistsError,
  AssistantNotFoundError,
  AssistantTooLargeError,
  AssistantVersionNotFoundError,
  CheckpointerRequiredError,
  InvalidRequestError,
  SystemAssistantError,
} from "../../shared/errors";
import { mergePatterns } from "../auth/langgraph-auth";
import { allows, currentAccess } from "../auth/request-access";
import type { AssistantDefaults } from "../config";
import type { GraphRegistry } from "../graphs/graph-registry";
import { describe, describeValue } from "./http";

/**
 * The namespace LangGraph Server derives the id of each graph's own assistant from (UUIDv5 of the graph id), so
 * those ids are the same here as on LangGraph Server.
 */
export const SYSTEM_ASSISTANT_NAMESPACE = "6ba7b821-9dad-11d1-80b4-00c04fd430c8";

/**
 * When system assistants were made: they are built from code, the same in every container, so they carry one
 * fixed time (the epoch) rather than a container's start, and list in the same order wherever a request lands.
 */
export const SYSTEM_ASSISTANT_CREATED_AT = 0;

/** The id of a graph's own assistant: UUIDv5 of the graph id, as LangGraph Server makes it. */
export function systemAssistantId(graphId: string): string {
  return uuid5(graphId, SYSTEM_ASSISTANT_NAMESPACE);
}

/** A create request, validated. */
export interface AssistantCreateInput {
  /** Default: a new UUIDv7. */
  assistantId?: string;
  graphId: string;
  name: string;
  description: string | null;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
  ifExists: "raise" | "do_nothing";
}

export interface AssistantDirectoryOptions {
  /** The graphs registered in code: one system assistant each. */
  registry: Pick<GraphRegistry, "assistantIds" | "has" | "defaultAssistantId">;
  /** The tenants' stored assistants; undefined for a handler without a checkpointer (system assistants only). */
  store: AssistantStore | undefined;
  /** Config and context of system assistants, by graph id (LANGGRAPH_CONFIG); default: none. */
  defaults?: Readonly<Record<string, AssistantDefaults>>;
  /** Clock in epoch milliseconds. */
  now?: () => number;
}

/**
 * Every assistant a tenant can use: one system assistant per registered graph (never stored, the same for every
 * tenant) and the tenant's own, stored ones. Wherever an assistant id is accepted, a graph id is too (it names
 * that graph's system assistant), as on LangGraph Server. Failures are the assistants' errors (errors.ts;
 * routes.ts gives them LangGraph Server's statuses); nothing is written before the input is known to be acceptable.
 */
export class AssistantDirectory {
  private readonly registry: AssistantDirectoryOptions["registry"];
  private readonly store: AssistantStore | undefined;
  private readonly now: () => number;
  /** System assistants by assistant id. */
  private readonly system = new Map<string, AssistantRecord>();
  /** System assistant ids by graph id: a UUIDv5 (a SHA-1) per request otherwise. */
  private readonly systemIds = new Map<string, string>();

  constructor(options: AssistantDirectoryOptions) {
    this.registry = options.registry;
    this.store = options.store;
    this.now = options.now ?? Date.now;
    for (const graphId of this.registry.assistantIds) {
      const assistantId = systemAssistantId(graphId);
      this.systemIds.set(graphId, assistantId);
      const defaults =
        options.defaults && Object.hasOwn(options.defaults, graphId)
          ? options.defaults[graphId]
          : undefined;
      this.system.set(assistantId, {
        assistantId,
        graphId,
        name: graphId,
        description: null,
        // Copies: a system assistant is served to every tenant and must not share objects with the caller.
        config: structuredClone(defaults?.config ?? {}),
        context: structuredClone(defaults?.context ?? {}),
        metadata: { created_by: "system" },
        version: 1,
        createdAt: SYSTEM_ASSISTANT_CREATED_AT,
        updatedAt: SYSTEM_ASSISTANT_CREATED_AT,
      });
    }
  }

  /** The registered graph ids. */
  get graphIds(): readonly string[] {
    return this.registry.assistantIds;
  }

  /** Whether assistants can be created (there is a store). */
  get persistent(): boolean {
    return this.store !== undefined;
  }

  /** True for the id of a graph's own assistant. */
  isSystem(assistantId: string): boolean {
    return this.system.has(assistantId);
  }

  /**
   * The assistant a request names: an assistant id or a graph id (that graph's system assistant); nothing
   * (undefined or null) is the default graph's system assistant. A value that is not a string, or nothing when
   * there is no default graph, is an InvalidRequestError; an unknown id an AssistantNotFoundError.
   */
  async resolve(tenantId: string, value: unknown): Promise<AssistantRecord> {
    if (value === undefined || value === null) {
      const fallback = this.registry.defaultAssistantId;
      if (fallback === undefined) {
        throw new InvalidRequestError(
          "assistant_id",
          `expected an assistant id or one of the graphs ${this.graphIds.join(", ")}, got nothing`,
        );
      }
      return this.require(tenantId, fallback);
    }
    if (typeof value !== "string") {
      throw new InvalidRequestError("assistant_id", `expected a string, got ${describe(value)}`);
    }
    // The assistant a run names is not filtered by `assistants:read`, as on LangGraph Server: the run's thread
    // is what `threads:create_run` decides on.
    return this.require(tenantId, value);
  }

  /** An assistant by id or graph id; 404 when the tenant has none, or the user may not read it. */
  async get(tenantId: string, idOrGraphId: string): Promise<AssistantRecord> {
    const found = await this.require(tenantId, idOrGraphId);
    const access = currentAccess();
    if (access) {
      const decision = await access.decide("assistants:read", { assistant_id: found.assistantId });
      if (!allows(decision, found.metadata)) throw new AssistantNotFoundError(idOrGraphId);
    }
    return found;
  }

  private async require(tenantId: string, idOrGraphId: string): Promise<AssistantRecord> {
    const found = await this.find(tenantId, idOrGraphId);
    if (!found) throw new AssistantNotFoundError(idOrGraphId);
    return found;
  }

  /** Creates an assistant at version 1 (`if_exists`: 409 or the existing one when its id is taken). */
  async create(tenantId: string, input: AssistantCreateInput): Promise<AssistantRecord> {
    this.assertGraph(input.graphId);
    const assistantId = input.assistantId ?? uuid7();
    const access = currentAccess();
    const decision = await access?.decide("assistants:create", {
      assistant_id: assistantId,
      graph_id: input.graphId,
      name: input.name,
      description: input.description,
      config: input.config,
      context: input.context,
      metadata: input.metadata,
      if_exists: input.ifExists,
    });
    // A handler's stamp (the owner) is checked against the size bound too.
    const metadata = decision?.value.metadata ?? input.metadata;
    assertFits({ ...input, metadata });
    const system = this.system.get(assistantId);
    if (system) {
      if (input.ifExists === "raise" || (decision && !allows(decision, system.metadata))) {
        throw new AssistantExistsError(assistantId);
      }
      return system;
    }
    if (!this.store) throw new CheckpointerRequiredError("Creating an assistant");
    const result = await this.store.put(tenantId, {
      assistantId,
      graphId: input.graphId,
      name: input.name,
      description: input.description,
      config: input.config,
      context: input.context,
      metadata,
      now: this.now(),
    });
    const hidden = decision !== undefined && !allows(decision, result.assistant.metadata);
    if (!result.created && (input.ifExists === "raise" || hidden)) {
      throw new AssistantExistsError(assistantId);
    }
    return result.assistant;
  }

  /** A new version with `changes` (metadata merged), served from now on. System assistants answer 409. */
  async patch(
    tenantId: string,
    idOrGraphId: string,
    changes: AssistantChanges,
  ): Promise<AssistantRecord> {
    if (changes.graphId !== undefined) this.assertGraph(changes.graphId);
    const current = await this.stored(tenantId, idOrGraphId, "patched");
    const access = currentAccess();
    if (access) {
      const decision = await access.decide("assistants:update", {
        assistant_id: current.assistantId,
        ...(changes.metadata !== undefined ? { metadata: changes.metadata } : {}),
        ...(changes.graphId !== undefined ? { graph_id: changes.graphId } : {}),
      });
      if (!allows(decision, current.metadata)) throw new AssistantNotFoundError(idOrGraphId);
      const stamped = decision.value.metadata;
      if (stamped !== undefined) changes = { ...changes, metadata: stamped };
    }
    const now = this.now();
    // Checked on the version read; a concurrent patch may add to it, never past DynamoDB's item size.
    assertFits(patchedAssistant(current, changes, current.version + 1, now));
    const patched = await this.store!.patch(tenantId, current.assistantId, changes, now);
    if (!patched) throw new AssistantNotFoundError(idOrGraphId);
    return patched;
  }

  /** Deletes a stored assistant with its versions and returns its id. System assistants answer 409. */
  async delete(tenantId: string, idOrGraphId: string): Promise<string> {
    const current = await this.stored(tenantId, idOrGraphId, "deleted");
    await this.check("assistants:delete", current, idOrGraphId);
    if (!(await this.store!.delete(tenantId, current.assistantId)))
      throw new AssistantNotFoundError(idOrGraphId);
    return current.assistantId;
  }

  /** System and stored assistants together, filtered, ordered and paged as one list. */
  async search(tenantId: string, query: AssistantSearch): Promise<AssistantPage> {
    const filtered = await this.searchable(query);
    if (!filtered) return { assistants: [], total: 0 };
    query = filtered;
    // Each source gives its first offset + limit matches in the requested order; the page is among them.
    const window = { ...query, offset: 0, limit: query.offset + query.limit };
    const system = searchPage(this.system.values(), window);
    const stored = this.store
      ? await this.store.search(tenantId, window)
      : { assistants: [], total: 0 };
    const merged = [...system.assistants, ...stored.assistants].sort(
      assistantOrder(query.sortBy, query.sortOrder),
    );
    return {
      assistants: merged.slice(query.offset, query.offset + query.limit),
      total: system.total + stored.total,
    };
  }

  async count(tenantId: string, filter: AssistantFilter): Promise<number> {
    const filtered = await this.searchable(filter);
    if (!filtered) return 0;
    filter = filtered;
    const system = searchPage(this.system.values(), {
      ...filter,
      limit: 0,
      offset: 0,
      sortBy: "created_at",
      sortOrder: "desc",
    }).total;
    return system + (this.store ? await this.store.count(tenantId, filter) : 0);
  }

  /**
   * Versions, newest first. As on LangGraph Server, an empty answer (no such assistant, or no version matching
   * the metadata filter) is a 404.
   */
  async listVersions(
    tenantId: string,
    idOrGraphId: string,
    query: AssistantVersionQuery,
  ): Promise<AssistantVersion[]> {
    const assistantId = this.canonicalId(idOrGraphId);
    const system = this.system.get(assistantId);
    if (currentAccess())
      await this.check("assistants:read", await this.get(tenantId, idOrGraphId), idOrGraphId);
    const versions = system
      ? versionPage([versionOf(system, system.createdAt)], query)
      : this.store && isAssistantUuid(assistantId)
        ? await this.store.listVersions(tenantId, assistantId, query)
        : undefined;
    if (!versions || versions.length === 0) throw new AssistantNotFoundError(idOrGraphId);
    return versions;
  }

  /** Serves an existing version again. A system assistant has version 1 only. */
  async setLatest(
    tenantId: string,
    idOrGraphId: string,
    version: number,
  ): Promise<AssistantRecord> {
    const assistantId = this.canonicalId(idOrGraphId);
    const system = this.system.get(assistantId);
    if (currentAccess()) {
      await this.check("assistants:update", await this.require(tenantId, idOrGraphId), idOrGraphId);
    }
    if (system) {
      if (version !== system.version) throw new AssistantVersionNotFoundError(assistantId, version);
      return system;
    }
    if (!this.store || !isAssistantUuid(assistantId)) throw new AssistantNotFoundError(idOrGraphId);
    const result = await this.store.setLatest(tenantId, assistantId, version, this.now());
    if (result.status === "missing") throw new AssistantNotFoundError(idOrGraphId);
    if (result.status === "no-version")
      throw new AssistantVersionNotFoundError(assistantId, version);
    return result.assistant;
  }

  /** 404 unless the request's auth handler of `event` lets the user reach `assistant`. */
  private async check(
    event: "assistants:read" | "assistants:update" | "assistants:delete",
    assistant: AssistantRecord,
    idOrGraphId: string,
  ): Promise<void> {
    const access = currentAccess();
    if (!access) return;
    const decision = await access.decide(event, { assistant_id: assistant.assistantId });
    if (!allows(decision, assistant.metadata)) throw new AssistantNotFoundError(idOrGraphId);
  }

  /**
   * The search with the request's `assistants:search` filters added to its metadata filter, so each source
   * applies them in its own query (no page is filtered after it was cut); undefined when nothing can match.
   */
  private async searchable<Q extends AssistantFilter>(query: Q): Promise<Q | undefined> {
    const access = currentAccess();
    if (!access) return query;
    const decision = await access.decide("assistants:search", {
      ...(query.graphId !== undefined ? { graph_id: query.graphId } : {}),
      ...(query.metadata !== undefined ? { metadata: query.metadata } : {}),
    });
    if (!decision.pattern) return query;
    const metadata = mergePatterns(query.metadata, decision.pattern);
    return metadata ? { ...query, metadata } : undefined;
  }

  /** A graph id is its system assistant's id; anything else is an assistant id. */
  private canonicalId(idOrGraphId: string): string {
    const systemId = this.systemIds.get(idOrGraphId);
    if (systemId) return systemId;
    return this.registry.has(idOrGraphId) ? systemAssistantId(idOrGraphId) : idOrGraphId;
  }

  private async find(tenantId: string, idOrGraphId: string): Promise<AssistantRecord | undefined> {
    const assistantId = this.canonicalId(idOrGraphId);
    const system = this.system.get(assistantId);
    if (system) return system;
    if (!this.store || !isAssistantUuid(assistantId)) return undefined;
    return this.store.get(tenantId, assistantId);
  }

  /** A stored assistant about to be changed: 409 for a system assistant, 404 when missing. */
  private async stored(
    tenantId: string,
    idOrGraphId: string,
    change: "patched" | "deleted",
  ): Promise<AssistantRecord> {
    const assistantId = this.canonicalId(idOrGraphId);
    const system = this.system.get(assistantId);
    if (system) {
      throw new SystemAssistantError(assistantId, system.graphId, change);
    }
    const found = await this.find(tenantId, assistantId);
    if (!found) throw new AssistantNotFoundError(idOrGraphId);
    return found;
  }

  private assertGraph(graphId: string): void {
    if (!this.registry.has(graphId)) {
      throw new InvalidRequestError(
        "graph_id",
        `expected one of ${this.graphIds.join(", ")}, got ${describeValue(graphId)}`,
      );
    }
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Whether `value` is a UUID (any version): the only form of id an assistant is created with (as on LangGraph
 * Server), so any other id is known to be missing without a read, and never reaches a key.
 */
export function isAssistantUuid(value: string): boolean {
  return UUID.test(value);
}

function assertFits(
  content: Pick<
    AssistantRecord,
    "graphId" | "name" | "description" | "config" | "context" | "metadata"
  >,
): void {
  const bytes = assistantContentBytes(content);
  if (bytes > MAX_ASSISTANT_BYTES) {
    throw new AssistantTooLargeError(MAX_ASSISTANT_BYTES, bytes);
  }
}
