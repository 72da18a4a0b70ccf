import {
  containsJson,
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
} from "../shared/assistants";
import { TableRequestError } from "../shared/errors";
import { assertIdentifier, assertTenantId } from "../shared/identifiers";
import type { Item, ItemKey, TableClient } from "./client";
import { ASSISTANT_ITEM_ATTRIBUTES as A, TABLE_KEYS } from "./definition";
import {
  allOf,
  anyOf,
  expression,
  projection,
  renderUpdate,
  sortKeyBeginsWith,
  updateFragment,
  type Expression,
  type UpdateFragment,
} from "./expressions";
import {
  ASSISTANT_PREFIX,
  assistantSortKey,
  assistantsPartitionKey,
  assistantVersionPrefix,
  assistantVersionSortKey,
} from "./keys";

export const ASSISTANT_ITEM_KIND = "a";
export const ASSISTANT_VERSION_ITEM_KIND = "v";

/** Commits a patch or setLatest retries against writers that got there first, this many times at most. */
const MAX_COMMIT_ATTEMPTS = 8;

/** The assistant item as read: the record it serves, and what a commit is conditioned on. */
interface StoredAssistant {
  record: AssistantRecord;
  newestVersion: number;
  versionCreatedAt: number;
}

/**
 * A tenant's assistants, in one partition of their own (`<tenant>##assistants`): one item per assistant holding
 * the version it serves, and one item per version (see ASSISTANT_ITEM_ATTRIBUTES).
 *
 * Without transactions (the module grants none), the assistant item is the only commit point: every change is
 * one UpdateItem on it, conditioned on what the writer read (its newest and served version numbers and its
 * life), so concurrent changes apply one after another and never half. A new version's item is written right
 * after its commit; when a crash prevents that, the assistant item still holds the version's content, and
 * whoever next moves it to another version first writes the missing item, while version lists serve that
 * version from the assistant item. Nothing is lost by a crash between any two requests.
 */
export class AssistantItems implements AssistantStore {
  constructor(private readonly table: TableClient) {}

  async put(tenantId: string, assistant: NewAssistant): Promise<PutAssistantResult> {
    const record = firstVersion(assistant);
    const key = assistantKey(tenantId, assistant.assistantId);
    const outcome = await this.table.update(
      key,
      renderUpdate(
        [
          assign({ [A.kind]: ASSISTANT_ITEM_KIND, [A.assistantId]: record.assistantId }),
          assign(servedAttributes(record, record.createdAt)),
          assign({ [A.newestVersion]: 1, [A.createdAt]: record.createdAt }),
        ],
        expression("attribute_not_exists(#sk)", { "#sk": TABLE_KEYS.sortKey }),
      ),
    );
    if (!outcome.applied) {
      if (!outcome.current) throw lostItem("UpdateItem", assistant.assistantId);
      return { created: false, assistant: toStored(outcome.current).record };
    }
    await this.writeVersion(tenantId, record.createdAt, versionOf(record, record.createdAt));
    return { created: true, assistant: record };
  }

  async get(tenantId: string, assistantId: string): Promise<AssistantRecord | undefined> {
    return (await this.read(tenantId, assistantId))?.record;
  }

  async patch(
    tenantId: string,
    assistantId: string,
    changes: AssistantChanges,
    now: number,
  ): Promise<AssistantRecord | undefined> {
    let stored = await this.read(tenantId, assistantId);
    for (let attempt = 0; attempt < MAX_COMMIT_ATTEMPTS; attempt += 1) {
      if (!stored) return undefined;
      await this.keepNewestVersion(tenantId, stored);
      const next = patchedAssistant(stored.record, changes, stored.newestVersion + 1, now);
      const outcome = await this.commit(tenantId, stored, next, next.version, now);
      if (outcome.committed) {
        await this.writeVersion(tenantId, next.createdAt, versionOf(next, now));
        return next;
      }
      stored = outcome.current;
    }
    throw contended(assistantId);
  }

