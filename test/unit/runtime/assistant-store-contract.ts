import type {
  AssistantRecord,
  AssistantSearch,
  AssistantStore,
  NewAssistant,
} from "../../../src/shared/assistants";

/**
 * The behaviour every AssistantStore shares (the in-memory one in the unit tier, the table's against DynamoDB
 * Local): versions, latest, search and count, and tenants that never see each other. `open` gives a fresh store.
 */
export function describeAssistantStoreContract(
  name: string,
  open: () => Promise<AssistantStore> | AssistantStore,
): void {
  describe(`${name}: the AssistantStore contract`, () => {
    let store: AssistantStore;
    let serial = 0;
    const tenant = "tenant-a";
    const other = "tenant-b";

    beforeEach(async () => {
      store = await open();
    });

    function newAssistant(overrides: Partial<NewAssistant> = {}): NewAssistant {
      serial += 1;
      return {
        assistantId: `00000000-0000-4000-8000-${String(serial).padStart(12, "0")}`,
        graphId: "booking",
        name: `assistant ${serial}`,
        description: null,
        config: { configurable: { model: "a" } },
        context: { region: "eu" },
        metadata: { team: "ops" },
        now: 1_000 + serial,
        ...overrides,
      };
    }

    const everything = (overrides: Partial<AssistantSearch> = {}): AssistantSearch => ({
      limit: 100,
      offset: 0,
      sortBy: "created_at",
      sortOrder: "desc",
      ...overrides,
    });

    it("creates an assistant at version 1 and reads it back whole", async () => {
      const input = newAssistant({ description: "books slots" });
      const { created, assistant } = await store.put(tenant, input);
      expect(created).toBe(true);
      const expected: AssistantRecord = {
        assistantId: input.assistantId,
        graphId: "booking",
        name: input.name,
        description: "books slots",
        config: { configurable: { model: "a" } },
        context: { region: "eu" },
        metadata: { team: "ops" },
        version: 1,
        createdAt: input.now,
        updatedAt: input.now,
      };
      expect(assistant).toEqual(expected);
      expect(await store.get(tenant, input.assistantId)).toEqual(expected);
      expect(await store.listVersions(tenant, input.assistantId, { limit: 10, offset: 0 })).toEqual(
        [
          {
            assistantId: input.assistantId,
            version: 1,
            graphId: "booking",
            name: input.name,
            description: "books slots",
            config: { configurable: { model: "a" } },
            context: { region: "eu" },
            metadata: { team: "ops" },
            createdAt: input.now,
          },
        ],
      );
    });

    it("leaves a taken id as it was and says so", async () => {
      const first = newAssistant();
      await store.put(tenant, first);
      const again = await store.put(tenant, {
        ...first,
        name: "another",
        metadata: { team: "x" },
        now: 99_999,
      });
      expect(again.created).toBe(false);
      expect(again.assistant).toMatchObject({ name: first.name, metadata: { team: "ops" } });
      expect(await store.get(tenant, first.assistantId)).toMatchObject({ name: first.name });
    });

    it("patches into a new version: given fields replaced, metadata merged, versions newest first", async () => {
      const input = newAssistant();
      await store.put(tenant, input);
      const patched = await store.patch(
        tenant,
        input.assistantId,
        { config: { tags: ["t"] }, metadata: { tier: "gold" }, description: "d2" },
        5_000,
      );
      expect(patched).toMatchObject({
        version: 2,
        config: { tags: ["t"] },
        context: { region: "eu" },
        metadata: { team: "ops", tier: "gold" },
        description: "d2",
        name: input.name,
        createdAt: input.now,
        updatedAt: 5_000,
      });
      // A patch without changes still makes a version.
      expect(await store.patch(tenant, input.assistantId, {}, 6_000)).toMatchObject({ version: 3 });
      const versions = await store.listVersions(tenant, input.assistantId, {
        limit: 10,
        offset: 0,
      });
      expect(versions?.map((version) => [version.version, version.createdAt])).toEqual([
        [3, 6_000],
        [2, 5_000],
        [1, input.now],
      ]);
      expect(versions?.[2]).toMatchObject({ config: { configurable: { model: "a" } } });
      expect(versions?.[1]).toMatchObject({ metadata: { team: "ops", tier: "gold" } });
      expect(await store.get(tenant, input.assistantId)).toMatchObject({
        version: 3,
        updatedAt: 6_000,
        metadata: { team: "ops", tier: "gold" },
      });
    });

    it("serves an older version again; the next patch builds on it with the newest number plus one", async () => {
      const input = newAssistant();
      await store.put(tenant, input);
      await store.patch(tenant, input.assistantId, { name: "second", metadata: { v: 2 } }, 2_000);
      const latest = await store.setLatest(tenant, input.assistantId, 1, 3_000);
      expect(latest).toEqual({
        status: "updated",
        assistant: await store.get(tenant, input.assistantId),
      });
      expect(await store.get(tenant, input.assistantId)).toMatchObject({
        version: 1,
        name: input.name,
        metadata: { team: "ops" },
        updatedAt: 3_000,
      });
      const third = await store.patch(
        tenant,
        input.assistantId,
        { context: { region: "us" } },
        4_000,
      );
      expect(third).toMatchObject({
        version: 3,
        name: input.name,
        metadata: { team: "ops" },
        context: { region: "us" },
      });
      expect(await store.setLatest(tenant, input.assistantId, 2, 5_000)).toMatchObject({
        status: "updated",
        assistant: { version: 2, name: "second", metadata: { team: "ops", v: 2 } },
      });
      expect(await store.setLatest(tenant, input.assistantId, 4, 6_000)).toEqual({
        status: "no-version",
      });
      expect(await store.setLatest(tenant, input.assistantId, 0, 6_000)).toEqual({
        status: "no-version",
      });
      expect(await store.get(tenant, input.assistantId)).toMatchObject({ version: 2 });
    });

    it("answers missing for an assistant that is not there", async () => {
      const id = newAssistant().assistantId;
      expect(await store.get(tenant, id)).toBeUndefined();
      expect(await store.patch(tenant, id, { name: "x" }, 1)).toBeUndefined();
      expect(await store.setLatest(tenant, id, 1, 1)).toEqual({ status: "missing" });
      expect(await store.listVersions(tenant, id, { limit: 10, offset: 0 })).toBeUndefined();
      expect(await store.delete(tenant, id)).toBe(false);
    });

    it("deletes an assistant with its versions; its id can be used again from version 1", async () => {
      const input = newAssistant();
      await store.put(tenant, input);
      await store.patch(tenant, input.assistantId, { name: "two" }, 2_000);
      await store.patch(tenant, input.assistantId, { name: "three" }, 3_000);
      expect(await store.delete(tenant, input.assistantId)).toBe(true);
      expect(await store.get(tenant, input.assistantId)).toBeUndefined();
      expect(
        await store.listVersions(tenant, input.assistantId, { limit: 10, offset: 0 }),
      ).toBeUndefined();
      expect(await store.delete(tenant, input.assistantId)).toBe(false);

      await store.put(tenant, { ...input, name: "reborn", now: 10_000 });
      expect(
        (await store.listVersions(tenant, input.assistantId, { limit: 10, offset: 0 }))?.map(
          (version) => [version.version, version.name],
        ),
      ).toEqual([[1, "reborn"]]);
      expect(await store.patch(tenant, input.assistantId, {}, 11_000)).toMatchObject({
        version: 2,
        name: "reborn",
      });
      expect(await store.setLatest(tenant, input.assistantId, 3, 12_000)).toEqual({
        status: "no-version",
      });
    });

    it("lists versions by metadata, with limit and offset", async () => {
      const input = newAssistant();
      await store.put(tenant, input);
      for (let version = 2; version <= 6; version += 1) {
        await store.patch(
          tenant,
          input.assistantId,
          { metadata: { parity: version % 2 === 0 ? "even" : "odd" } },
          1_000 * version,
        );
      }
      const list = (query: { limit: number; offset: number; metadata?: Record<string, unknown> }) =>
        store
          .listVersions(tenant, input.assistantId, query)
          .then((versions) => versions?.map((version) => version.version));
      expect(await list({ limit: 10, offset: 0 })).toEqual([6, 5, 4, 3, 2, 1]);
      expect(await list({ limit: 2, offset: 1 })).toEqual([5, 4]);
      expect(await list({ limit: 10, offset: 0, metadata: { parity: "even" } })).toEqual([6, 4, 2]);
      expect(await list({ limit: 1, offset: 1, metadata: { parity: "odd" } })).toEqual([3]);
      expect(await list({ limit: 10, offset: 0, metadata: { parity: "none" } })).toEqual([]);
      expect(await list({ limit: 10, offset: 10 })).toEqual([]);
    });

    it("searches by graph, name (any case, any part) and metadata containment, in order, a page at a time", async () => {
      const a = newAssistant({
        graphId: "booking",
        name: "Support Desk",
        metadata: { team: "ops", tags: ["a", "b"], owner: { name: "ann", level: 2 } },
        now: 10,
      });
      const b = newAssistant({
        graphId: "other",
        name: "desk two",
        metadata: { team: "ops" },
        now: 20,
      });
      const c = newAssistant({
        graphId: "booking",
        name: "Billing",
        metadata: { team: "fin" },
        now: 30,
      });
      for (const input of [a, b, c]) await store.put(tenant, input);
      const ids = async (query: Partial<AssistantSearch>) =>
        (await store.search(tenant, everything(query))).assistants.map(
          (assistant) => assistant.assistantId,
        );

      expect(await ids({})).toEqual([c.assistantId, b.assistantId, a.assistantId]);
      expect(await ids({ sortOrder: "asc" })).toEqual([
        a.assistantId,
        b.assistantId,
        c.assistantId,
      ]);
      expect(await ids({ sortBy: "name", sortOrder: "asc" })).toEqual([
        c.assistantId,
        a.assistantId,
        b.assistantId,
      ]);
      expect(await ids({ sortBy: "graph_id", sortOrder: "desc" })).toEqual([
        b.assistantId,
        c.assistantId,
        a.assistantId,
      ]);
      expect(await ids({ sortBy: "assistant_id", sortOrder: "asc" })).toEqual(
        [a, b, c].map((input) => input.assistantId).sort(),
      );
      expect(await ids({ graphId: "booking" })).toEqual([c.assistantId, a.assistantId]);
      expect(await ids({ name: "DESK" })).toEqual([b.assistantId, a.assistantId]);
      expect(await ids({ metadata: { team: "ops" } })).toEqual([b.assistantId, a.assistantId]);
      expect(await ids({ metadata: { owner: { name: "ann" } } })).toEqual([a.assistantId]);
      expect(await ids({ metadata: { tags: ["b"] } })).toEqual([a.assistantId]);
      expect(await ids({ metadata: { tags: ["c"] } })).toEqual([]);
      expect(await ids({ metadata: { team: "ops" }, graphId: "other" })).toEqual([b.assistantId]);

      await store.patch(tenant, a.assistantId, { name: "renamed" }, 40);
      expect(await ids({ sortBy: "updated_at" })).toEqual([
        a.assistantId,
        c.assistantId,
        b.assistantId,
      ]);

      const page = await store.search(tenant, everything({ limit: 2, offset: 1 }));
      expect(page.total).toBe(3);
      expect(page.assistants.map((assistant) => assistant.assistantId)).toEqual([
        b.assistantId,
        a.assistantId,
      ]);
      expect((await store.search(tenant, everything({ offset: 5 }))).assistants).toEqual([]);

      expect(await store.count(tenant, {})).toBe(3);
      expect(await store.count(tenant, { graphId: "booking" })).toBe(2);
      expect(await store.count(tenant, { name: "desk" })).toBe(1);
      expect(await store.count(tenant, { metadata: { team: "ops" } })).toBe(2);
    });

    it("keeps tenants apart: another tenant neither sees nor changes an assistant", async () => {
      const input = newAssistant();
      await store.put(tenant, input);
      expect(await store.get(other, input.assistantId)).toBeUndefined();
      expect(await store.patch(other, input.assistantId, { name: "stolen" }, 2)).toBeUndefined();
      expect(await store.setLatest(other, input.assistantId, 1, 2)).toEqual({ status: "missing" });
      expect(
        await store.listVersions(other, input.assistantId, { limit: 10, offset: 0 }),
      ).toBeUndefined();
      expect(await store.delete(other, input.assistantId)).toBe(false);
      expect(await store.search(other, everything())).toEqual({ assistants: [], total: 0 });
      expect(await store.count(other, {})).toBe(0);

      // The same id in another tenant is another assistant.
      expect((await store.put(other, { ...input, name: "theirs" })).created).toBe(true);
      expect(await store.get(tenant, input.assistantId)).toMatchObject({
        name: input.name,
        version: 1,
      });
      expect(await store.get(other, input.assistantId)).toMatchObject({ name: "theirs" });
    });
  });
}
