import { randomBytes, randomUUID } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  emptyCheckpoint,
  uuid6,
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
} from "@langchain/langgraph-checkpoint";
import { DynamoDBSaver, InvalidIdentifierError } from "../../../src";
import { instrumentedClient, useSaverTable } from "./saver-fixtures";

// Promise: identifiers within the documented limits (at most 256 characters, no control characters, no `#` in a
// tenant id, well-formed Unicode) either fit DynamoDB's key limits (2,048 bytes of partition key, 1,024 bytes of
// sort key, counted in UTF-8 after any escaping) or are refused with InvalidIdentifierError before any request.
// DynamoDB's own ValidationException never reaches the caller. DynamoDB Local enforces the key limits.

const table = useSaverTable("key-limits");

/**
 * A string of exactly `length` UTF-16 code units made of whole `pieces` taken in turn (never half a surrogate
 * pair), padded with "x".
 */
function exactly(length: number, ...pieces: string[]): string {
  let value = "";
  for (let i = 0; ; i += 1) {
    const piece = pieces[i % pieces.length]!;
    if (value.length + piece.length > length) break;
    value += piece;
  }
  return value.padEnd(length, "x");
}

/** One `node:task` part of a subgraph namespace, of exactly `length` characters. */
function namespacePart(node: string, length = 256): string {
  const task = `:${randomUUID()}`;
  return exactly(length - task.length, node) + task;
}

/** Random base64: brotli leaves it at about three quarters of its length, so it is stored as chunks. */
function chunkedValue(length = 700_000): string {
  return randomBytes(Math.ceil((length * 3) / 4))
    .toString("base64")
    .slice(0, length);
}

const metadata: CheckpointMetadata = { source: "loop", step: 0, parents: {} };

type Outcome<T> = { stored: true; value: T } | { stored: false };

/**
 * Runs one saver call. It either succeeds, or is refused with InvalidIdentifierError before it sent a request;
 * anything else (DynamoDB's ValidationException above all) fails the test by name and message.
 */
async function storedOrRefused<T>(
  requests: string[],
  call: () => T | Promise<T>,
): Promise<Outcome<T>> {
  const sentBefore = requests.length;
  try {
    return { stored: true, value: await call() };
  } catch (error) {
    const { name, message } = error as Error;
    expect({ name, message }).not.toMatchObject({ name: "ValidationException" });
    if (!(error instanceof InvalidIdentifierError)) throw error;
    expect(requests.slice(sentBefore)).toEqual([]);
    return { stored: false };
  }
}

interface IdentifierCase {
  tenantId?: string;
  threadId?: string;
  namespace?: string;
  parentId?: string;
  checkpointId?: string;
  channel?: string;
  value?: unknown;
  taskId?: string;
  taskPath?: string;
  write?: unknown;
}

async function collect(iterable: AsyncIterable<CheckpointTuple>): Promise<CheckpointTuple[]> {
  const tuples: CheckpointTuple[] = [];
  for await (const tuple of iterable) tuples.push(tuple);
  return tuples;
}

/**
 * A thread's life with the given identifiers: a parent checkpoint holding `channel`, a child that changes
 * another channel (so `channel` is read through the parent), a putWrites on the child, reads by a saver that
 * shares nothing with the writer, and deletion. Each call is either stored and read back exactly, or refused
 * with InvalidIdentifierError before any request.
 */
