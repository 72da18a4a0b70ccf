import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ownerOnly } from "../../src/runtime/auth/owner-only";
import { createHandler, type ApiHandler } from "../../src/runtime/handler";
import type { GraphFactory } from "../../src/runtime/types";
import { createLocalClient, createTestTable } from "../support/dynamodb";
import { apiEvent, quietLogger } from "./support";

const TENANT = "tenant-cost";

const echo: GraphFactory = ({ checkpointer }) =>
  new StateGraph(Annotation.Root({ text: Annotation<string>() }))
    .addNode("shout", (state) => ({ text: `${state.text}!` }))
    .addEdge(START, "shout")
    .addEdge("shout", END)
    .compile({ checkpointer });

/** A DynamoDB Local client that counts the requests sent through it. */
function countingClient(): { client: DynamoDBClient; count: () => number } {
  const client = createLocalClient();
  let sent = 0;
  client.middlewareStack.add(
    (next) => async (args) => {
      sent += 1;
      return next(args);
    },
    { step: "initialize", name: "countRequests" },
  );
  return { client, count: () => sent };
}

/**
 * What the auth handlers cost in DynamoDB requests, on DynamoDB Local: the same requests through a handler with
 * AUTH_POLICY's owner-only policy and one without, counted per route. A filter is applied to the records a route
 * reads anyway; a change (update, delete, state update, a new run) or a read by run id checks its thread first.
 */
describe("requests the auth handlers add, per route (DynamoDB Local)", () => {
  const routes: Array<[string, (threadId: string, runId: string) => [string, string, unknown?]]> = [
    ["GET thread", (t) => ["GET", `/threads/${t}`]],
    ["PATCH thread", (t) => ["PATCH", `/threads/${t}`, { metadata: { x: 1 } }]],
    ["POST state", (t) => ["POST", `/threads/${t}/state`, { values: { text: "s" } }]],
    ["GET state", (t) => ["GET", `/threads/${t}/state`]],
    ["GET runs", (t) => ["GET", `/threads/${t}/runs`]],
    ["GET run", (t, r) => ["GET", `/threads/${t}/runs/${r}`]],
    [
      "POST runs/wait",
      (t) => ["POST", `/threads/${t}/runs/wait`, { assistant_id: "echo", input: { text: "b" } }],
    ],
    ["POST threads/search", () => ["POST", "/threads/search", { limit: 10 }]],
    [
      "PUT store item",
      () => ["PUT", "/store/items", { namespace: ["alice"], key: "k", value: { v: 1 } }],
    ],
  ];

  async function measure(auth: boolean): Promise<Record<string, number>> {
    const { client, count } = countingClient();
    const tableName = await createTestTable(client);
    const handler: ApiHandler = createHandler({
      assistants: { echo },
      tableName,
      dynamodbClient: client,
      ...(auth ? { auth: ownerOnly } : {}),
      logger: quietLogger,
      metrics: false,
    });
    const claims = { "custom:tenant_id": TENANT, sub: "alice" };
    const send = async (method: string, path: string, body?: unknown) => {
      const result = await handler(
        apiEvent(method, path, {
          claims,
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }),
      );
      expect(result.statusCode).toBeLessThan(300);
      return JSON.parse(result.body || "null") as Record<string, unknown>;
    };
    const thread = (await send("POST", "/threads", {})).thread_id as string;
    await send("POST", `/threads/${thread}/runs/wait`, {
      assistant_id: "echo",
      input: { text: "a" },
    });
    const runs = (await send("GET", `/threads/${thread}/runs`)) as unknown as Array<{
      run_id: string;
    }>;
    const runId = runs[0]!.run_id;
    const counts: Record<string, number> = {};
    for (const [name, request] of routes) {
      const before = count();
      await send(...request(thread, runId));
      counts[name] = count() - before;
    }
    return counts;
  }

  it("adds at most one read per route, none where the route reads the thread anyway", async () => {
    const plain = await measure(false);
    const authorized = await measure(true);
    const added = Object.fromEntries(
      Object.keys(plain).map((name) => [name, authorized[name]! - plain[name]!]),
    );
    process.stdout.write(
      `auth handlers' added DynamoDB requests per route: ${JSON.stringify(added)} (without: ${JSON.stringify(plain)})\n`,
    );
    expect(added).toEqual({
      "GET thread": 0,
      "PATCH thread": 1,
      "POST state": 1,
      "GET state": 0,
      "GET runs": 0,
      "GET run": 1,
      "POST runs/wait": 1,
      "POST threads/search": 0,
      "PUT store item": 0,
    });
  });
});
