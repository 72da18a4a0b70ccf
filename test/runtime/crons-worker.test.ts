import type { HandlerOptions } from "../../src/runtime/assembly";
import { createHandler } from "../../src/runtime/handler";
import { createWorkerHandler } from "../../src/runtime/worker";
import { TableClient } from "../../src/table/client";
import { CronItems } from "../../src/table/cron-items";
import { DUE_CRON_SHARDS } from "../../src/table/definition";
import { RECOVERY_SWEEP_KIND } from "../../src/shared/worker-events";
import { chatGraph } from "./graphs";
import { apiEvent, createTable, quietLogger, type TableHandle } from "./support";

const TENANT = "tenant-cron-worker";
const MINUTE = 60_000;

/**
 * The AWS fire path on DynamoDB Local: the worker function's handler given the event the module's EventBridge rule
 * sends every minute. The rule itself is a stand-in here (the test sends its event); the worker's clock is
 * controlled, so no test waits for a real minute.
 */
describe("crons fired by the worker's scheduled sweep (DynamoDB Local; EventBridge rule stand-in)", () => {
  let table: TableHandle;
  let options: HandlerOptions;

  beforeAll(async () => {
    table = await createTable();
    options = {
      assistants: { chat: chatGraph },
      tableName: table.tableName,
      dynamodbClient: table.client,
      logger: quietLogger,
      metrics: false,
    };
  });

  const sweepEvent = { kind: RECOVERY_SWEEP_KIND };
  const lambdaContext = { getRemainingTimeInMillis: () => 60_000 };

  it("fires a due cron once per fire, however many workers sweep at that minute (scheduler stand-in)", async () => {
    const api = createHandler(options);
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await api(
        apiEvent(method, path, {
          tenantId: TENANT,
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
      );
      return { status: response.statusCode, body: JSON.parse(response.body ?? "null") };
    };
    const thread = (await call("POST", "/threads", {})).body as { thread_id: string };
    const created = await call("POST", `/threads/${thread.thread_id}/runs/crons`, {
      assistant_id: "chat",
      schedule: "* * * * *",
      input: { messages: [{ role: "human", content: "tick" }] },
    });
    expect(created.status).toBe(200);
    const cron = created.body as { cron_id: string; next_run_date: string };
    const first = Date.parse(cron.next_run_date);

    let clock = first - 1;
    // The worker's crons on a client of their own, to count what the sweep and a fire send for the cron.
    const cronTable = new TableClient(table.client, table.tableName);
    const worker = createWorkerHandler({
      ...options,
      cronStore: new CronItems(cronTable),
      cronClock: () => clock,
    });
    expect((await worker(sweepEvent, lambdaContext)).crons).toEqual({ fired: 0, failed: 0 });
    // A sweep with nothing due: one Query per due-crons partition of the index, nothing else.
    expect(requestsBy(cronTable)).toEqual({ Query: DUE_CRON_SHARDS });

    clock = first;
    const before = cronTable.usage;
    expect((await worker(sweepEvent, lambdaContext)).crons).toEqual({ fired: 1, failed: 0 });
    // A fire's own cost on the cron: the sweep's queries, one read of the cron, its claim and its settle.
    expect(requestsBy(cronTable, before)).toEqual({
      Query: DUE_CRON_SHARDS,
      GetItem: 1,
      UpdateItem: 2,
    });
    const runs = async () =>
      (await call("GET", `/threads/${thread.thread_id}/runs`)).body as Array<{
        run_id: string;
        status: string;
        metadata: Record<string, unknown>;
      }>;
    // The run goes on in this process (no worker function to hand it to here): it ends in success.
    const deadline = Date.now() + 20_000;
    let [run] = await runs();
    while (run?.status !== "success" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      [run] = await runs();
    }
    expect(run).toMatchObject({
      status: "success",
      metadata: { cron_id: cron.cron_id, cron_scheduled_at: new Date(first).toISOString() },
    });
    // The rule's next event in the same minute: nothing more.
    expect((await worker(sweepEvent, lambdaContext)).crons).toEqual({ fired: 0, failed: 0 });

    // Two containers swept by overlapping events at the next minute: one fire between them.
    clock = first + MINUTE;
    const other = createWorkerHandler({ ...options, cronClock: () => clock });
    const results = await Promise.all([
      worker(sweepEvent, lambdaContext),
      other(sweepEvent, lambdaContext),
    ]);
    expect(results.reduce((sum, result) => sum + (result.crons?.fired ?? 0), 0)).toBe(1);
    expect((await runs()).map((listed) => listed.metadata.cron_scheduled_at)).toEqual([
      new Date(first + MINUTE).toISOString(),
      new Date(first).toISOString(),
    ]);

    // Deleted: the sweeps find nothing of it.
    expect((await call("DELETE", `/runs/crons/${cron.cron_id}`)).status).toBe(204);
    clock = first + 60 * MINUTE;
    expect((await worker(sweepEvent, lambdaContext)).crons).toEqual({ fired: 0, failed: 0 });
  }, 60_000);
});

/** Requests a table client sent since `since`, by operation. */
function requestsBy(client: TableClient, since?: TableClient["usage"]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const [operation, { requests }] of Object.entries(client.usage.byOperation)) {
    const earlier = since?.byOperation[operation]?.requests ?? 0;
    if (requests > earlier) counts[operation] = requests - earlier;
  }
  return counts;
}
