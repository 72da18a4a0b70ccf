import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { AssistantStore, NewAssistant } from "../../src/shared/assistants";
import { AssistantItems } from "../../src/table/assistant-items";
import { TableClient } from "../../src/table/client";
import { TableContext } from "../../src/table/context";
import { createLocalClient, createTestTable } from "../support/dynamodb";
import {
  SimulatedCrash,
  faultInjectingClient,
  firstWrites,
  type CrashPoint,
} from "../support/fault-injection";
import { describeAssistantStoreContract } from "../unit/runtime/assistant-store-contract";

let client: DynamoDBClient;
let tableName: string;

beforeAll(async () => {
  client = createLocalClient();
  tableName = await createTestTable(client, "assistants");
});
afterAll(() => client.destroy());

// Every contract test gets a table of its own, so searches see only their own assistants.
describeAssistantStoreContract("AssistantItems on DynamoDB Local", async () => {
  const table = await createTestTable(client, "assistant-contract");
  return new TableContext({ tableName: table, client }).assistants;
});

let serial = 0;
function newAssistant(overrides: Partial<NewAssistant> = {}): NewAssistant {
  serial += 1;
  return {
    assistantId: `10000000-0000-4000-8000-${String(serial).padStart(12, "0")}`,
    graphId: "booking",
    name: `v1 of ${serial}`,
    description: null,
    config: {},
    context: {},
    metadata: { version: 1 },
    now: 1_000,
    ...overrides,
  };
}

function storeOn(dynamodb: DynamoDBClient): { store: AssistantItems; table: TableClient } {
  const table = new TableClient(dynamodb, tableName);
  return { store: new AssistantItems(table), table };
}

/** Version numbers and names of an assistant, newest first (undefined when it does not exist). */
async function versionNames(
  store: AssistantStore,
  tenant: string,
  assistantId: string,
): Promise<Array<[number, string]> | undefined> {
  const versions = await store.listVersions(tenant, assistantId, { limit: 1000, offset: 0 });
  return versions?.map((version) => [version.version, version.name]);
}

describe("AssistantItems: requests", () => {
  it("reads an assistant with one GetItem, creates with two writes and patches with one read and three", async () => {
    const { store, table } = storeOn(client);
    const input = newAssistant();
    const count = async (work: () => Promise<unknown>) => {
      const before = table.usage;
      await work();
      const after = table.usage;
      return Object.fromEntries(
        Object.entries(after.byOperation)
          .map(([operation, usage]) => [
            operation,
            usage.requests - (before.byOperation[operation]?.requests ?? 0),
          ])
          .filter(([, requests]) => requests !== 0),
      );
    };
    expect(await count(() => store.put("tenant-r", input))).toEqual({ UpdateItem: 2 });
    expect(await count(() => store.get("tenant-r", input.assistantId))).toEqual({ GetItem: 1 });
    expect(await count(() => store.patch("tenant-r", input.assistantId, {}, 2_000))).toEqual({
      GetItem: 1,
      UpdateItem: 3,
    });
    expect(await count(() => store.setLatest("tenant-r", input.assistantId, 1, 3_000))).toEqual({
      GetItem: 2,
      UpdateItem: 2,
    });
    // Serving an older version, the newest version's item is known to be written: no repair.
    expect(await count(() => store.patch("tenant-r", input.assistantId, {}, 4_000))).toEqual({
      GetItem: 1,
      UpdateItem: 2,
    });
    expect(
      await count(() =>
        store.search("tenant-r", {
          limit: 10,
          offset: 0,
          sortBy: "created_at",
          sortOrder: "desc",
        }),
      ),
    ).toEqual({ Query: 1 });
    expect(await count(() => store.delete("tenant-r", input.assistantId))).toEqual({
      GetItem: 1,
      BatchWriteItem: 2,
      Query: 1,
    });
  });

  it("applies concurrent patches one after another: every version is kept and every change is in the last", async () => {
    const { store } = storeOn(client);
    const input = newAssistant();
    await store.put("tenant-c", input);
    const writers = 6;
    const results = await Promise.all(
      Array.from({ length: writers }, (_, index) =>
        store.patch(
          "tenant-c",
          input.assistantId,
          { metadata: { [`writer${index}`]: index } },
          2_000 + index,
        ),
      ),
    );
    expect(results.map((result) => result!.version).sort((a, b) => a - b)).toEqual([
      2, 3, 4, 5, 6, 7,
    ]);
    const final = await store.get("tenant-c", input.assistantId);
    expect(final?.version).toBe(7);
    for (let index = 0; index < writers; index += 1) {
      expect(final?.metadata[`writer${index}`]).toBe(index);
    }
    const versions = await store.listVersions("tenant-c", input.assistantId, {
      limit: 100,
      offset: 0,
    });
    expect(versions?.map((version) => version.version)).toEqual([7, 6, 5, 4, 3, 2, 1]);
    // Each version holds exactly the changes made up to it: one more writer's key per version.
    for (const version of versions!) {
      expect(Object.keys(version.metadata).length).toBe(version.version);
    }
  });
});

