/**
 * DynamoDB cost of real graph runs through DynamoDBSaver, on DynamoDB Local: requests (by operation) counted by a
 * client middleware, capacity units from `ReturnConsumedCapacity: TOTAL`, and what the workload leaves stored.
 * Every invocation uses a new saver instance, as a new Lambda container would.
 */
import { createHash, randomUUID } from "node:crypto";
import {
  DynamoDBClient,
  ScanCommand,
  type AttributeValue,
  type ConsumedCapacity,
} from "@aws-sdk/client-dynamodb";
import { Annotation, Command, END, interrupt, START, StateGraph } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { brotliCompressSync, constants, deflateRawSync, gzipSync } from "node:zlib";
import { encodeValue } from "../src/checkpoint/dynamodb/codec";
import { DynamoDBSaver } from "../src/checkpoint/dynamodb/saver";
import type { ThreadStatus } from "../src/shared/threads";
import { buildBookingGraph } from "../src/examples/booking";
import { createTestTable } from "../test/support/dynamodb";
import { LOCAL_CLIENT_CONFIG } from "../test/support/dynamodb-local";
import { writeResults, type BenchContext } from "./context";

interface Meter {
  requests: number;
  requestsByOperation: Record<string, number>;
  capacityUnits: number;
  capacityByOperation: Record<string, number>;
}

/** A DynamoDB client that asks for consumed capacity on every request and counts requests and units. */
export function createMeteredClient(endpoint: string): { client: DynamoDBClient; meter: Meter } {
  const meter: Meter = {
    requests: 0,
    requestsByOperation: {},
    capacityUnits: 0,
    capacityByOperation: {},
  };
  const client = new DynamoDBClient({ ...LOCAL_CLIENT_CONFIG, endpoint });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      const operation = (context.commandName ?? "unknown").replace(/Command$/, "");
      const counted = operation !== "Scan"; // the bench's own storage measurement
      if (counted) {
        input.ReturnConsumedCapacity = "TOTAL";
        meter.requests += 1;
        meter.requestsByOperation[operation] = (meter.requestsByOperation[operation] ?? 0) + 1;
      }
      const result = await next(args);
      const consumed = (
        result.output as { ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[] }
      ).ConsumedCapacity;
      for (const entry of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) {
        if (!counted) continue;
        meter.capacityUnits += entry.CapacityUnits ?? 0;
        meter.capacityByOperation[operation] =
          (meter.capacityByOperation[operation] ?? 0) + (entry.CapacityUnits ?? 0);
      }
      return result;
    },
    { step: "initialize", name: "requestMeter" },
  );
  return { client, meter };
}

/** Item count and approximate stored bytes (DynamoDB's item-size rules) of one tenant's items. */
async function measureStorage(client: DynamoDBClient, tableName: string, tenantId: string) {
  let itemsStored = 0;
  let bytesStored = 0;
  let startKey: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({ TableName: tableName, ExclusiveStartKey: startKey }),
    );
    for (const item of page.Items ?? []) {
      if (!item.pk?.S?.startsWith(`${tenantId}#`)) continue;
      itemsStored += 1;
      bytesStored += itemSize(item);
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return { itemsStored, bytesStored };
}

function itemSize(item: Record<string, AttributeValue>): number {
  return Object.entries(item).reduce(
    (sum, [name, value]) => sum + Buffer.byteLength(name) + valueSize(value),
    0,
  );
}

function valueSize(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.N !== undefined) return Math.ceil(value.N.replace(/^-|\.|e.*$/g, "").length / 2) + 1;
  if (value.B !== undefined) return value.B.byteLength;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.L !== undefined)
    return 3 + value.L.reduce((sum, element) => sum + 1 + valueSize(element), 0);
  if (value.M !== undefined) return 3 + itemSize(value.M) + Object.keys(value.M).length;
  return 0;
}

// ---------------------------------------------------------------- workloads

/** The chat workload: 30 turns, a pause every 5 turns, a growing message list. */
const ChatState = Annotation.Root({
  messages: Annotation<Array<{ role: string; n: number; content: string }>>({
    reducer: (left, right) => left.concat(right),
    default: () => [],
  }),
  turn: Annotation<number>(),
});