async function exercise(identifiers: IdentifierCase): Promise<"stored" | "refused"> {
  const { client: counted, requests } = instrumentedClient();
  try {
    const tenantId = identifiers.tenantId ?? `tenant-${randomUUID()}`;
    const built = await storedOrRefused(
      requests,
      () => new DynamoDBSaver({ tableName: table.tableName, client: counted, tenantId }),
    );
    if (!built.stored) return "refused";
    const writer = built.value;
    const threadId = identifiers.threadId ?? randomUUID();
    const namespace = identifiers.namespace ?? "";
    const channel = identifiers.channel ?? "document";

    const parentVersions = {
      kept: writer.getNextVersion(undefined),
      [channel]: writer.getNextVersion(undefined),
    };
    const parent: Checkpoint = {
      ...emptyCheckpoint(),
      id: identifiers.parentId ?? uuid6(-3),
      channel_values: { kept: "from the parent", [channel]: identifiers.value ?? "small value" },
      channel_versions: parentVersions,
    };
    const parentPut = await storedOrRefused(requests, () =>
      writer.put(
        { configurable: { thread_id: threadId, checkpoint_ns: namespace } },
        parent,
        metadata,
        parentVersions,
      ),
    );
    if (!parentPut.stored) return "refused";

    const stepVersion = writer.getNextVersion(undefined);
    const child: Checkpoint = {
      ...emptyCheckpoint(),
      id: identifiers.checkpointId ?? uuid6(-3),
      channel_values: { ...parent.channel_values, step: 1 },
      channel_versions: { ...parentVersions, step: stepVersion },
    };
    const childMetadata = { ...metadata, step: 1 };
    const childPut = await storedOrRefused(requests, () =>
      writer.put(
        {
          configurable: { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: parent.id },
        },
        child,
        childMetadata,
        { step: stepVersion },
      ),
    );
    const childConfig = {
      configurable: { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: child.id },
    };
    const taskId = identifiers.taskId ?? randomUUID();
    const writes: PendingWrite[] = [
      [channel, identifiers.write ?? "small write"],
      ["kept", "written"],
    ];
    const written = childPut.stored
      ? await storedOrRefused(requests, () =>
          writer.putWrites(childConfig, writes, taskId, identifiers.taskPath ?? ""),
        )
      : { stored: false as const };

    // Read back with an instance that caches nothing of the writer's.
    const reader = new DynamoDBSaver({
      tableName: table.tableName,
      client: table.client,
      tenantId,
    });
    const stored = childPut.stored ? [child, parent] : [parent];
    const readParent = await reader.getTuple({
      configurable: { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: parent.id },
    });
    expect(readParent?.checkpoint).toEqual(parent);
    if (childPut.stored) {
      const readChild = await reader.getTuple(childConfig);
      expect(readChild?.checkpoint).toEqual(child);
      expect(readChild?.metadata).toEqual(childMetadata);
      expect(readChild?.pendingWrites).toEqual(
        written.stored ? writes.map(([name, value]) => [taskId, name, value]) : [],
      );
    }
    const latest = await reader.getTuple({
      configurable: { thread_id: threadId, checkpoint_ns: namespace },
    });
    expect(latest?.checkpoint.id).toBe(stored[0]!.id);
    const listed = await collect(
      reader.list({ configurable: { thread_id: threadId, checkpoint_ns: namespace } }),
    );
    expect(listed.map((tuple) => tuple.checkpoint)).toEqual(stored);
    const tenantWide = await collect(reader.list({}));
    expect(tenantWide.map((tuple) => tuple.config.configurable?.thread_id)).toContain(threadId);

    await writer.deleteThread(threadId);
    expect(
      await reader.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: namespace } }),
    ).toBeUndefined();
    return childPut.stored && written.stored ? "stored" : "refused";
  } finally {
    counted.destroy();
  }
}

