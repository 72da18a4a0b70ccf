import { plainCopy } from "../../shared/plain-copy";
import {
  firstVersion,
  matchesAssistantFilter,
  patchedAssistant,
  searchPage,
  servingVersion,
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
  type NewAssistant,
  type PutAssistantResult,
  type SetLatestResult,
} from "../../shared/assistants";

interface Entry {
  current: AssistantRecord;
  /** Every version by number, oldest first. */
  versions: AssistantVersion[];
}

/**
 * Assistants in process memory, beside the in-memory thread and run stores (checkpointers without a table).
 * Kept per tenant, so no tenant reaches another's. Each method checks and changes an assistant in one
 * synchronous step, and hands out copies, so callers never share its state.
 */
export class InMemoryAssistantStore implements AssistantStore {
  private readonly tenants = new Map<string, Map<string, Entry>>();

  async put(tenantId: string, assistant: NewAssistant): Promise<PutAssistantResult> {
    let entries = this.tenants.get(tenantId);
    const existing = entries?.get(assistant.assistantId);
    if (existing) return { created: false, assistant: plainCopy(existing.current) };
    const current = firstVersion(plainCopy(assistant));
    if (!entries) this.tenants.set(tenantId, (entries = new Map()));
    entries.set(assistant.assistantId, { current, versions: [versionOf(current, assistant.now)] });
    return { created: true, assistant: plainCopy(current) };
  }

  async get(tenantId: string, assistantId: string): Promise<AssistantRecord | undefined> {
    const entry = this.entry(tenantId, assistantId);
    return entry && plainCopy(entry.current);
  }

  async patch(
    tenantId: string,
    assistantId: string,
    changes: AssistantChanges,
    now: number,
  ): Promise<AssistantRecord | undefined> {
    const entry = this.entry(tenantId, assistantId);
    if (!entry) return undefined;
    const newest = entry.versions[entry.versions.length - 1]!.version;
    entry.current = patchedAssistant(entry.current, plainCopy(changes), newest + 1, now);
    entry.versions.push(versionOf(entry.current, now));
    return plainCopy(entry.current);
  }

  async delete(tenantId: string, assistantId: string): Promise<boolean> {
    const entries = this.tenants.get(tenantId);
    if (!entries?.delete(assistantId)) return false;
    if (entries.size === 0) this.tenants.delete(tenantId);
    return true;
  }

  async search(tenantId: string, query: AssistantSearch): Promise<AssistantPage> {
    return plainCopy(searchPage(this.currentOf(tenantId), query));
  }

  async count(tenantId: string, filter: AssistantFilter): Promise<number> {
    let total = 0;
    for (const assistant of this.currentOf(tenantId)) {
      if (matchesAssistantFilter(assistant, filter)) total += 1;
    }
    return total;
  }

  async listVersions(
    tenantId: string,
    assistantId: string,
    query: AssistantVersionQuery,
  ): Promise<AssistantVersion[] | undefined> {
    const entry = this.entry(tenantId, assistantId);
    return entry && plainCopy(versionPage(entry.versions, query));
  }

  async setLatest(
    tenantId: string,
    assistantId: string,
    version: number,
    now: number,
  ): Promise<SetLatestResult> {
    const entry = this.entry(tenantId, assistantId);
    if (!entry) return { status: "missing" };
    const wanted = entry.versions.find((candidate) => candidate.version === version);
    if (!wanted) return { status: "no-version" };
    entry.current = servingVersion(entry.current, plainCopy(wanted), now);
    return { status: "updated", assistant: plainCopy(entry.current) };
  }

  private entry(tenantId: string, assistantId: string): Entry | undefined {
    return this.tenants.get(tenantId)?.get(assistantId);
  }

  private *currentOf(tenantId: string): Iterable<AssistantRecord> {
    for (const entry of this.tenants.get(tenantId)?.values() ?? []) yield entry.current;
  }
}