export function buildChatGraph(checkpointer: BaseCheckpointSaver) {
  return new StateGraph(ChatState)
    .addNode("think", (state) => {
      const t = state.turn + 1;
      let digests = "";
      for (let i = 0; i < 8; i += 1) {
        digests += createHash("sha256").update(`msg-${t}-${i}`).digest("hex");
      }
      return { turn: t, messages: [{ role: "assistant", n: t, content: digests.slice(0, 500) }] };
    })
    .addNode("gate", (state) => {
      if (state.turn % 5 === 0) interrupt({ turn: state.turn });
      return {};
    })
    .addEdge(START, "think")
    .addEdge("think", "gate")
    .addConditionalEdges("gate", (state) => (state.turn >= 30 ? END : "think"))
    .compile({ checkpointer });
}

type Graph = {
  stream: (
    input: unknown,
    config: Record<string, unknown>,
  ) => Promise<AsyncIterable<[string, Record<string, unknown>]>>;
};

/**
 * One invocation as the handler runs it: the graph's `tasks` stream says which node paused, so recording the
 * status needs no extra read; then one status write.
 */
async function invokeAndRecord(
  graph: Graph,
  saver: DynamoDBSaver,
  threadId: string,
  input: unknown,
) {
  const config = { configurable: { thread_id: threadId }, streamMode: ["tasks"] };
  const paused = new Set<string>();
  for await (const [, event] of await graph.stream(input, config)) {
    const interrupts = event.interrupts as unknown[] | undefined;
    if ("result" in event && interrupts && interrupts.length > 0) paused.add(String(event.name));
  }
  const status: ThreadStatus = paused.size > 0 ? "PAUSED_FOR_HUMAN" : "COMPLETED";
  await saver.markStatus(config, status, paused.size > 0 ? [...paused].join(",") : undefined);
  return status;
}

async function runWorkload(
  endpoint: string,
  tableName: string,
  run: (newSaver: () => DynamoDBSaver) => Promise<number>,
) {
  const { client, meter } = createMeteredClient(endpoint);
  const tenantId = `bench-${randomUUID()}`;
  const invocations = await run(() => new DynamoDBSaver({ tableName, tenantId, client }));
  const storage = await measureStorage(client, tableName, tenantId);
  client.destroy();
  return { invocations, ...meter, ...storage };
}

/**
 * The payload codec, chosen by measurement: size and time of each candidate on the chat workload's final state
 * (30 messages of hex digests, the largest value it stores), serialized by LangGraph's serializer.
 */
