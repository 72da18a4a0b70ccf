import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { parseRunJob, RUN_JOB_KIND } from "../../src/runtime/runs/dispatchers";
import { createHandler } from "../../src/runtime/handler";
import type { RunJob } from "../../src/runtime/runs/run-manager";
import { createWorkerHandler } from "../../src/runtime/worker";
import { InvalidEventError } from "../../src/shared/errors";
import { createLocalClient } from "../support/dynamodb";
import { journalGraph } from "./fixtures/worker-graph";
import { apiEvent, createTable, quietLogger, type TableHandle } from "./support";

const TENANT = "tenant-job";

/** The keys a client asked DynamoDB for, by operation (GetItem keys, BatchGetItem keys). */
function recordingClient(): { client: DynamoDBClient; reads: string[] } {
  const client = createLocalClient();
  const reads: string[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const operation = (context.commandName ?? "").replace(/Command$/, "");
      // Marshalled or not, depending on whether the document client has run yet.
      type Key = Record<string, string | { S?: string }>;
      const sortKeyOf = (key: Key) => {
        const value = key.sk;
        return typeof value === "string" ? value : value?.S;
      };
      const input = args.input as { Key?: Key; RequestItems?: Record<string, { Keys?: Key[] }> };
      const sortKeys = input.Key
        ? [sortKeyOf(input.Key)]
        : Object.values(input.RequestItems ?? {}).flatMap((request) =>
            (request.Keys ?? []).map(sortKeyOf),
          );
      if (operation === "GetItem" || operation === "BatchGetItem") {
        reads.push(`${operation} ${sortKeys.map((key) => key?.split("#")[0]).join(",")}`);
      }
      return next(args);
    },
    { step: "initialize", name: "recordReads" },
  );
  return { client, reads };
}

/**
 * A worker function's job for a queued run (the Lambda Invoke API has no local engine: a stand-in records the jobs
 * the API sends, and the test hands them to a worker handler with a client of its own, as a new container).
 */
describe("a worker's job names the queued run it was sent for (Lambda Invoke API stand-in)", () => {
  let table: TableHandle;
  let directory: string;
  const jobs: RunJob[] = [];

  beforeAll(async () => {
    table = await createTable();
  });
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), "memory-table-job-"));
    jobs.length = 0;
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  const options = (client: DynamoDBClient) => ({
    tableName: table.tableName,
    dynamodbClient: client,
    dispatcher: { dispatch: async (job: RunJob) => void jobs.push(job) },
    logger: quietLogger,
    metrics: false as const,
    assistants: { journal: journalGraph(directory, 0) },
  });
  const lambdaContext = { getRemainingTimeInMillis: () => 60_000 };

  it("reads the run with its thread record in one request, claims without reading again, and runs it once", async () => {
    const api = createHandler(options(table.client));
    const created = await api(
      apiEvent("POST", "/threads/job-1/runs", {
        body: JSON.stringify({ assistant_id: "journal", input: {}, if_not_exists: "create" }),
        tenantId: TENANT,
      }),
    );
    expect(created.statusCode).toBe(200);
    const run = JSON.parse(created.body!) as { run_id: string };
    expect(jobs).toEqual([{ tenantId: TENANT, threadId: "job-1", queuedRunId: run.run_id }]);

    const cold = recordingClient();
    const worker = createWorkerHandler(options(cold.client));
    await worker({ kind: RUN_JOB_KIND, ...jobs[0]! }, lambdaContext);
    // One read of both items (thread record "m", run "r"); no GetItem of either before or after the claim.
    expect(cold.reads).toEqual(["BatchGetItem m,r"]);

    const record = JSON.parse(
      (await api(apiEvent("GET", `/threads/job-1/runs/${run.run_id}`, { tenantId: TENANT }))).body!,
    ) as { status: string };
    expect(record.status).toBe("success");
    expect(
      readFileSync(join(directory, "events.log"), "utf8").match(/start prepare/g),
    ).toHaveLength(1);
  });

  it("treats the named run as a hint: a job whose run another job already ran runs nothing again", async () => {
    const api = createHandler(options(table.client));
    const created = await api(
      apiEvent("POST", "/threads/job-2/runs", {
        body: JSON.stringify({ assistant_id: "journal", input: {}, if_not_exists: "create" }),
        tenantId: TENANT,
      }),
    );
    const run = JSON.parse(created.body!) as { run_id: string };
    const job = { kind: RUN_JOB_KIND, ...jobs[0]! };
    await createWorkerHandler(options(createLocalClient()))(job, lambdaContext);
    // Lambda may deliver an asynchronous event twice: the second delivery finds the run ended.
    await createWorkerHandler(options(createLocalClient()))(job, lambdaContext);

    const record = JSON.parse(
      (await api(apiEvent("GET", `/threads/job-2/runs/${run.run_id}`, { tenantId: TENANT }))).body!,
    ) as { status: string };
    expect(record.status).toBe("success");
    expect(
      readFileSync(join(directory, "events.log"), "utf8").match(/start prepare/g),
    ).toHaveLength(1);
  });

  it("refuses a job whose queued run id is not a string, before anything runs", () => {
    expect(() =>
      parseRunJob({ kind: RUN_JOB_KIND, tenantId: "t", threadId: "x", queuedRunId: 7 }),
    ).toThrow(InvalidEventError);
    expect(
      parseRunJob({ kind: RUN_JOB_KIND, tenantId: "t", threadId: "x", queuedRunId: "r" }),
    ).toEqual({ tenantId: "t", threadId: "x", queuedRunId: "r" });
  });
});
