import { ScanCommand } from "@aws-sdk/client-dynamodb";
import { createHandler, type ApiHandler } from "../../src/runtime/handler";
import { apiEvent, bookingAssistants, createTable, quietLogger, type TableHandle } from "./support";

interface Case {
  name: string;
  method: string;
  path: string;
  body?: string;
  tenantId?: string | null;
  status: number;
  detail?: RegExp;
}

const run = (thread: string, payload: unknown) => ({
  method: "POST",
  path: `/threads/${thread}/runs/wait`,
  body: JSON.stringify(payload),
});
const invoke = (payload: unknown) => ({
  method: "POST",
  path: "/invoke",
  body: JSON.stringify(payload),
});

// Every input rule of the runtime; each request must be answered before anything is written.
const CASES: Case[] = [
  {
    name: "malformed JSON (simple)",
    method: "POST",
    path: "/invoke",
    body: "{not json",
    status: 400,
    detail: /Invalid body: expected JSON/,
  },
  {
    name: "malformed JSON (SDK)",
    method: "POST",
    path: "/threads/paused/runs/wait",
    body: '{"input":',
    status: 400,
  },
  {
    name: "body is an array",
    method: "POST",
    path: "/invoke",
    body: "[]",
    status: 400,
    detail: /expected a JSON object, got an array/,
  },
  {
    name: "body over the limit",
    ...invoke({ thread_id: "big", input: { blob: "x".repeat(5000) } }),
    status: 413,
    detail: /at most 4096 bytes/,
  },
  {
    name: "unknown route",
    method: "GET",
    path: "/nope",
    status: 404,
    detail: /GET \/nope not implemented/,
  },
  {
    name: "unknown run route",
    ...run("paused", {}),
    path: "/threads/paused/teleport",
    status: 404,
  },
  { name: "wrong method", method: "GET", path: "/invoke", status: 405 },
  { name: "wrong method on a thread", method: "PUT", path: "/threads/paused", status: 405 },
  {
    name: "no tenant claim",
    ...invoke({ thread_id: "t", input: {} }),
    tenantId: null,
    status: 401,
  },
  {
    name: "tenant claim with #",
    ...invoke({ thread_id: "t", input: {} }),
    tenantId: "a#b",
    status: 403,
    detail: /Invalid tenant id/,
  },
  {
    name: "missing thread id (simple)",
    ...invoke({ input: {} }),
    status: 400,
    detail:
      /Invalid thread_id: expected a string, got nothing|Invalid thread_id: expected a string/,
  },
  {
    name: "thread id not a string (simple)",
    ...invoke({ thread_id: 7, input: {} }),
    status: 400,
    detail: /Invalid thread_id: expected a string, got a number/,
  },
  {
    name: "thread id too long (simple)",
    ...invoke({ thread_id: "x".repeat(300), input: {} }),
    status: 400,
    detail: /Invalid thread_id: expected at most 256/,
  },
  {
    name: "thread id with control characters (simple)",
    ...invoke({ thread_id: "a\u0001b", input: {} }),
    status: 400,
  },
  {
    name: "invalid thread id (SDK)",
    ...run("a%01b", { assistant_id: "booking", input: {} }),
    status: 422,
    detail: /Invalid thread_id/,
  },
  {
    name: "too long thread id (SDK state)",
    method: "GET",
    path: `/threads/${"x".repeat(300)}/state`,
    status: 422,
  },
  {
    name: "both input and resume (simple)",
    ...invoke({ thread_id: "paused", input: {}, resume: { approve: true } }),
    status: 400,
    detail: /exactly one of input and resume, got both/,
  },
  {
    name: "neither input nor resume (simple)",
    ...invoke({ thread_id: "paused" }),
    status: 400,
    detail: /got neither/,
  },
  {
    name: "unknown multitask_strategy",
    ...run("paused", { assistant_id: "booking", input: {}, multitask_strategy: "sideways" }),
    status: 422,
    detail: /Invalid multitask_strategy/,
  },
  {
    name: "unsupported if_not_exists",
    ...run("paused", { assistant_id: "booking", input: {}, if_not_exists: "maybe" }),
    status: 422,
  },
  {
    name: "unknown command key",
    ...run("paused", { assistant_id: "booking", command: { jump: "finalize" } }),
    status: 422,
    detail: /Invalid command: expected resume, update or goto, got jump/,
  },
  {
    name: "command goto not a node name",
    ...run("paused", { assistant_id: "booking", command: { goto: 5 } }),
    status: 422,
    detail: /Invalid command.goto/,
  },
  {
    name: "unknown assistant",
    ...run("paused", { assistant_id: "nope", input: {} }),
    status: 404,
    detail: /No assistant found for "nope"/,
  },
  {
    name: "assistant id not a string",
    ...run("paused", { assistant_id: 5, input: {} }),
    status: 422,
  },
  {
    name: "missing thread (SDK run)",
    ...run("missing", { assistant_id: "booking", input: {} }),
    status: 404,
  },
  {
    name: "resume of a missing thread (simple)",
    ...invoke({ thread_id: "missing", resume: {} }),
    status: 404,
  },
  {
    name: "resume naming an interrupt that is not pending (SDK)",
    ...run("paused", {
      assistant_id: "booking",
      command: { resume: { "0123456789abcdef0123456789abcdef": { approve: true } } },
    }),
    status: 409,
    detail: /interrupt 0123456789abcdef0123456789abcdef is not pending/,
  },
  {
    name: "re-sent start on a paused thread (simple)",
    ...invoke({ thread_id: "paused", input: { request: "x" } }),
    status: 409,
    detail: /resume it .* or delete it/,
  },
  ...(
    [
      ["interrupt_before", 5, /Invalid interrupt_before: expected "\*" or a list of node names/],
      ["interrupt_after", ["finalize", 3], /Invalid interrupt_after/],
      ["checkpoint_id", 7, /Invalid checkpoint_id/],
      ["stream_mode", ["values", "telepathy"], /Invalid stream_mode/],
      ["webhook", "http://example.com/hook", /Invalid webhook/],
      ["on_completion", "later", /Invalid on_completion/],
      ["after_seconds", -1, /Invalid after_seconds: expected a number from 0 to 600, got -1/],
      ["durability", "forever", /Invalid durability/],
      ["config", { recursion_limit: 0 }, /Invalid config.recursion_limit/],
    ] as const
  ).map(([field, value, detail]): Case => ({
    name: `invalid run field ${field}`,
    ...run("paused", { assistant_id: "booking", input: {}, [field]: value }),
    status: 422,
    detail,
  })),
  {
    name: "invalid inbox status",
    method: "POST",
    path: "/threads/search",
    body: '{"status":"sleeping"}',
    status: 422,
    detail: /Invalid status/,
  },
  {
    name: "invalid inbox limit",
    method: "POST",
    path: "/threads/search",
    body: '{"limit":0}',
    status: 422,
    detail: /Invalid limit/,
  },
  {
    name: "inbox limit over 1000",
    method: "POST",
    path: "/threads/search",
    body: '{"status":"interrupted","limit":1001}',
    status: 422,
    detail: /Invalid limit: expected an integer from 1 to 1000, got 1001/,
  },
  {
    name: "inbox offset over 10000",
    method: "POST",
    path: "/threads/search",
    body: '{"offset":10001}',
    status: 422,
    detail: /Invalid offset: expected an integer from 0 to 10000, got 10001/,
  },
  {
    name: "assistant search limit over 1000",
    method: "POST",
    path: "/assistants/search",
    body: '{"limit":1001}',
    status: 422,
  },
  {
    name: "invalid thread metadata",
    method: "POST",
    path: "/threads",
    body: '{"metadata":[1]}',
    status: 422,
  },
  {
    name: "existing thread with if_exists raise",
    method: "POST",
    path: "/threads",
    body: '{"thread_id":"paused"}',
    status: 409,
  },
  {
    name: "invalid history limit",
    method: "POST",
    path: "/threads/paused/history",
    body: '{"limit":"ten"}',
    status: 422,
  },
];

