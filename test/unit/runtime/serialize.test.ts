import {
  SEARCH_STATUSES,
  effectiveStatus,
  sdkStatus,
  threadStateJson,
} from "../../../src/runtime/http/serialize";
import type { ThreadRecord, ThreadStatus } from "../../../src/shared/threads";

const NOW = 1_700_000_000_000;

function record(overrides: Partial<ThreadRecord> = {}): ThreadRecord {
  return {
    threadId: "t-1",
    nextNodes: [],
    interrupts: [],
    metadata: {},
    createdAt: NOW - 60_000,
    updatedAt: NOW - 1_000,
    runQueue: [],
    ...overrides,
  };
}

describe("SEARCH_STATUSES", () => {
  it("accepts the SDK's names and the simple face's", () => {
    expect(Object.fromEntries(SEARCH_STATUSES)).toEqual({
      busy: "RUNNING",
      interrupted: "PAUSED_FOR_HUMAN",
      idle: "COMPLETED",
      error: "ERROR",
      RUNNING: "RUNNING",
      PAUSED_FOR_HUMAN: "PAUSED_FOR_HUMAN",
      COMPLETED: "COMPLETED",
      ERROR: "ERROR",
    });
  });

  it.each(["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "", "Busy"])(
    "does not take %j for a status",
    (name) => {
      expect(SEARCH_STATUSES).toBeInstanceOf(Map);
      expect(SEARCH_STATUSES.has(name)).toBe(false);
      expect(SEARCH_STATUSES.get(name)).toBeUndefined();
    },
  );
});

describe("effectiveStatus and sdkStatus", () => {
  const leased = { leaseOwner: "run-1", leaseExpiresAt: NOW + 5_000 };
  const lapsed = { leaseOwner: "run-1", leaseExpiresAt: NOW - 1 };

  it.each<[string, Partial<ThreadRecord>, ThreadStatus | undefined, string]>([
    ["a leased RUNNING thread", { status: "RUNNING", ...leased }, "RUNNING", "busy"],
    // A stopped run's node may still be running until its lease lapses.
    [
      "a leased thread recorded as paused",
      { status: "PAUSED_FOR_HUMAN", ...leased },
      "RUNNING",
      "busy",
    ],
    [
      "a leased thread recorded as completed",
      { status: "COMPLETED", ...leased },
      "RUNNING",
      "busy",
    ],
    ["a leased thread never run before", { ...leased }, "RUNNING", "busy"],
    [
      "a lease expiring this very millisecond",
      { status: "COMPLETED", leaseOwner: "r", leaseExpiresAt: NOW },
      "RUNNING",
      "busy",
    ],
    // Its container died mid-run: nothing will finish it.
    ["a RUNNING thread whose lease lapsed", { status: "RUNNING", ...lapsed }, "ERROR", "error"],
    ["a RUNNING thread without a lease", { status: "RUNNING" }, "ERROR", "error"],
    [
      "an expiry without an owner",
      { status: "RUNNING", leaseExpiresAt: NOW + 5_000 },
      "ERROR",
      "error",
    ],
    [
      "a paused thread with a lapsed lease",
      { status: "PAUSED_FOR_HUMAN", ...lapsed },
      "PAUSED_FOR_HUMAN",
      "interrupted",
    ],
    ["a completed thread", { status: "COMPLETED" }, "COMPLETED", "idle"],
    ["a thread in error", { status: "ERROR" }, "ERROR", "error"],
    ["a thread never run", {}, undefined, "idle"],
  ])("sees %s as %s (%s)", (_, overrides, status, sdk) => {
    expect(effectiveStatus(record(overrides), NOW)).toBe(status);
    expect(sdkStatus(record(overrides), NOW)).toBe(sdk);
  });
});

describe("threadStateJson", () => {
  const SCOPED = "scope-7f3a#t-1";
  // What a snapshot's configurable may hold besides the checkpoint address: none of it may reach a client.
  const PRIVATE = {
    tenant_id: "private-tenant",
    __pregel_checkpointer: "private-saver",
    __pregel_scratchpad: { secret: "private-scratchpad" },
    authorization: "private-token",
  };

  const snapshot = {
    values: { messages: ["hi"] },
    next: ["review"],
    config: {
      configurable: {
        thread_id: SCOPED,
        checkpoint_ns: "",
        checkpoint_id: "cp-2",
        checkpoint_map: { "": "cp-2" },
        ...PRIVATE,
      },
    },
    parentConfig: {
      configurable: { thread_id: SCOPED, checkpoint_ns: "", checkpoint_id: "cp-1", ...PRIVATE },
    },
    metadata: { source: "loop", step: 2, thread_id: SCOPED, parents: {} },
    createdAt: "2024-01-01T00:00:00.000Z",
    tasks: [
      {
        id: "task-1",
        name: "review",
        error: new Error("review failed"),
        interrupts: [{ id: "int-1", value: { question: "ok?" }, when: "during" }],
        state: { configurable: { thread_id: SCOPED, ...PRIVATE } },
        result: { ok: true },
      },
      { id: "task-2", name: "notify", error: "plain text" },
    ],
  };

  it("gives the checkpoint address only, with the client's thread id", () => {
    const state = threadStateJson(snapshot, "t-1");
    expect(state.checkpoint).toEqual({
      thread_id: "t-1",
      checkpoint_ns: "",
      checkpoint_id: "cp-2",
      checkpoint_map: { "": "cp-2" },
    });
    expect(state.parent_checkpoint).toEqual({
      thread_id: "t-1",
      checkpoint_ns: "",
      checkpoint_id: "cp-1",
      checkpoint_map: null,
    });
  });

  it("leaks nothing of configurable beyond the address, nor the scoped thread id", () => {
    const text = JSON.stringify(threadStateJson(snapshot, "t-1"));
    expect(text).not.toContain("private");
    expect(text).not.toContain(SCOPED);
  });

  it("replaces the metadata's thread id with the client's and keeps the rest", () => {
    expect(threadStateJson(snapshot, "t-1").metadata).toEqual({
      source: "loop",
      step: 2,
      thread_id: "t-1",
      parents: {},
    });
  });

  it("reshapes tasks: errors as text, interrupts as raised, a subgraph task's checkpoint address only", () => {
    expect(threadStateJson(snapshot, "t-1").tasks).toEqual([
      {
        id: "task-1",
        name: "review",
        path: [],
        error: "review failed",
        interrupts: [{ id: "int-1", value: { question: "ok?" }, when: "during" }],
        // The subgraph's config, reduced to its address under the client's thread id.
        checkpoint: { thread_id: "t-1" },
        state: null,
        result: { ok: true },
      },
      {
        id: "task-2",
        name: "notify",
        path: [],
        error: "plain text",
        interrupts: [],
        checkpoint: null,
        state: null,
        result: null,
      },
    ]);
    expect(JSON.stringify(threadStateJson(snapshot, "t-1"))).not.toContain(SCOPED);
  });

  it("answers a thread without checkpoints with an empty state at no checkpoint", () => {
    const empty = {
      values: {},
      next: [],
      tasks: [],
      metadata: undefined,
      config: { configurable: { thread_id: SCOPED, ...PRIVATE } },
    };
    for (const input of [empty, undefined]) {
      const state = threadStateJson(input, "t-1");
      expect(state).toEqual({
        values: {},
        next: [],
        tasks: [],
        metadata: {},
        created_at: null,
        checkpoint: {
          thread_id: "t-1",
          checkpoint_ns: "",
          checkpoint_id: null,
          checkpoint_map: null,
        },
        parent_checkpoint: null,
      });
    }
  });

  it("keeps a subgraph's namespace in the address", () => {
    const nested = {
      ...snapshot,
      config: {
        configurable: { thread_id: SCOPED, checkpoint_ns: "sub:task-9", checkpoint_id: "cp-3" },
      },
    };
    expect(threadStateJson(nested, "t-1").checkpoint).toEqual({
      thread_id: "t-1",
      checkpoint_ns: "sub:task-9",
      checkpoint_id: "cp-3",
      checkpoint_map: null,
    });
  });
});