describe("DynamoDBSaver fits long identifiers into DynamoDB keys or refuses them before any request (integration)", () => {
  it.each<[string, () => IdentifierCase]>([
    [
      "a 256-character tenant id with a 256-character thread id of emoji, #, % and $",
      () => ({
        tenantId: exactly(256, `tenant-${randomUUID()}-`, "€", "😀", "$", "€€"),
        threadId: exactly(256, "😀", "#", "%", "😀", "$"),
        value: chunkedValue(),
        write: chunkedValue(),
      }),
    ],
    [
      "a 256-character tenant id of 3-byte characters with a thread id of 256 #",
      () => ({
        tenantId: exactly(256, `tenant-${randomUUID()}-`, "€"),
        threadId: "#".repeat(256),
        value: chunkedValue(),
        write: chunkedValue(),
      }),
    ],
    [
      "256-character checkpoint ids of # and %",
      () => ({
        parentId: exactly(255, "#", "%") + "1",
        checkpointId: exactly(255, "#", "%") + "2",
        value: chunkedValue(),
        write: chunkedValue(),
      }),
    ],
    [
      "256-character checkpoint ids of # and % in a namespace of two 256-character parts",
      () => ({
        namespace: `${namespacePart("planner")}|${namespacePart("researcher")}`,
        parentId: exactly(255, "%", "#") + "1",
        checkpointId: exactly(255, "%", "#") + "2",
        value: chunkedValue(),
        write: chunkedValue(),
      }),
    ],
    [
      "a 5,000-character channel name holding a chunked value of about 500 KB",
      () => ({ channel: exactly(5_000, "channel_"), value: chunkedValue(), write: chunkedValue() }),
    ],
    [
      "a 256-character task id of #, % and emoji with a chunked write",
      () => ({ taskId: exactly(256, "task#", "%", "😀"), write: chunkedValue() }),
    ],
    [
      "a 2,000-character task path with a chunked write",
      () => ({ taskPath: exactly(2_000, "~__pregel_pull, ", "agent|"), write: chunkedValue() }),
    ],
    [
      "every identifier at its longest at once",
      () => ({
        tenantId: exactly(256, `tenant-${randomUUID()}-`, "€"),
        threadId: "#".repeat(256),
        // Node names without escaped characters: a namespace that is accepted on its own.
        namespace: `${namespacePart("planner")}|${namespacePart("tool")}`,
        parentId: "%".repeat(255) + "1",
        checkpointId: "%".repeat(255) + "2",
        channel: exactly(256, "#"),
        value: chunkedValue(),
        taskId: "#".repeat(256),
        taskPath: exactly(2_000, "#"),
        write: chunkedValue(),
      }),
    ],
  ])("stores or refuses %s", async (_name, identifiers) => {
    await exercise(identifiers());
  });

  it.each<[string, () => string]>([
    ["two parts of 256 characters", () => [namespacePart("a"), namespacePart("b")].join("|")],
    [
      "three parts of 256 characters",
      () => [namespacePart("a"), namespacePart("b"), namespacePart("c")].join("|"),
    ],
    [
      "eight parts of 100 characters",
      () => Array.from({ length: 8 }, () => namespacePart("n", 100)).join("|"),
    ],
    [
      "three parts of 256 characters with # in the node names",
      () => [namespacePart("a#"), namespacePart("#b"), namespacePart("c#")].join("|"),
    ],
    [
      "two parts of 256 characters with emoji in the node names",
      () => [namespacePart("😀"), namespacePart("🚀")].join("|"),
    ],
    [
      "twenty parts of 40 characters with % in the node names",
      () => Array.from({ length: 20 }, () => namespacePart("%", 40)).join("|"),
    ],
  ])("stores or refuses a namespace of %s, with chunked values", async (_name, namespace) => {
    await exercise({ namespace: namespace(), value: chunkedValue(), write: chunkedValue() });
  });
});

