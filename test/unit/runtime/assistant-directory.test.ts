import pino from "pino";
import { buildBookingGraph } from "../../../src/examples/booking";
import {
  AssistantDirectory,
  SYSTEM_ASSISTANT_NAMESPACE,
  systemAssistantId,
  type AssistantCreateInput,
} from "../../../src/runtime/http/assistant-directory";
import { GraphRegistry } from "../../../src/runtime/graphs/graph-registry";
import { errorStatus, type ApiFace } from "../../../src/runtime/http/routes";
import { InMemoryAssistantStore } from "../../../src/runtime/graphs/in-memory-assistant-store";
import { MAX_ASSISTANT_BYTES } from "../../../src/shared/assistants";
import { CheckpointerRequiredError } from "../../../src/shared/errors";
import type { GraphFactory } from "../../../src/runtime/types";

const booking: GraphFactory = ({ checkpointer }) => buildBookingGraph({ checkpointer });
const logger = pino({ level: "silent" });

function registryOf(...graphIds: string[]): GraphRegistry {
  return new GraphRegistry(
    Object.fromEntries(graphIds.map((graphId) => [graphId, booking])),
    undefined,
    logger,
  );
}

/** A directory over `graphIds`, with `store` (none: a stateless handler's). */
function directory(
  graphIds: string[] = ["booking"],
  store: InMemoryAssistantStore | "none" = new InMemoryAssistantStore(),
) {
  let clock = 1_000;
  return new AssistantDirectory({
    registry: registryOf(...graphIds),
    store: store === "none" ? undefined : store,
    now: () => (clock += 1),
  });
}

function creation(overrides: Partial<AssistantCreateInput> = {}): AssistantCreateInput {
  return {
    graphId: "booking",
    name: "Untitled",
    description: null,
    config: {},
    context: {},
    metadata: {},
    ifExists: "raise",
    ...overrides,
  };
}

/** The error `work` rejects with, and the status it answers on `face` (routes.ts maps errors to statuses). */
async function httpError(
  work: Promise<unknown>,
  face: ApiFace = "server",
): Promise<{ statusCode: number | undefined; message: string }> {
  const error = await work.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof Error)) throw new Error(`expected an error, got ${String(error)}`);
  return { statusCode: errorStatus(error, face), message: error.message };
}

const BOOKING_ID = systemAssistantId("booking");
const TENANT = "tenant-a";

describe("system assistants", () => {
  it("derive their ids as LangGraph Server does: UUIDv5 of the graph id in its namespace", () => {
    expect(SYSTEM_ASSISTANT_NAMESPACE).toBe("6ba7b821-9dad-11d1-80b4-00c04fd430c8");
    // LangGraph Server's well-known id of the assistant of a graph called "agent".
    expect(systemAssistantId("agent")).toBe("fe096781-5601-53d2-b2f6-0d3403f7e9ca");
  });

  it("exist once per registered graph, the same for every tenant and never stored", async () => {
    const store = new InMemoryAssistantStore();
    const assistants = directory(["booking", "agent"], store);
    const expected = {
      assistantId: BOOKING_ID,
      graphId: "booking",
      name: "booking",
      description: null,
      config: {},
      context: {},
      metadata: { created_by: "system" },
      version: 1,
      createdAt: 0,
      updatedAt: 0,
    };
    expect(await assistants.get(TENANT, "booking")).toEqual(expected);
    expect(await assistants.get("tenant-b", BOOKING_ID)).toEqual(expected);
    expect(assistants.isSystem(BOOKING_ID)).toBe(true);
    expect(await store.count(TENANT, {})).toBe(0);
    expect(await assistants.listVersions(TENANT, "booking", { limit: 10, offset: 0 })).toEqual([
      {
        assistantId: BOOKING_ID,
        version: 1,
        graphId: "booking",
        name: "booking",
        description: null,
        config: {},
        context: {},
        metadata: { created_by: "system" },
        createdAt: 0,
      },
    ]);
  });

  it("cannot be patched or deleted (409), by assistant id or by graph id", async () => {
    const assistants = directory();
    for (const id of ["booking", BOOKING_ID]) {
      const patch = await httpError(assistants.patch(TENANT, id, { name: "x" }));
      expect(patch.statusCode).toBe(409);
      expect(patch.message).toMatch(/^System assistant: .* cannot be patched/);
      expect((await httpError(assistants.delete(TENANT, id))).statusCode).toBe(409);
    }
    expect(await assistants.get(TENANT, "booking")).toMatchObject({ name: "booking", version: 1 });
  });

  it("serve version 1 again, and have no other", async () => {
    const assistants = directory();
    expect(await assistants.setLatest(TENANT, "booking", 1)).toMatchObject({ version: 1 });
    const missing = await httpError(assistants.setLatest(TENANT, BOOKING_ID, 2));
    expect(missing.statusCode).toBe(404);
    expect(missing.message).toBe(`Assistant version not found: ${BOOKING_ID} has no version 2`);
  });

  it("take a create of their id as taken: 409, or themselves with if_exists do_nothing", async () => {
    const assistants = directory();
    const raised = await httpError(
      assistants.create(TENANT, creation({ assistantId: BOOKING_ID })),
    );
    expect(raised.statusCode).toBe(409);
    expect(raised.message).toBe(`Assistant already exists: ${BOOKING_ID}`);
    expect(
      await assistants.create(
        TENANT,
        creation({ assistantId: BOOKING_ID, ifExists: "do_nothing" }),
      ),
    ).toMatchObject({ assistantId: BOOKING_ID, metadata: { created_by: "system" } });
  });
});