  async setLatest(
    tenantId: string,
    assistantId: string,
    version: number,
    now: number,
  ): Promise<SetLatestResult> {
    let stored = await this.read(tenantId, assistantId);
    for (let attempt = 0; attempt < MAX_COMMIT_ATTEMPTS; attempt += 1) {
      if (!stored) return { status: "missing" };
      if (!Number.isInteger(version) || version < 1 || version > stored.newestVersion) {
        return { status: "no-version" };
      }
      const wanted = await this.readVersion(tenantId, stored, version);
      if (!wanted) return { status: "no-version" };
      await this.keepNewestVersion(tenantId, stored);
      const next = servingVersion(stored.record, wanted, now);
      const outcome = await this.commit(
        tenantId,
        stored,
        next,
        stored.newestVersion,
        wanted.createdAt,
      );
      if (outcome.committed) return { status: "updated", assistant: next };
      stored = outcome.current;
    }
    throw contended(assistantId);
  }

  async delete(tenantId: string, assistantId: string): Promise<boolean> {
    const key = assistantKey(tenantId, assistantId);
    if (!(await this.table.get(key, [TABLE_KEYS.sortKey]))) return false;
    // The assistant item first: from then on the assistant is gone, whatever happens to its versions.
    await this.table.batchWrite([{ DeleteRequest: { Key: key } }]);
    const pk = assistantsPartitionKey(tenantId);
    const keys: ItemKey[] = [];
    const query = sortKeyBeginsWith(pk, assistantVersionPrefix(assistantId));
    const keysOnly = projection([TABLE_KEYS.partitionKey, TABLE_KEYS.sortKey]);
    for await (const page of this.table.queryPages({
      ...query,
      ...keysOnly,
      ExpressionAttributeNames: {
        ...query.ExpressionAttributeNames,
        ...keysOnly.ExpressionAttributeNames,
      },
    })) {
      for (const item of page) keys.push(itemKey(item));
    }
    if (keys.length > 0)
      await this.table.batchWrite(keys.map((Key) => ({ DeleteRequest: { Key } })));
    return true;
  }

  async search(tenantId: string, query: AssistantSearch): Promise<AssistantPage> {
    return searchPage(await this.readAll(tenantId), query);
  }

  async count(tenantId: string, filter: AssistantFilter): Promise<number> {
    return (await this.readAll(tenantId)).filter((record) => matchesAssistantFilter(record, filter))
      .length;
  }