describe("bad input is rejected before anything is written", () => {
  let table: TableHandle;
  let handler: ApiHandler;

  const snapshot = async () => {
    const result = await table.client.send(
      new ScanCommand({ TableName: table.tableName, ConsistentRead: true }),
    );
    return JSON.stringify(
      (result.Items ?? []).sort((a, b) =>
        `${a.pk?.S}/${a.sk?.S}`.localeCompare(`${b.pk?.S}/${b.sk?.S}`),
      ),
    );
  };

  beforeAll(async () => {
    table = await createTable();
    handler = createHandler({
      assistants: bookingAssistants(),
      tableName: table.tableName,
      dynamodbClient: table.client,
      maxBodyBytes: 4096,
      logger: quietLogger,
      metrics: false,
    });
    const paused = await handler(
      apiEvent("POST", "/invoke", {
        body: JSON.stringify({ thread_id: "paused", input: { request: "x" } }),
      }),
    );
    expect(paused.statusCode).toBe(202);
  });

  it.each(CASES)("$name -> $status", async (testCase) => {
    const before = await snapshot();
    const result = await handler(
      apiEvent(testCase.method, testCase.path, {
        body: testCase.body,
        tenantId: testCase.tenantId,
      }),
    );
    expect(result.statusCode).toBe(testCase.status);
    expect(result.headers["content-type"]).toBe("application/json");
    const body = JSON.parse(result.body!) as { detail: string };
    expect(typeof body.detail).toBe("string");
    if (testCase.detail) expect(body.detail).toMatch(testCase.detail);
    expect(await snapshot()).toBe(before);
  });

  it("routes a named stage's paths like the $default stage's", async () => {
    const event = apiEvent("GET", "/prod/threads/paused/status");
    event.requestContext.stage = "prod";
    const result = await handler(event);
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body!).status).toBe("PAUSED_FOR_HUMAN");
  });

  it("answers 405 with the allowed methods", async () => {
    const result = await handler(apiEvent("GET", "/invoke"));
    expect(result.headers.allow).toBe("POST");
  });
});
