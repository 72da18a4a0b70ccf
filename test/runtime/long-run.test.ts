import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@langchain/langgraph-sdk";
import { deleteTestTable } from "../support/dynamodb";
import {
  buildLongGraph,
  LONG_RUN_CONFIG,
  readJournal,
  type LongValues,
} from "./fixtures/long-graph";
import { createTable, startTestServer, type TableHandle, type TestServer } from "./support";

const STEPS = 45;
const STEP_MS = 1_000;
const ALL_STEPS = Array.from({ length: STEPS }, (_, index) => index + 1);
/** The dev server answers a request that has not started its response by then with 504, as API Gateway does. */
const API_GATEWAY_TIMEOUT_MS = 30_000;

/**
 * A 45 s run, longer than API Gateway's 30 s, through the official @langchain/langgraph-sdk Client unchanged,
 * against the dev server on DynamoDB Local. No request can last the run: a join or a waited run answers before
 * API Gateway's limit, saying the run goes on, and the client joins again. The two tests run side by side.
 */
describe("a 45 s run through the SDK Client (dev server, DynamoDB Local)", () => {
  let table: TableHandle;
  let server: TestServer;
  let client: Client;
  let dir: string;
  /** One assistant per test, each journalling its steps to a file of its own. */
  const journalOf = (assistantId: string) => join(dir, `${assistantId}.log`);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "memory-table-long-run-"));
    table = await createTable();
    server = await startTestServer({
      assistants: {
        long_join: buildLongGraph(journalOf("long_join")),
        long_wait: buildLongGraph(journalOf("long_wait")),
      },
      tableName: table.tableName,
      dynamodbClient: table.client,
    });
    client = await server.client("tenant-long-run");
  });

  afterAll(async () => {
    await server?.close();
    if (table) {
      await deleteTestTable(table.client, table.tableName);
      table.client.destroy();
    }
    rmSync(dir, { recursive: true, force: true });
  });

  /** The steps that ended, in the order they did. */
  const endedSteps = (assistantId: string) => {
    const path = journalOf(assistantId);
    return existsSync(path)
      ? readJournal(readFileSync(path, "utf8"))
          .filter(({ event }) => event === "end")
          .map(({ step }) => step)
      : [];
  };

  it.concurrent(
    "runs.create + runs.join: the first join answers 408 before API Gateway's limit, the next one returns the values",
    async () => {
      const thread = await client.threads.create();
      const started = Date.now();
      const run = await client.runs.create(thread.thread_id, "long_join", {
        input: { steps: STEPS, stepMs: STEP_MS },
        config: LONG_RUN_CONFIG,
      });
      expect(run.status).toBe("pending");

      const firstJoin = Date.now();
      const timedOut = await client.runs.join(thread.thread_id, run.run_id).then(
        () => undefined,
        (error: unknown) => error as { status?: number; message?: string },
      );
      // The SDK raises the 408 (it never re-sends one); it came before the gateway's 504, not instead of it.
      expect(timedOut).toMatchObject({ status: 408 });
      expect(timedOut?.message).toMatch(/is still (running|pending): join it again/);
      expect(Date.now() - firstJoin).toBeGreaterThan(20_000);
      expect(Date.now() - firstJoin).toBeLessThan(API_GATEWAY_TIMEOUT_MS);
      expect(await client.runs.get(thread.thread_id, run.run_id)).toMatchObject({
        status: "running",
      });

      const values = (await joinUntilDone(client, thread.thread_id, run.run_id)) as LongValues;
      expect(values).toEqual({ steps: STEPS, stepMs: STEP_MS, done: ALL_STEPS });
      expect(Date.now() - started).toBeGreaterThan(STEPS * STEP_MS);
      expect(await client.runs.get(thread.thread_id, run.run_id)).toMatchObject({
        status: "success",
      });
      expect(await client.threads.get(thread.thread_id)).toMatchObject({ status: "idle" });
      expect((await client.threads.getState(thread.thread_id)).values).toEqual(values);
      expect(endedSteps("long_join")).toEqual(ALL_STEPS);
    },
    120_000,
  );

  it.concurrent(
    "runs.wait: the SDK raises TimeoutError naming the run before API Gateway's limit; runs.join then returns the values, each step run once",
    async () => {
      const thread = await client.threads.create();
      const started = Date.now();
      const waited = await client.runs
        .wait(thread.thread_id, "long_wait", {
          input: { steps: STEPS, stepMs: STEP_MS },
          config: LONG_RUN_CONFIG,
        })
        .then(
          () => undefined,
          (error: unknown) => error as Error,
        );
      expect(Date.now() - started).toBeLessThan(API_GATEWAY_TIMEOUT_MS);
      const [run] = await client.runs.list(thread.thread_id);
      expect(waited?.message).toBe(
        `TimeoutError: Run ${run!.run_id} continues in the background: join it (GET /threads/${thread.thread_id}/runs/${run!.run_id}/join)`,
      );

      const values = (await joinUntilDone(client, thread.thread_id, run!.run_id)) as LongValues;
      expect(values).toEqual({ steps: STEPS, stepMs: STEP_MS, done: ALL_STEPS });
      expect(Date.now() - started).toBeGreaterThan(STEPS * STEP_MS);
      expect(await client.runs.get(thread.thread_id, run!.run_id)).toMatchObject({
        status: "success",
      });
      // The request ran the run's first leg and handed the rest over to a next leg in this process: a step the
      // leg's deadline stopped mid-way (unless it fell between two steps) ran again there; no step ended twice.
      expect(endedSteps("long_wait")).toEqual(ALL_STEPS);
      const journal = readJournal(readFileSync(journalOf("long_wait"), "utf8"));
      expect(journal.filter(({ event }) => event === "abort").length).toBeLessThanOrEqual(1);
      expect(journal.filter(({ event }) => event === "start")).toHaveLength(
        STEPS + journal.filter(({ event }) => event === "abort").length,
      );
    },
    120_000,
  );
});

/** Joins until the run ends; a 408 (the request's time ran out first, the run goes on) is joined again. */
async function joinUntilDone(client: Client, threadId: string, runId: string): Promise<unknown> {
  for (let attempt = 0; attempt < 10; attempt += 1) {
    try {
      return await client.runs.join(threadId, runId);
    } catch (error) {
      if ((error as { status?: unknown }).status !== 408) throw error;
    }
  }
  throw new Error(`run ${runId} still not done after 10 joins`);
}