  async listVersions(
    tenantId: string,
    assistantId: string,
    query: AssistantVersionQuery,
  ): Promise<AssistantVersion[] | undefined> {
    const stored = await this.read(tenantId, assistantId);
    if (!stored) return undefined;
    const pk = assistantsPartitionKey(tenantId);
    // The newest version comes from the assistant item while it serves it (its own item may not exist yet).
    const fromAssistant =
      stored.record.version === stored.newestVersion
        ? versionOf(stored.record, stored.versionCreatedAt)
        : undefined;
    const versions: AssistantVersion[] = fromAssistant ? [fromAssistant] : [];
    const matches = (version: AssistantVersion) =>
      query.metadata === undefined || containsJson(version.metadata, query.metadata);
    const wanted = query.offset + query.limit;
    let matched = versions.filter(matches).length;
    let startKey: Item | undefined;
    do {
      // Newest first (version numbers are padded in the sort key), so the first `wanted` matches are enough.
      const page = await this.table.query({
        ...sortKeyBeginsWith(pk, assistantVersionPrefix(assistantId)),
        ScanIndexForward: false,
        ExclusiveStartKey: startKey,
      });
      for (const item of page.Items ?? []) {
        if (!belongsTo(item, stored) || Number(item[A.version]) === fromAssistant?.version)
          continue;
        const version = toVersion(item);
        versions.push(version);
        if (matches(version)) matched += 1;
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey && matched < wanted);
    return versionPage(versions, query);
  }

  /** The assistant item, read consistently. */
  private async read(tenantId: string, assistantId: string): Promise<StoredAssistant | undefined> {
    const item = await this.table.get(assistantKey(tenantId, assistantId));
    return item && toStored(item);
  }

  private async readAll(tenantId: string): Promise<AssistantRecord[]> {
    const items = await this.table.queryAll(
      sortKeyBeginsWith(assistantsPartitionKey(tenantId), ASSISTANT_PREFIX),
    );
    return items.map((item) => toStored(item).record);
  }

  /** One version of the assistant as read, from the assistant item when it serves the newest. */
  private async readVersion(
    tenantId: string,
    stored: StoredAssistant,
    version: number,
  ): Promise<AssistantVersion | undefined> {
    if (version === stored.newestVersion && stored.record.version === version) {
      return versionOf(stored.record, stored.versionCreatedAt);
    }
    const item = await this.table.get({
      [TABLE_KEYS.partitionKey]: assistantsPartitionKey(tenantId),
      [TABLE_KEYS.sortKey]: assistantVersionSortKey(stored.record.assistantId, version),
    });
    return item && belongsTo(item, stored) ? toVersion(item) : undefined;
  }

  /**
   * Before the assistant item stops serving its newest version, that version's item must exist: written after
   * its commit, it may have been lost to a crash. Writing it again is harmless (a version never changes).
   */
  private async keepNewestVersion(tenantId: string, stored: StoredAssistant): Promise<void> {
    if (stored.record.version !== stored.newestVersion) return;
    await this.writeVersion(
      tenantId,
      stored.record.createdAt,
      versionOf(stored.record, stored.versionCreatedAt),
    );
  }

  /**
   * Writes a version item for the assistant life `life`. It replaces an item of an older life of the same id
   * (a deleted assistant's leftover) but never one of a newer life: a late write of a deleted assistant is
   * refused, and refused is fine.
   */
  private async writeVersion(
    tenantId: string,
    life: number,
    version: AssistantVersion,
  ): Promise<void> {
    await this.table.update(
      {
        [TABLE_KEYS.partitionKey]: assistantsPartitionKey(tenantId),
        [TABLE_KEYS.sortKey]: assistantVersionSortKey(version.assistantId, version.version),
      },
      renderUpdate(
        [
          assign({
            [A.kind]: ASSISTANT_VERSION_ITEM_KIND,
            [A.assistantId]: version.assistantId,
            [A.version]: version.version,
            [A.createdAt]: version.createdAt,
            [A.life]: life,
          }),
          assign(contentAttributes(version)),
        ],
        anyOf(
          expression("attribute_not_exists(#sk)", { "#sk": TABLE_KEYS.sortKey }),
          expression("#life <= :life", { "#life": A.life }, { ":life": life }),
        ),
      ),
    );
  }

  /**
   * Makes `next` the assistant item's content if the item is still as `stored` was read. Refused, it returns
   * the item as it is now (undefined once deleted), for the caller to start over from.
   */
  private async commit(
    tenantId: string,
    stored: StoredAssistant,
    next: AssistantRecord,
    newestVersion: number,
    versionCreatedAt: number,
  ): Promise<{ committed: true } | { committed: false; current: StoredAssistant | undefined }> {
    const outcome = await this.table.update(
      assistantKey(tenantId, stored.record.assistantId),
      renderUpdate(
        [
          assign(servedAttributes(next, versionCreatedAt)),
          assign({ [A.newestVersion]: newestVersion }),
        ],
        unchangedSince(stored),
      ),
    );
    if (outcome.applied) return { committed: true };
    return { committed: false, current: outcome.current && toStored(outcome.current) };
  }
}

/** The assistant item still exists, in the same life, serving the same version with the same newest one. */
function unchangedSince(stored: StoredAssistant): Expression {
  return allOf(
    expression("attribute_exists(#sk)", { "#sk": TABLE_KEYS.sortKey }),
    expression(
      "#mv = :seen_mv AND #ver = :seen_ver AND #ca = :seen_ca",
      { "#mv": A.newestVersion, "#ver": A.version, "#ca": A.createdAt },
      {
        ":seen_mv": stored.newestVersion,
        ":seen_ver": stored.record.version,
        ":seen_ca": stored.record.createdAt,
      },
    ),
  );
}

function assistantKey(tenantId: string, assistantId: string): ItemKey {
  assertTenantId(tenantId);
  assertIdentifier("assistant_id", assistantId);
  return {
    [TABLE_KEYS.partitionKey]: assistantsPartitionKey(tenantId),
    [TABLE_KEYS.sortKey]: assistantSortKey(assistantId),
  };
}

function itemKey(item: Item): ItemKey {
  return {
    [TABLE_KEYS.partitionKey]: String(item[TABLE_KEYS.partitionKey]),
    [TABLE_KEYS.sortKey]: String(item[TABLE_KEYS.sortKey]),
  };
}

/** SET each attribute given a value, REMOVE each given undefined. */
function assign(attributes: Record<string, unknown>): UpdateFragment {
  const set: string[] = [];
  const remove: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  for (const [attribute, value] of Object.entries(attributes)) {
    const name = `#${attribute}`;
    names[name] = attribute;
    if (value === undefined) {
      remove.push(name);
    } else {
      set.push(`${name} = :${attribute}`);
      values[`:${attribute}`] = value;
    }
  }
  return updateFragment({ set, remove, names, values });
}

/** The attributes every item holds of an assistant's content (the description is absent when there is none). */
function contentAttributes(content: AssistantVersion | AssistantRecord): Record<string, unknown> {
  return {
    [A.graphId]: content.graphId,
    [A.name]: content.name,
    [A.description]: content.description ?? undefined,
    [A.config]: JSON.stringify(content.config),
    [A.context]: JSON.stringify(content.context),
    [A.metadata]: JSON.stringify(content.metadata),
  };
}

/** What the assistant item holds of the version it serves. */
function servedAttributes(
  record: AssistantRecord,
  versionCreatedAt: number,
): Record<string, unknown> {
  return {
    ...contentAttributes(record),
    [A.version]: record.version,
    [A.updatedAt]: record.updatedAt,
    [A.versionCreatedAt]: versionCreatedAt,
  };
}

function toStored(item: Item): StoredAssistant {
  return {
    record: {
      assistantId: String(item[A.assistantId]),
      ...contentOf(item),
      version: Number(item[A.version]),
      createdAt: Number(item[A.createdAt]),
      updatedAt: Number(item[A.updatedAt]),
    },
    newestVersion: Number(item[A.newestVersion]),
    versionCreatedAt: Number(item[A.versionCreatedAt]),
  };
}

function toVersion(item: Item): AssistantVersion {
  return {
    assistantId: String(item[A.assistantId]),
    version: Number(item[A.version]),
    ...contentOf(item),
    createdAt: Number(item[A.createdAt]),
  };
}

function contentOf(
  item: Item,
): Pick<AssistantRecord, "graphId" | "name" | "description" | "config" | "context" | "metadata"> {
  return {
    graphId: String(item[A.graphId]),
    name: String(item[A.name]),
    description: item[A.description] === undefined ? null : String(item[A.description]),
    config: JSON.parse(String(item[A.config])) as Record<string, unknown>,
    context: JSON.parse(String(item[A.context])) as Record<string, unknown>,
    metadata: JSON.parse(String(item[A.metadata])) as Record<string, unknown>,
  };
}

/** A version item of the assistant's current life, and not past its newest version (a leftover). */
function belongsTo(item: Item, stored: StoredAssistant): boolean {
  return (
    Number(item[A.life]) === stored.record.createdAt &&
    Number(item[A.version]) <= stored.newestVersion
  );
}

function lostItem(operation: string, assistantId: string): TableRequestError {
  return new TableRequestError(
    operation,
    `assistant ${assistantId} was refused as existing but returned no item`,
  );
}

function contended(assistantId: string): TableRequestError {
  return new TableRequestError(
    "UpdateItem",
    `assistant ${assistantId} kept changing under ${MAX_COMMIT_ATTEMPTS} attempts to change it`,
  );
}
