import { InMemoryAssistantStore } from "../../../src/runtime/graphs/in-memory-assistant-store";
import { describeAssistantStoreContract } from "./assistant-store-contract";

describeAssistantStoreContract("InMemoryAssistantStore", () => new InMemoryAssistantStore());

describe("InMemoryAssistantStore", () => {
  const input = {
    assistantId: "00000000-0000-4000-8000-000000000001",
    graphId: "booking",
    name: "a",
    description: null,
    config: { configurable: { model: "a" } },
    context: {},
    metadata: { nested: { team: "ops" } },
    now: 1,
  };

  it("hands out copies: changing what it returned or was given changes nothing stored", async () => {
    const store = new InMemoryAssistantStore();
    const given = structuredClone(input);
    const { assistant } = await store.put("t", given);
    (assistant.metadata.nested as Record<string, unknown>).team = "changed";
    (given.config.configurable as Record<string, unknown>).model = "changed";
    const read = await store.get("t", input.assistantId);
    (read!.config.configurable as Record<string, unknown>).model = "changed too";
    const changes = { metadata: { extra: { deep: 1 } } };
    await store.patch("t", input.assistantId, changes, 2);
    changes.metadata.extra.deep = 2;
    const versions = await store.listVersions("t", input.assistantId, { limit: 10, offset: 0 });
    versions![0]!.metadata.extra = "changed";

    expect(await store.get("t", input.assistantId)).toMatchObject({
      config: { configurable: { model: "a" } },
      metadata: { nested: { team: "ops" }, extra: { deep: 1 } },
    });
    expect(
      await store.listVersions("t", input.assistantId, { limit: 10, offset: 0 }),
    ).toMatchObject([
      { version: 2, metadata: { extra: { deep: 1 } } },
      { version: 1, metadata: { nested: { team: "ops" } } },
    ]);
  });

  it("keeps the tenants' assistants apart even when their ids are equal", async () => {
    const store = new InMemoryAssistantStore();
    await store.put("t1", input);
    await store.put("t2", { ...input, name: "b" });
    expect(await store.delete("t1", input.assistantId)).toBe(true);
    expect(await store.get("t2", input.assistantId)).toMatchObject({ name: "b" });
    expect(await store.count("t1", {})).toBe(0);
    expect(await store.count("t2", {})).toBe(1);
  });
});