/*
 * A Lambda container can die between any two requests of a change, or after DynamoDB applied part of a
 * BatchWriteItem. DynamoDB Local cannot kill a writer, so the death is injected with SDK middleware (the
 * stand-in in test/support/fault-injection.ts). For every point of every change, a healthy store (a new
 * container) must then find the assistant as it was before or after the change, every version it lists with the
 * content that version was made with, and further changes working as if nothing had happened.
 */
describe("AssistantItems: a writer dying at any request (stand-in: SDK middleware) loses nothing", () => {
  const tenant = "tenant-crash";
  const healthy = () => storeOn(client).store;

  type Change = (store: AssistantStore, assistant: NewAssistant) => Promise<unknown>;

  /** Sets up an assistant with versions 1 and 2 (serving 2), or `served` after a setLatest. */
  async function prepared(served: 1 | 2): Promise<NewAssistant> {
    const input = newAssistant();
    const store = healthy();
    await store.put(tenant, input);
    await store.patch(tenant, input.assistantId, { name: `v2 of ${input.assistantId}` }, 2_000);
    if (served === 1) await store.setLatest(tenant, input.assistantId, 1, 2_500);
    return input;
  }

  /** How many requests the change sends, run once on a healthy client. */
  async function requestsOf(change: Change, served: 1 | 2, extra: number): Promise<number> {
    const input = await prepared(served);
    const counting = faultInjectingClient();
    try {
      await change(storeOn(counting.client).store, input);
      return counting.requests.length + extra;
    } finally {
      counting.destroy();
    }
  }

  async function crashDuring(
    change: Change,
    served: 1 | 2,
    point: CrashPoint,
  ): Promise<{ input: NewAssistant; crashed: boolean }> {
    const input = await prepared(served);
    const dying = faultInjectingClient();
    dying.crashAt(point);
    try {
      await change(storeOn(dying.client).store, input).catch((error: unknown) => {
        if (!(error instanceof SimulatedCrash)) throw error;
      });
      await dying.quiesce();
      return { input, crashed: dying.crashed };
    } finally {
      dying.destroy();
    }
  }

  const patchTo3: Change = (store, input) =>
    store.patch(tenant, input.assistantId, { name: `v3 of ${input.assistantId}` }, 3_000);

  it.each([
    ["serving the newest version", 2 as const],
    ["serving an older version", 1 as const],
  ])("a patch %s commits whole or not at all", async (_label, served) => {
    const total = await requestsOf(patchTo3, served, 0);
    for (let after = 0; after <= total; after += 1) {
      const { input, crashed } = await crashDuring(patchTo3, served, { after });
      expect({ after, crashed }).toEqual({ after, crashed: after < total });
      const store = healthy();
      const id = input.assistantId;
      const current = await store.get(tenant, id);
      const committed = current?.version === 3;
      expect({ after, version: current?.version }).toEqual({
        after,
        version: committed ? 3 : served,
      });
      const expected: Array<[number, string]> = [
        [2, `v2 of ${id}`],
        [1, input.name],
      ];
      const names = await versionNames(store, tenant, id);
      expect({ after, names }).toEqual({
        after,
        names: committed ? [[3, `v3 of ${id}`], ...expected] : expected,
      });
      // Life goes on: the next patch is the newest number plus one, and the versions a setLatest moves away
      // from stay listed with their content.
      const next = await store.patch(tenant, id, { name: "next" }, 4_000);
      expect(next?.version).toBe(committed ? 4 : 3);
      expect(await store.setLatest(tenant, id, 2, 5_000)).toMatchObject({
        status: "updated",
        assistant: { version: 2, name: `v2 of ${id}` },
      });
      expect((await versionNames(store, tenant, id))?.[0]).toEqual([next!.version, "next"]);
      expect(await versionNames(store, tenant, id)).toHaveLength(next!.version);
    }
  });

  it("a setLatest commits whole or not at all, and the newest version stays listed", async () => {
    const toOne: Change = (store, input) => store.setLatest(tenant, input.assistantId, 1, 3_000);
    const total = await requestsOf(toOne, 2, 0);
    for (let after = 0; after <= total; after += 1) {
      const { input } = await crashDuring(toOne, 2, { after });
      const store = healthy();
      const id = input.assistantId;
      const version = (await store.get(tenant, id))?.version;
      expect([1, 2]).toContain(version);
      expect((await versionNames(store, tenant, id))?.map(([number]) => number)).toEqual([2, 1]);
      expect((await versionNames(store, tenant, id))?.[0]).toEqual([2, `v2 of ${id}`]);
      expect(await store.patch(tenant, id, {}, 4_000)).toMatchObject({ version: 3 });
    }
  });

  it("a create leaves the assistant absent or whole at version 1", async () => {
    const create = (store: AssistantStore, input: NewAssistant) => store.put(tenant, input);
    for (let after = 0; after <= 2; after += 1) {
      const input = newAssistant();
      const dying = faultInjectingClient();
      dying.crashAt({ after });
      await create(storeOn(dying.client).store, input).catch((error: unknown) => {
        if (!(error instanceof SimulatedCrash)) throw error;
      });
      await dying.quiesce();
      dying.destroy();
      const store = healthy();
      if ((await store.get(tenant, input.assistantId)) === undefined) {
        expect(after).toBe(0);
        expect((await store.put(tenant, input)).created).toBe(true);
      }
      expect(await versionNames(store, tenant, input.assistantId)).toEqual([[1, input.name]]);
      expect(await store.patch(tenant, input.assistantId, { name: "two" }, 2_000)).toMatchObject({
        version: 2,
      });
      expect(await store.setLatest(tenant, input.assistantId, 1, 3_000)).toMatchObject({
        assistant: { name: input.name },
      });
    }
  });

  it("a deletion that stopped after the assistant item leaves versions a new assistant of that id never shows", async () => {
    const remove: Change = (store, input) => store.delete(tenant, input.assistantId);
    const total = await requestsOf(remove, 2, 0);
    const points: CrashPoint[] = [];
    for (let after = 0; after <= total; after += 1) points.push({ after });
    // DynamoDB applied one of the version deletions before the writer died.
    points.push({ after: total - 1, processed: firstWrites(1) });
    for (const point of points) {
      const { input } = await crashDuring(remove, 2, point);
      const store = healthy();
      const id = input.assistantId;
      const current = await store.get(tenant, id);
      if (current) {
        expect(await versionNames(store, tenant, id)).toHaveLength(2);
        continue;
      }
      expect(await store.listVersions(tenant, id, { limit: 10, offset: 0 })).toBeUndefined();
      await store.put(tenant, { ...input, name: "reborn", now: 9_000 });
      expect(await versionNames(store, tenant, id)).toEqual([[1, "reborn"]]);
      expect(await store.setLatest(tenant, id, 2, 9_500)).toEqual({ status: "no-version" });
      await store.patch(tenant, id, { name: "reborn two" }, 10_000);
      await store.setLatest(tenant, id, 1, 11_000);
      expect(await versionNames(store, tenant, id)).toEqual([
        [2, "reborn two"],
        [1, "reborn"],
      ]);
    }
  });
});

describe("AssistantItems: input that cannot form a key", () => {
  it("refuses an assistant id with control characters before any request", async () => {
    const { store, table } = storeOn(client);
    const before = table.usage.requests;
    await expect(store.get("tenant-k", "a\u0000b")).rejects.toThrow(/Invalid assistant_id/);
    await expect(store.get("tenant#k", "a")).rejects.toThrow(/Invalid tenant id/);
    expect(table.usage.requests).toBe(before);
  });
});