describe("AssistantDirectory.resolve", () => {
  it("accepts an assistant id, a graph id, or nothing for the default graph", async () => {
    const assistants = directory();
    const created = await assistants.create(TENANT, creation({ name: "mine" }));
    expect((await assistants.resolve(TENANT, created.assistantId)).name).toBe("mine");
    expect((await assistants.resolve(TENANT, "booking")).assistantId).toBe(BOOKING_ID);
    expect((await assistants.resolve(TENANT, BOOKING_ID)).graphId).toBe("booking");
    expect((await assistants.resolve(TENANT, undefined)).assistantId).toBe(BOOKING_ID);
    expect((await assistants.resolve(TENANT, null)).assistantId).toBe(BOOKING_ID);
  });

  it("prefers `agent` as the default graph, and has none among several others", async () => {
    expect((await directory(["booking", "agent"]).resolve(TENANT, null)).graphId).toBe("agent");
    const none = await httpError(
      directory(["booking", "other"]).resolve(TENANT, undefined),
      "simple",
    );
    expect(none.statusCode).toBe(400);
    expect(none.message).toBe(
      "Invalid assistant_id: expected an assistant id or one of the graphs booking, other, got nothing",
    );
  });

  it("answers 404 for an unknown id (also another tenant's) and the face's status for a non-string", async () => {
    const assistants = directory();
    const created = await assistants.create(TENANT, creation());
    for (const value of [
      "nope",
      created.assistantId.replace(/.$/, (last) => (last === "0" ? "1" : "0")),
      "../booking",
    ]) {
      const error = await httpError(assistants.resolve(TENANT, value));
      expect(error.statusCode).toBe(404);
      expect(error.message).toBe(`Assistant not found: ${value}`);
    }
    expect((await httpError(assistants.resolve("tenant-b", created.assistantId))).statusCode).toBe(
      404,
    );
    for (const [value, status] of [
      [5, 422],
      [{ id: 1 }, 400],
      [["booking"], 422],
    ] as const) {
      const error = await httpError(
        assistants.resolve(TENANT, value),
        status === 400 ? "simple" : "server",
      );
      expect(error.statusCode).toBe(status);
      expect(error.message).toMatch(/^Invalid assistant_id: expected a string, got /);
    }
  });
});

