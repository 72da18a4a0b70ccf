import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RUN_JOB_KIND, type RunJobEvent } from "../../src/runtime/runs/dispatchers";
import { createHandler } from "../../src/runtime/handler";
import type { RunJob } from "../../src/runtime/runs/run-manager";
import { createWorkerHandler } from "../../src/runtime/worker";
import { localEndpoint } from "../support/dynamodb";
import { journalGraph } from "./fixtures/worker-graph";
import { apiEvent, createTable, quietLogger, type TableHandle } from "./support";

const TSX = join(__dirname, "../../node_modules/tsx/dist/cli.mjs");
const WORKER = join(__dirname, "fixtures/worker-process.ts");
const TENANT = "tenant-crash";

/**
 * A worker function killed in the middle of a run (SIGKILL: no cleanup, as a crash, a timeout or an out-of-memory
 * kill), then the job retried as Lambda retries a failed asynchronous invocation. The Lambda Invoke API has no
 * local engine: a stand-in records the jobs the API would send.
 */
describe("a worker killed mid-run (Lambda Invoke API stand-in)", () => {
  let table: TableHandle;
  let directory: string;
  const jobs: RunJob[] = [];

  beforeAll(async () => {
    table = await createTable();
  });

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), "memory-table-crash-"));
    jobs.length = 0;
  });

  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  const options = () => ({
    tableName: table.tableName,
    dynamodbClient: table.client,
    runLeaseMs: 2_000,
    runHeartbeatMs: 500,
    dispatcher: { dispatch: async (job: RunJob) => void jobs.push(job) },
    logger: quietLogger,
    metrics: false as const,
  });
  const journal = () =>
    existsSync(join(directory, "events.log"))
      ? readFileSync(join(directory, "events.log"), "utf8").trim().split("\n")
      : [];
  const event = (job: RunJob): RunJobEvent => ({ kind: RUN_JOB_KIND, ...job });

  it("leaves the run resumable: the retried job takes it over from its last checkpoint and it completes once", async () => {
    const api = createHandler({
      ...options(),
      assistants: { journal: journalGraph(directory, 0) },
    });
    const created = await api(
      apiEvent("POST", "/threads/crash-1/runs", {
        body: JSON.stringify({ assistant_id: "journal", input: {}, if_not_exists: "create" }),
        tenantId: TENANT,
      }),
    );
    expect(created.statusCode).toBe(200);
    const run = JSON.parse(created.body!) as { run_id: string };
    expect(jobs).toEqual([{ tenantId: TENANT, threadId: "crash-1", queuedRunId: run.run_id }]);

    // The worker takes the job and dies inside work_2.
    const worker = spawn(
      process.execPath,
      [TSX, WORKER, localEndpoint(), table.tableName, directory, JSON.stringify(event(jobs[0]!))],
      // Its own process group: tsx runs the script in a child process, and the kill must take both.
      { stdio: "ignore", detached: true },
    );
    await waitFor(() => journal().includes("start work_2"), 30_000);
    // With LangGraph's default (async) durability a step's checkpoint is written while the next step runs:
    // give it a moment, so the crash hits work_2 itself, after work_1's checkpoint is stored.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    process.kill(-worker.pid!, "SIGKILL");
    await new Promise((resolve) => worker.once("exit", resolve));
    const status = async () =>
      JSON.parse(
        (await api(apiEvent("GET", `/threads/crash-1/runs/${run.run_id}`, { tenantId: TENANT })))
          .body!,
      ) as { status: string };
    expect((await status()).status).toBe("running");

    // Lambda retries the invocation with the same event; the run's lease lapses 2 s after the kill.
    const retry = createWorkerHandler({
      ...options(),
      assistants: { journal: journalGraph(directory, 0) },
    });
    const started = Date.now();
    await retry(event(jobs[0]!), { getRemainingTimeInMillis: () => 60_000 });
    // A deadline check only, 10 times the lease: the retry takes the run over once the lease lapses, rather
    // than waiting out its own 60 s (the run's "success" below is what shows it ran).
    expect(Date.now() - started).toBeLessThan(20_000);

    expect((await status()).status).toBe("success");
    const state = JSON.parse(
      (await api(apiEvent("GET", "/threads/crash-1/state", { tenantId: TENANT }))).body!,
    ) as { values: { steps: string[] } };
    expect(state.values.steps).toEqual(["prepare", "work_1", "work_2"]);
    // Finished nodes never ran again; only the node the crash interrupted did.
    expect(journal()).toEqual([
      "start prepare",
      "end prepare",
      "start work_1",
      "end work_1",
      "start work_2",
      "start work_2",
      "end work_2",
    ]);
    const thread = JSON.parse(
      (await api(apiEvent("GET", "/threads/crash-1", { tenantId: TENANT }))).body!,
    ) as { status: string };
    expect(thread.status).toBe("idle");
  });

  it("records a job Lambda gave up on (its failure queue's record) as a failed run and frees the thread", async () => {
    const api = createHandler({
      ...options(),
      assistants: { journal: journalGraph(directory, 0) },
    });
    const created = await api(
      apiEvent("POST", "/threads/crash-2/runs", {
        body: JSON.stringify({ assistant_id: "journal", input: {}, if_not_exists: "create" }),
        tenantId: TENANT,
      }),
    );
    const run = JSON.parse(created.body!) as { run_id: string };
    const worker = spawn(
      process.execPath,
      [TSX, WORKER, localEndpoint(), table.tableName, directory, JSON.stringify(event(jobs[0]!))],
      // Its own process group: tsx runs the script in a child process, and the kill must take both.
      { stdio: "ignore", detached: true },
    );
    await waitFor(() => journal().includes("start work_2"), 30_000);
    process.kill(-worker.pid!, "SIGKILL");
    await new Promise((resolve) => worker.once("exit", resolve));

    // The destination record as the failure queue delivers it (an SQS message holding Lambda's record).
    const failures = createWorkerHandler({
      ...options(),
      assistants: { journal: journalGraph(directory, 0) },
    });
    await waitFor(async () => {
      const result = await failures(
        {
          Records: [
            {
              messageId: "m-1",
              body: JSON.stringify({
                requestContext: { condition: "RetriesExhausted" },
                requestPayload: event(jobs[0]!),
              }),
            },
          ],
        },
        { getRemainingTimeInMillis: () => 60_000 },
      );
      expect(result.batchItemFailures).toEqual([]);
      const record = JSON.parse(
        (await api(apiEvent("GET", `/threads/crash-2/runs/${run.run_id}`, { tenantId: TENANT })))
          .body!,
      ) as { status: string };
      return record.status === "error";
    }, 10_000);
    const thread = JSON.parse(
      (await api(apiEvent("GET", "/threads/crash-2", { tenantId: TENANT }))).body!,
    ) as { status: string };
    expect(thread.status).toBe("error");
    // The thread takes new runs again.
    const again = await api(
      apiEvent("POST", "/threads/crash-2/runs", {
        body: JSON.stringify({ assistant_id: "journal", input: {} }),
        tenantId: TENANT,
      }),
    );
    expect(again.statusCode).toBe(200);
  });
});

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number) {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
