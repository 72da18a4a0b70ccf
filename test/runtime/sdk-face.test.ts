import type { Client } from "@langchain/langgraph-sdk";
import { systemAssistantId } from "../../src/runtime/http/assistant-directory";
import {
  backendOptions,
  bookingAssistants,
  startTestServer,
  type Backend,
  type TestServer,
} from "./support";
import { SDK_MAJORS } from "../support/sdk-majors";

/**
 * The official @langchain/langgraph-sdk Client, unchanged, against the dev server (real JWT checks): each major of
 * the SDK on each backend.
 */
describe.each(
  (["memory", "dynamodb"] as Backend[]).flatMap((backend) =>
    SDK_MAJORS.map((sdk) => ({ backend, sdk })),
  ),
)("LangGraph SDK face ($backend checkpointer, SDK $sdk.version)", ({ backend, sdk }) => {
  let server: TestServer;
  let alice: Client;
  let mallory: Client;
  const booked: string[] = [];

  beforeAll(async () => {
    server = await startTestServer({
      assistants: bookingAssistants((state) => {
        booked.push(state.request);
      }),
      ...(await backendOptions(backend)),
    });
    alice = await server.client("tenant-alice", sdk);
    mallory = await server.client("tenant-mallory", sdk);
  });

  afterAll(async () => {
    await server.close();
  });

  it("runs start -> interrupt -> getState -> resume -> completed -> history, newest first", async () => {
    const thread = await alice.threads.create({ metadata: { customer: "c-1" } });
    expect(thread.status).toBe("idle");

    const paused = (await alice.runs.wait(thread.thread_id, "booking", {
      input: { request: "move my appointment" },
    })) as Record<string, unknown>;
    const interrupts = paused.__interrupt__ as Array<{ id: string; value: { slot: string } }>;
    expect(interrupts).toHaveLength(1);
    expect(interrupts[0]!.value.slot).toBe("2026-09-10T14:00");
    expect(paused.slot).toBe("2026-09-10T14:00");

    const state = await alice.threads.getState(thread.thread_id);
    expect(state.next).toEqual(["human_approval"]);
    expect(state.tasks[0]!.interrupts).toEqual([
      { id: interrupts[0]!.id, value: interrupts[0]!.value },
    ]);
    expect(state.checkpoint.thread_id).toBe(thread.thread_id);
    expect((await alice.threads.get(thread.thread_id)).status).toBe("interrupted");

    // Resume through the interrupt-id map, as a client that answers a specific interrupt does.
    const done = (await alice.runs.wait(thread.thread_id, "booking", {
      command: { resume: { [interrupts[0]!.id]: { approve: true } } },
    })) as Record<string, unknown>;
    expect(done).toMatchObject({ approved: true, booked: true });
    expect(done.__interrupt__).toBeUndefined();
    expect(booked).toContain("move my appointment");

    const after = await alice.threads.get(thread.thread_id);
    expect(after.status).toBe("idle");
    expect(after.values).toMatchObject({ booked: true });
    expect(after.metadata).toMatchObject({ customer: "c-1" });

    const history = await alice.threads.getHistory(thread.thread_id);
    expect(history.length).toBeGreaterThanOrEqual(4);
    expect(history[0]!.values).toMatchObject({ booked: true });
    const steps = history.map((entry) => Number((entry.metadata as { step: number }).step));
    expect(steps).toEqual([...steps].sort((a, b) => b - a));
    expect(history[0]!.checkpoint.checkpoint_id! > history[1]!.checkpoint.checkpoint_id!).toBe(
      true,
    );

    const limited = await alice.threads.getHistory(thread.thread_id, { limit: 2 });
    expect(limited).toHaveLength(2);
  });

  it("answers 409 to a resume when nothing is pending and to an unknown interrupt id", async () => {
    const { thread_id } = await alice.threads.create();
    await alice.runs.wait(thread_id, "booking", { input: { request: "r" } });
    await expect(
      alice.runs.wait(thread_id, "booking", {
        command: { resume: { ["0".repeat(32)]: { approve: true } } },
      }),
    ).rejects.toThrow(/409/);
    await alice.runs.wait(thread_id, "booking", { command: { resume: { approve: false } } });
    await expect(
      alice.runs.wait(thread_id, "booking", { command: { resume: { approve: true } } }),
    ).rejects.toThrow(/409/);
    expect((await alice.threads.getState(thread_id)).values).toMatchObject({ booked: false });
  });

  it("hides a thread from another tenant on every route (404, like a missing thread)", async () => {
    const { thread_id } = await alice.threads.create();
    await alice.runs.wait(thread_id, "booking", { input: { request: "private" } });
    const calls: Array<[string, () => Promise<unknown>]> = [
      ["get", () => mallory.threads.get(thread_id)],
      ["getState", () => mallory.threads.getState(thread_id)],
      ["getHistory", () => mallory.threads.getHistory(thread_id)],
      ["delete", () => mallory.threads.delete(thread_id)],
      [
        "runs.wait resume",
        () => mallory.runs.wait(thread_id, "booking", { command: { resume: { approve: true } } }),
      ],
      ["runs.wait start", () => mallory.runs.wait(thread_id, "booking", { input: {} })],
    ];
    for (const [name, call] of calls) {
      await expect(call()).rejects.toThrow(/404/);
      void name;
    }
    // The same id is a different thread for mallory: creating it there does not touch alice's.
    await mallory.threads.create({ threadId: thread_id });
    expect((await alice.threads.get(thread_id)).status).toBe("interrupted");
    expect((await mallory.threads.get(thread_id)).status).toBe("idle");
    expect(await mallory.threads.search({ status: "interrupted" })).toEqual([]);
  });

  it("lists exactly the caller's paused threads in the approvals inbox, newest first, paginated", async () => {
    const inbox = await server.client(`tenant-inbox-${backend}-${sdk.version}`, sdk);
    const other = await server.client(`tenant-other-${backend}-${sdk.version}`, sdk);
    const paused: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      const { thread_id } = await inbox.threads.create();
      await inbox.runs.wait(thread_id, "booking", { input: { request: `r${index}` } });
      paused.unshift(thread_id);
    }
    const { thread_id: finished } = await inbox.threads.create();
    await inbox.runs.wait(finished, "booking", { input: { request: "done" } });
    await inbox.runs.wait(finished, "booking", { command: { resume: { approve: true } } });
    const { thread_id: foreign } = await other.threads.create();
    await other.runs.wait(foreign, "booking", { input: { request: "theirs" } });

    const listed = await inbox.threads.search({ status: "interrupted" });
    expect(listed.map((thread) => thread.thread_id)).toEqual(paused);
    for (const thread of listed) {
      expect(thread.status).toBe("interrupted");
      const pending = Object.values(thread.interrupts ?? {}).flat();
      expect(pending).toHaveLength(1);
      expect(pending[0]!.value).toMatchObject({ slot: "2026-09-10T14:00" });
    }
    const page = await inbox.threads.search({ status: "interrupted", limit: 2, offset: 1 });
    expect(page.map((thread) => thread.thread_id)).toEqual(paused.slice(1, 3));
    const idle = await inbox.threads.search({ status: "idle" });
    expect(idle.map((thread) => thread.thread_id)).toEqual([finished]);
  });

  it("deletes a thread and serves the assistants", async () => {
    const { thread_id } = await alice.threads.create();
    await alice.runs.wait(thread_id, "booking", { input: { request: "x" } });
    await alice.threads.delete(thread_id);
    await expect(alice.threads.get(thread_id)).rejects.toThrow(/404/);
    await expect(alice.threads.getState(thread_id)).rejects.toThrow(/404/);

    // The graph's system assistant: its id is LangGraph Server's UUIDv5 of the graph id.
    expect(await alice.assistants.get("booking")).toMatchObject({
      assistant_id: systemAssistantId("booking"),
      graph_id: "booking",
    });
    const assistants = await alice.assistants.search();
    expect(assistants.map((assistant) => assistant.assistant_id)).toEqual([
      systemAssistantId("booking"),
    ]);
    await expect(alice.assistants.get("nope")).rejects.toThrow(/404/);
  });

  it("creates the thread on a run with if_not_exists create, and 404s without it", async () => {
    await expect(
      alice.runs.wait("never-created", "booking", { input: { request: "x" } }),
    ).rejects.toThrow(/404/);
    const paused = (await alice.runs.wait("made-by-run", "booking", {
      input: { request: "x" },
      ifNotExists: "create",
    })) as Record<string, unknown>;
    expect(paused.__interrupt__).toBeDefined();
  });
});