describe("AssistantDirectory: stored assistants", () => {
  it("creates with a new UUIDv7 id unless one is given, and answers if_exists", async () => {
    const assistants = directory();
    const first = await assistants.create(TENANT, creation({ metadata: { n: 1 } }));
    expect(first.assistantId).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    const id = "6f1a1b2c-3d4e-4f50-8a6b-7c8d9e0f1a2b";
    await assistants.create(TENANT, creation({ assistantId: id, name: "given" }));
    const again = await httpError(assistants.create(TENANT, creation({ assistantId: id })));
    expect(again.statusCode).toBe(409);
    expect(
      await assistants.create(
        TENANT,
        creation({ assistantId: id, ifExists: "do_nothing", name: "other" }),
      ),
    ).toMatchObject({ assistantId: id, name: "given" });
  });

  it("refuses an unregistered graph (422) and oversized content (413), writing nothing", async () => {
    const store = new InMemoryAssistantStore();
    const assistants = directory(["booking"], store);
    const unknown = await httpError(assistants.create(TENANT, creation({ graphId: "nope" })));
    expect(unknown.statusCode).toBe(422);
    expect(unknown.message).toBe('Invalid graph_id: expected one of booking, got "nope"');
    const huge = { blob: "x".repeat(MAX_ASSISTANT_BYTES) };
    expect(
      (await httpError(assistants.create(TENANT, creation({ metadata: huge })))).statusCode,
    ).toBe(413);
    expect(await store.count(TENANT, {})).toBe(0);

    const created = await assistants.create(TENANT, creation());
    expect(
      (await httpError(assistants.patch(TENANT, created.assistantId, { graphId: "nope" })))
        .statusCode,
    ).toBe(422);
    // Each half fits; merged into the metadata, they would not.
    const half = "y".repeat(MAX_ASSISTANT_BYTES / 2);
    await assistants.patch(TENANT, created.assistantId, { metadata: { a: half } });
    const merged = await httpError(
      assistants.patch(TENANT, created.assistantId, { metadata: { b: half } }),
    );
    expect(merged.statusCode).toBe(413);
    expect(merged.message).toMatch(/^Assistant too large: .*nothing was written$/);
    expect(
      (await assistants.listVersions(TENANT, created.assistantId, { limit: 10, offset: 0 })).map(
        (version) => version.version,
      ),
    ).toEqual([2, 1]);
  });

  it("patches, lists versions, serves one again and deletes, by assistant id", async () => {
    const assistants = directory();
    const { assistantId } = await assistants.create(TENANT, creation({ metadata: { a: 1 } }));
    expect(await assistants.patch(TENANT, assistantId, { metadata: { b: 2 } })).toMatchObject({
      version: 2,
      metadata: { a: 1, b: 2 },
    });
    expect(await assistants.setLatest(TENANT, assistantId, 1)).toMatchObject({
      version: 1,
      metadata: { a: 1 },
    });
    expect((await httpError(assistants.setLatest(TENANT, assistantId, 3))).statusCode).toBe(404);
    expect(
      (await assistants.listVersions(TENANT, assistantId, { limit: 10, offset: 0 })).map(
        (version) => version.version,
      ),
    ).toEqual([2, 1]);
    // As on LangGraph Server, a version list with nothing in it is a 404.
    const none = await httpError(
      assistants.listVersions(TENANT, assistantId, { limit: 10, offset: 0, metadata: { c: 3 } }),
    );
    expect(none.statusCode).toBe(404);
    expect(await assistants.delete(TENANT, assistantId)).toBe(assistantId);
    for (const work of [
      assistants.get(TENANT, assistantId),
      assistants.patch(TENANT, assistantId, {}),
      assistants.delete(TENANT, assistantId),
      assistants.setLatest(TENANT, assistantId, 1),
      assistants.listVersions(TENANT, assistantId, { limit: 10, offset: 0 }),
    ]) {
      const error = await httpError(work);
      expect([error.statusCode, error.message]).toEqual([
        404,
        `Assistant not found: ${assistantId}`,
      ]);
    }
  });

  it("keeps tenants apart", async () => {
    const assistants = directory();
    const { assistantId } = await assistants.create(TENANT, creation({ name: "a's" }));
    for (const work of [
      assistants.get("tenant-b", assistantId),
      assistants.patch("tenant-b", assistantId, { name: "b's" }),
      assistants.delete("tenant-b", assistantId),
      assistants.setLatest("tenant-b", assistantId, 1),
      assistants.listVersions("tenant-b", assistantId, { limit: 10, offset: 0 }),
    ]) {
      expect((await httpError(work)).statusCode).toBe(404);
    }
    expect(await assistants.count("tenant-b", {})).toBe(1);
    expect(await assistants.get(TENANT, assistantId)).toMatchObject({ name: "a's", version: 1 });
  });
});