describe("DynamoDBSaver refuses identifiers that are not well-formed Unicode before any request (integration)", () => {
  // A lone surrogate has no UTF-8 encoding: it cannot be stored as written, so it must never reach a key.
  const malformed: Array<[string, string]> = [
    ["a lone high surrogate", "id-\ud800"],
    ["a lone low surrogate", "id-\udfff"],
    ["a reversed surrogate pair", "id-\ude00\ud83d"],
  ];

  function saverWith(counted: DynamoDBClient): DynamoDBSaver {
    return new DynamoDBSaver({
      tableName: table.tableName,
      client: counted,
      tenantId: `tenant-${randomUUID()}`,
    });
  }

  function checkpointWithId(saver: DynamoDBSaver, id = uuid6(-3)): Checkpoint {
    const version = saver.getNextVersion(undefined);
    return {
      ...emptyCheckpoint(),
      id,
      channel_values: { a: 1 },
      channel_versions: { a: version },
    };
  }

  async function expectRefusal(requests: string[], call: () => unknown): Promise<void> {
    await expect((async () => call())()).rejects.toThrow(InvalidIdentifierError);
    expect(requests).toEqual([]);
  }

  it.each(malformed)("refuses a tenant id with %s at construction", (_name, tenantId) => {
    const { client: counted, requests } = instrumentedClient();
    try {
      expect(
        () => new DynamoDBSaver({ tableName: table.tableName, client: counted, tenantId }),
      ).toThrow(InvalidIdentifierError);
      expect(requests).toEqual([]);
    } finally {
      counted.destroy();
    }
  });

  it.each(malformed)("refuses a thread id with %s in every call", async (_name, threadId) => {
    const { client: counted, requests } = instrumentedClient();
    try {
      const saver = saverWith(counted);
      const checkpoint = checkpointWithId(saver);
      const config = { configurable: { thread_id: threadId, checkpoint_ns: "" } };
      const withId = { configurable: { ...config.configurable, checkpoint_id: checkpoint.id } };
      await expectRefusal(requests, () => saver.getTuple(config));
      await expectRefusal(requests, () =>
        saver.put(config, checkpoint, metadata, checkpoint.channel_versions),
      );
      await expectRefusal(requests, () => saver.putWrites(withId, [["a", 2]], randomUUID()));
      await expectRefusal(requests, () => collect(saver.list(config)));
      await expectRefusal(requests, () => saver.deleteThread(threadId));
    } finally {
      counted.destroy();
    }
  });

  it.each(malformed)(
    "refuses a checkpoint id with %s in every call",
    async (_name, checkpointId) => {
      const { client: counted, requests } = instrumentedClient();
      try {
        const saver = saverWith(counted);
        const base = { thread_id: randomUUID(), checkpoint_ns: "" };
        const withId = { configurable: { ...base, checkpoint_id: checkpointId } };
        const malformedCheckpoint = checkpointWithId(saver, checkpointId);
        const wellFormed = checkpointWithId(saver);
        await expectRefusal(requests, () =>
          saver.put(
            { configurable: base },
            malformedCheckpoint,
            metadata,
            malformedCheckpoint.channel_versions,
          ),
        );
        // A malformed parent id in the config is refused as well.
        await expectRefusal(requests, () =>
          saver.put(withId, wellFormed, metadata, wellFormed.channel_versions),
        );
        await expectRefusal(requests, () => saver.putWrites(withId, [["a", 2]], randomUUID()));
        await expectRefusal(requests, () => saver.getTuple(withId));
        await expectRefusal(requests, () => collect(saver.list(withId)));
      } finally {
        counted.destroy();
      }
    },
  );

  it.each(malformed)("refuses a task id with %s", async (_name, taskId) => {
    const { client: counted, requests } = instrumentedClient();
    try {
      const saver = saverWith(counted);
      const config = {
        configurable: { thread_id: randomUUID(), checkpoint_ns: "", checkpoint_id: uuid6(-3) },
      };
      await expectRefusal(requests, () => saver.putWrites(config, [["a", 2]], taskId));
    } finally {
      counted.destroy();
    }
  });

  it.each(malformed)("refuses a namespace part with %s in every call", async (_name, part) => {
    const { client: counted, requests } = instrumentedClient();
    try {
      const saver = saverWith(counted);
      const checkpoint = checkpointWithId(saver);
      const config = {
        configurable: { thread_id: randomUUID(), checkpoint_ns: `node:${randomUUID()}|${part}` },
      };
      const withId = { configurable: { ...config.configurable, checkpoint_id: checkpoint.id } };
      await expectRefusal(requests, () =>
        saver.put(config, checkpoint, metadata, checkpoint.channel_versions),
      );
      await expectRefusal(requests, () => saver.putWrites(withId, [["a", 2]], randomUUID()));
      await expectRefusal(requests, () => saver.getTuple(config));
      await expectRefusal(requests, () => collect(saver.list(config)));
    } finally {
      counted.destroy();
    }
  });
});
