import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import type { Client } from "@langchain/langgraph-sdk";
import { readDevGraphSchemas } from "../../src/dev/graph-schemas-at-start";
import type { SourceSchemasByGraph } from "../../src/runtime/graphs/graph-schemas";
import type { GraphFactory, HandlerGraph } from "../../src/runtime/types";
import { chat } from "./fixtures/annotation-graphs";
import { backendOptions, startTestServer, type TestServer } from "../runtime/support";

/**
 * The dev server's start after a graph edit: the graphs' TypeScript is read in a worker thread (seconds of
 * compiler CPU, no cache yet), and the server answers health, threads and runs meanwhile; the schemas route waits
 * for the reading and then answers the schemas read, never empty ones. What is asserted is the order of events
 * (which answer came before the reading ended), not a duration.
 */
const FIXTURES = join(__dirname, "fixtures", "annotation-graphs.ts");
const BASE_MESSAGE = "BaseMessage<MessageStructure<MessageToolSet>,MessageType>";

describe("dev server start: graph schemas read in a worker thread while the server answers", () => {
  const project = mkdtempSync(join(tmpdir(), "memory-table-schemas-start-"));
  const cacheDirectory = join(project, "cache");
  const events: string[] = [];
  let schemas: Promise<SourceSchemasByGraph>;
  let server: TestServer;
  let client: Client;

  beforeAll(async () => {
    const config = join(project, "langgraph.json");
    writeFileSync(config, JSON.stringify({ graphs: { chat: `${FIXTURES}:chat` } }));
    // As scripts/dev-server.ts does: the promise goes to the handler unawaited.
    schemas = readDevGraphSchemas(config, pino({ level: "silent" }), { cacheDirectory });
    void schemas.then(() => events.push("schemas read"));
    server = await startTestServer(
      {
        assistants: { chat: (async () => chat as unknown as HandlerGraph) as GraphFactory },
        graphSchemas: schemas,
        ...(await backendOptions("memory")),
      },
      // The schemas route answers once the whole reading is done: more than the dev server's default 30 s
      // (API Gateway's) when other suites load the machine, which is not what this test is about.
      { timeoutMs: 170_000 },
    );
    client = await server.client("tenant-schemas-start");
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await schemas?.catch(() => undefined);
    rmSync(project, { recursive: true, force: true });
  }, 120_000);

  it("answers health, threads and runs before the reading ends, and the schemas route after it with the schemas read", async () => {
    // Asked first, answered last: the schemas route waits for the reading.
    const schemasAnswer = client.assistants.getSchemas("chat").then((answer) => {
      events.push("schemas answered");
      return answer;
    });
    const health = await fetch(`${server.url}/ok`, {
      headers: { authorization: `Bearer ${await server.token("tenant-schemas-start")}` },
    });
    expect(health.status).toBe(200);
    events.push("health answered");
    const thread = await client.threads.create();
    events.push("thread created");
    const run = await client.runs.create(thread.thread_id, "chat", {
      input: { messages: [{ type: "human", content: "hi" }], turns: 1 },
    });
    expect(run.status).toBe("pending");
    events.push("run created");
    expect(events).toEqual(["health answered", "thread created", "run created"]);

    const answer = await schemasAnswer;
    expect(events).toEqual([
      "health answered",
      "thread created",
      "run created",
      "schemas read",
      "schemas answered",
    ]);
    expect(answer.state_schema).toMatchObject({
      type: "object",
      properties: {
        messages: { type: "array", items: { $ref: `#/definitions/${BASE_MESSAGE}` } },
        turns: { type: "number" },
      },
    });
    expect(answer.config_schema).toMatchObject({ properties: { model_name: { type: "string" } } });
    // The reading was not from a cache: it wrote one.
    expect(readdirSync(cacheDirectory).filter((name) => name.endsWith(".json"))).toHaveLength(1);
  }, 180_000);
});