describe("AssistantDirectory.search and count", () => {
  it("list system and stored assistants as one ordered list, a page at a time", async () => {
    const assistants = directory(["booking", "agent"]);
    const first = await assistants.create(TENANT, creation({ name: "alpha", metadata: { k: 1 } }));
    const second = await assistants.create(TENANT, creation({ name: "Beta", graphId: "agent" }));
    const query = {
      limit: 10,
      offset: 0,
      sortBy: "created_at" as const,
      sortOrder: "desc" as const,
    };
    const ids = async (overrides: object) =>
      (await assistants.search(TENANT, { ...query, ...overrides })).assistants.map(
        (assistant) => assistant.assistantId,
      );
    const agentId = systemAssistantId("agent");
    // System assistants are the oldest (the epoch); ties go by assistant id.
    const systemDesc = [agentId, BOOKING_ID].sort().reverse();
    expect(await ids({})).toEqual([second.assistantId, first.assistantId, ...systemDesc]);
    expect(await ids({ sortOrder: "asc" })).toEqual([
      ...[...systemDesc].reverse(),
      first.assistantId,
      second.assistantId,
    ]);
    expect(await ids({ sortBy: "name", sortOrder: "asc" })).toEqual([
      second.assistantId, // "Beta" sorts before lower-case names, by code point
      agentId,
      first.assistantId,
      BOOKING_ID,
    ]);
    expect(await ids({ graphId: "agent" })).toEqual([second.assistantId, agentId]);
    expect(await ids({ metadata: { created_by: "system" } })).toEqual(systemDesc);
    expect(await ids({ name: "BOOK" })).toEqual([BOOKING_ID]);

    const page = await assistants.search(TENANT, { ...query, limit: 2, offset: 1 });
    expect(page.total).toBe(4);
    expect(page.assistants.map((assistant) => assistant.assistantId)).toEqual([
      first.assistantId,
      systemDesc[0],
    ]);
    expect(await ids({ offset: 3 })).toEqual([systemDesc[1]]);

    expect(await assistants.count(TENANT, {})).toBe(4);
    expect(await assistants.count(TENANT, { graphId: "booking" })).toBe(2);
    expect(await assistants.count(TENANT, { metadata: { created_by: "system" } })).toBe(2);
    expect(await assistants.count("tenant-b", {})).toBe(2);
  });
});

describe("AssistantDirectory without a store (a stateless handler)", () => {
  it("serves the system assistants and refuses to create one (400, CheckpointerRequiredError)", async () => {
    const assistants = directory(["booking"], "none");
    expect(assistants.persistent).toBe(false);
    expect(await assistants.get(TENANT, "booking")).toMatchObject({ assistantId: BOOKING_ID });
    await expect(assistants.create(TENANT, creation())).rejects.toBeInstanceOf(
      CheckpointerRequiredError,
    );
    const page = await assistants.search(TENANT, {
      limit: 10,
      offset: 0,
      sortBy: "created_at",
      sortOrder: "desc",
    });
    expect(page).toMatchObject({ total: 1, assistants: [{ assistantId: BOOKING_ID }] });
    expect(await assistants.count(TENANT, {})).toBe(1);
    const id = "6f1a1b2c-3d4e-4f50-8a6b-7c8d9e0f1a2b";
    expect((await httpError(assistants.get(TENANT, id))).statusCode).toBe(404);
    expect((await httpError(assistants.setLatest(TENANT, id, 1))).statusCode).toBe(404);
  });
});