async function compareCodecs() {
  const saver = new DynamoDBSaver({
    tableName: "unused",
    tenantId: "codec",
    clientConfig: LOCAL_CLIENT_CONFIG,
  });
  const messages = [];
  for (let t = 1; t <= 30; t += 1) {
    let digests = "";
    for (let i = 0; i < 8; i += 1)
      digests += createHash("sha256").update(`msg-${t}-${i}`).digest("hex");
    messages.push({ role: "assistant", n: t, content: digests.slice(0, 500) });
  }
  const [, bytes] = await saver.serde.dumpsTyped({ messages, turn: 30 });
  const candidates: Array<[string, (input: Uint8Array) => Uint8Array]> = [
    ["none", (input) => input],
    ["deflate-raw level 6", (input) => deflateRawSync(input, { level: 6 })],
    ["gzip level 6", (input) => gzipSync(input, { level: 6 })],
    ["brotli quality 4 (chosen)", (input) => encodeValue("json", input, "brotli").v],
    [
      "brotli quality 11",
      (input) => brotliCompressSync(input, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
    ],
  ];
  return candidates.map(([name, compress]) => {
    const rounds = 200;
    let output = compress(bytes);
    const started = process.hrtime.bigint();
    for (let i = 0; i < rounds; i += 1) output = compress(bytes);
    const micros = Number(process.hrtime.bigint() - started) / rounds / 1000;
    return {
      codec: name,
      inputBytes: bytes.byteLength,
      outputBytes: output.byteLength,
      microsPerCall: micros,
    };
  });
}

export default async function dynamodbBench({ endpoint }: BenchContext): Promise<void> {
  const setupClient = new DynamoDBClient({ ...LOCAL_CLIENT_CONFIG, endpoint });
  const tableName = await createTestTable(setupClient, "bench");
  setupClient.destroy();

  const booking = await runWorkload(endpoint, tableName, async (newSaver) => {
    const threadId = randomUUID();
    let saver = newSaver();
    const first = await invokeAndRecord(
      buildBookingGraph({ checkpointer: saver }) as unknown as Graph,
      saver,
      threadId,
      { request: "move my booking" },
    );
    if (first !== "PAUSED_FOR_HUMAN") throw new Error(`booking did not pause: ${first}`);
    saver = newSaver();
    const second = await invokeAndRecord(
      buildBookingGraph({ checkpointer: saver }) as unknown as Graph,
      saver,
      threadId,
      new Command({ resume: { approve: true } }),
    );
    if (second !== "COMPLETED") throw new Error(`booking did not complete: ${second}`);
    return 2;
  });

  const chat = await runWorkload(endpoint, tableName, async (newSaver) => {
    const threadId = randomUUID();
    let saver = newSaver();
    let status = await invokeAndRecord(buildChatGraph(saver) as unknown as Graph, saver, threadId, {
      turn: 0,
      messages: [],
    });
    let invocations = 1;
    while (status === "PAUSED_FOR_HUMAN") {
      saver = newSaver();
      status = await invokeAndRecord(
        buildChatGraph(saver) as unknown as Graph,
        saver,
        threadId,
        new Command({ resume: true }),
      );
      invocations += 1;
    }
    const final = await buildChatGraph(newSaver()).getState({
      configurable: { thread_id: threadId },
    });
    if (final.values.turn !== 30 || final.values.messages.length !== 30) {
      throw new Error(
        `chat ended at turn ${final.values.turn} with ${final.values.messages.length} messages`,
      );
    }
    return invocations;
  });

  const targets = {
    booking: { requests: 14, capacityUnits: 15 },
    chat: { requests: 120, capacityUnits: 300 },
  };
  const reference = {
    courseDesign: {
      booking: { requests: 20, capacityUnits: 21.5 },
      chat: { requests: 183, capacityUnits: 553 },
    },
    langgraphCheckpointAws: {
      booking: { requests: 48, capacityUnits: 41 },
      chat: { requests: 490, capacityUnits: 952 },
    },
  };
  const rows = [
    [
      "workload",
      "invocations",
      "requests",
      "target",
      "capacity units",
      "target",
      "items",
      "bytes",
      "by operation",
    ],
    ...(
      [
        ["booking", booking],
        ["chat", chat],
      ] as const
    ).map(([name, result]) => [
      name,
      String(result.invocations),
      String(result.requests),
      `<= ${targets[name].requests}`,
      result.capacityUnits.toFixed(1),
      `<= ${targets[name].capacityUnits}`,
      String(result.itemsStored),
      String(result.bytesStored),
      Object.entries(result.requestsByOperation)
        .map(
          ([operation, count]) =>
            `${operation} ${count} (${result.capacityByOperation[operation] ?? 0} CU)`,
        )
        .join(", "),
    ]),
  ];
  printTable(rows);
  console.log(
    "\nreference (DynamoDB Local 3.3.1): course design booking 20 req / 21.5 CU, chat 183 / 553; " +
      "langgraph-checkpoint-aws 1.2.2 booking 48 / 41, chat 490 / 952",
  );
  const codecs = await compareCodecs();
  console.log("\npayload codec on the chat's final state:\n");
  printTable([
    ["codec", "input bytes", "output bytes", "µs per call"],
    ...codecs.map((row) => [
      row.codec,
      String(row.inputBytes),
      String(row.outputBytes),
      row.microsPerCall.toFixed(0),
    ]),
  ]);
  const file = writeResults("dynamodb", { booking, chat, targets, reference, codecs });
  console.log(`written ${file}`);
}

export function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, column) =>
    Math.max(...rows.map((row) => (row[column] ?? "").length)),
  );
  const line = (row: string[]) =>
    `| ${row.map((cell, column) => cell.padEnd(widths[column]!)).join(" | ")} |`;
  console.log(line(rows[0]!));
  console.log(`|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`);
  for (const row of rows.slice(1)) console.log(line(row));
}
