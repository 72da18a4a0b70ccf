import { mkdtempSync, readFileSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { Client } from "@langchain/langgraph-sdk";
import { createBearerVerifier, loadDevKeys, signDevToken, type DevKeys } from "../../src/dev/auth";
import { RUN_JOB_KIND } from "../../src/runtime/runs/dispatchers";
import { RECOVERY_SWEEP_KIND } from "../../src/shared/worker-events";
import { TableClient } from "../../src/table/client";
import { CronItems } from "../../src/table/cron-items";
import { IMAGE_HANDLERS } from "../../src/runtime/environment";
import {
  createLocalClient,
  createTestTable,
  deleteTestTable,
  localEndpoint,
} from "../support/dynamodb";
import { LONG_RUN_CONFIG, readJournal, type LongValues } from "../runtime/fixtures/long-graph";
import {
  LambdaFunctionStandIn,
  LambdaInvokeApiStandIn,
  type FunctionOutcome,
} from "./lambda-invoke-stand-in";
import { startApiGatewayStandIn } from "./api-gateway-stand-in";
import { imageNodeBinary, missingImageNode } from "./ric-process";
import { bundleGraphModule, prepareTaskRoot, type TaskRoot } from "./task-root";

/**
 * Background runs on the image, end to end, with the official SDK Client unchanged: the built image tree run by
 * aws-lambda-ric on Node 22 twice, as the API function (`index.handler`) and as the worker (`worker.handler`),
 * on DynamoDB Local. What has no local engine is stood in for, and named so: API Gateway's HTTP API (JWT
 * authorizer, payload 2.0, 30 s), the Lambda Invoke API the API function hands jobs to, and each function's
 * Runtime API.
 */
const node = imageNodeBinary();
if (!node) console.log(`SKIP: background image end-to-end tests: ${missingImageNode()}`);
const describeWithImageNode = node ? describe : describe.skip;

const WORKER = "memory-table-worker";
const TENANT = "acme";
/** API Gateway's integration limit, and the API function's timeout the module sets under it. */
const API_GATEWAY_TIMEOUT_MS = 30_000;
const API_FUNCTION_TIMEOUT_MS = 29_000;

describeWithImageNode(
  "background runs on the image: SDK Client → API Gateway stand-in → index.handler → Lambda Invoke API stand-in → worker.handler (ric on Node 22 behind Runtime API stand-ins, DynamoDB Local)",
  () => {
    let buildDir: string;
    let taskRoot: TaskRoot;
    let keyDir: string;
    let keys: DevKeys;
    let dynamodb: DynamoDBClient;

    beforeAll(async () => {
      // A build folder of its own: other image tests build the default one, maybe at the same time.
      buildDir = mkdtempSync(join(tmpdir(), "memory-table-image-build-"));
      taskRoot = await prepareTaskRoot(join(buildDir, "image"));
      await bundleGraphModule(
        join(__dirname, "fixtures", "long-graph-module.ts"),
        taskRoot.dir,
        "graphs/long-graph.mjs",
      );
      keyDir = mkdtempSync(join(tmpdir(), "memory-table-keys-"));
      keys = await loadDevKeys(keyDir);
      dynamodb = createLocalClient();
    }, 120_000);

    afterAll(async () => {
      dynamodb?.destroy();
      taskRoot?.remove();
      for (const dir of [buildDir, keyDir]) if (dir) rmSync(dir, { recursive: true, force: true });
    });

    /** The two functions of one deployment, the stand-ins between them, and the journal of its graph's steps. */
    interface Deployment {
      /**
       * A table of its own: a recovery sweep takes over any stalled run of its table, so deployments running at
       * once on one table would finish each other's runs (whose steps then land in the other's journal).
       */
      tableName: string;
      api: LambdaFunctionStandIn;
      worker: LambdaFunctionStandIn;
      invokeApi: LambdaInvokeApiStandIn;
      gatewayUrl: string;
      client(tenantId: string): Promise<Client>;
      journal(): ReturnType<typeof readJournal>;
      /** Both functions' output, for a failure's message. */
      output(): string;
      stop(): Promise<void>;
    }

    async function deploy(options: {
      apiTimeoutMs: number;
      workerTimeoutMs: number;
    }): Promise<Deployment> {
      const dir = mkdtempSync(join(tmpdir(), "memory-table-background-"));
      const tableName = await createTestTable(dynamodb, "memory-table-background");
      const journalPath = join(dir, "journal.log");
      const invokeApi = await LambdaInvokeApiStandIn.start();
      const env = {
        TABLE_NAME: tableName,
        DYNAMODB_ENDPOINT: localEndpoint(),
        GRAPH_MODULE: "graphs/long-graph.mjs",
        LONG_GRAPH_JOURNAL: journalPath,
        LOG_LEVEL: "warn",
        // What the module gives both functions: the worker's name (the worker's own, for its next legs).
        WORKER_FUNCTION_NAME: WORKER,
        // The AWS SDK's service-specific endpoint: the image's LambdaClient reaches the stand-in through it.
        AWS_ENDPOINT_URL_LAMBDA: invokeApi.endpoint,
      };
      const api = new LambdaFunctionStandIn({
        name: "memory-table-api",
        node: node!,
        taskRoot: taskRoot.dir,
        handler: IMAGE_HANDLERS.api,
        env,
        timeoutMs: options.apiTimeoutMs,
      });
      const worker = new LambdaFunctionStandIn({
        name: WORKER,
        node: node!,
        taskRoot: taskRoot.dir,
        handler: IMAGE_HANDLERS.worker,
        env,
        timeoutMs: options.workerTimeoutMs,
      });
      invokeApi.serve(worker);
      const gateway = await startApiGatewayStandIn({
        integration: api,
        authorizer: { kind: "jwt", verify: createBearerVerifier(keys) },
        timeoutMs: API_GATEWAY_TIMEOUT_MS,
      });
      return {
        tableName,
        api,
        worker,
        invokeApi,
        gatewayUrl: gateway.url,
        async client(tenantId) {
          return new Client({
            apiUrl: gateway.url,
            apiKey: null,
            defaultHeaders: {
              Authorization: `Bearer ${await signDevToken(keys, { tenantId })}`,
            },
            // No retries: a failed request is the test's failure, not something the SDK papers over.
            callerOptions: { maxRetries: 0 },
          });
        },
        journal: () =>
          existsSync(journalPath) ? readJournal(readFileSync(journalPath, "utf8")) : [],
        output: () => `${api.output()}\n${worker.output()}`,
        async stop() {
          await gateway.close();
          await invokeApi.stop();
          await Promise.all([api.stop(), worker.stop()]);
          await deleteTestTable(dynamodb, tableName);
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }

    /** Runs `test` on a fresh deployment; on failure, the functions' output joins the error. */
    async function withDeployment(
      options: Parameters<typeof deploy>[0],
      test: (deployment: Deployment) => Promise<void>,
    ): Promise<void> {
      const deployment = await deploy(options);
      try {
        await test(deployment);
      } catch (error) {
        (error as Error).message += `\n\nfunction output:\n${deployment.output()}`;
        throw error;
      } finally {
        await deployment.stop();
      }
    }

    // Concurrent: each test has its own functions and stand-ins, and the long ones mostly wait.
    it.concurrent("serves the SDK's client.store from the image, each tenant's items its own", () =>
      withDeployment(
        { apiTimeoutMs: API_FUNCTION_TIMEOUT_MS, workerTimeoutMs: 60_000 },
        async (deployment) => {
          const alice = await deployment.client("store-alice");
          const bob = await deployment.client("store-bob");
          const namespace = ["preferences", "user-1"];
          await alice.store.putItem(namespace, "tone", { tone: "brief" });
          expect((await alice.store.getItem(namespace, "tone"))?.value).toEqual({ tone: "brief" });
          const found = await alice.store.searchItems(["preferences"], {
            filter: { tone: "brief" },
          });
          expect(found.items.map((item) => [item.namespace, item.key])).toEqual([
            [namespace, "tone"],
          ]);
          expect(
            (await alice.store.listNamespaces({ prefix: ["preferences"] })).namespaces,
          ).toEqual([namespace]);

          // The same namespace and key under another tenant: nothing to see, and a delete removes nothing.
          expect(await bob.store.getItem(namespace, "tone")).toBeNull();
          expect((await bob.store.searchItems(["preferences"])).items).toEqual([]);
          expect((await bob.store.listNamespaces()).namespaces).toEqual([]);
          await bob.store.deleteItem(namespace, "tone");
          expect((await alice.store.getItem(namespace, "tone"))?.value).toEqual({ tone: "brief" });

          await alice.store.deleteItem(namespace, "tone");
          expect(await alice.store.getItem(namespace, "tone")).toBeNull();
        },
      ),
    );

    it.concurrent(
      "runs.create + runs.join: the API function sends the job through the Lambda Invoke API stand-in (Event) and the worker runs it",
      () =>
        withDeployment(
          { apiTimeoutMs: API_FUNCTION_TIMEOUT_MS, workerTimeoutMs: 60_000 },
          async (deployment) => {
            const client = await deployment.client(TENANT);
            const thread = await client.threads.create();
            const run = await client.runs.create(thread.thread_id, "agent", {
              input: { steps: 3, stepMs: 200 },
              config: LONG_RUN_CONFIG,
            });
            expect(run.status).toBe("pending");
            const values = (await client.runs.join(
              thread.thread_id,
              run.run_id,
            )) as unknown as LongValues;
            expect(values).toEqual({ steps: 3, stepMs: 200, done: [1, 2, 3] });
            expect(await client.runs.get(thread.thread_id, run.run_id)).toMatchObject({
              status: "success",
            });

            await deployment.invokeApi.drain();
            // One asynchronous invocation of the worker, with the thread's job, run to its end by the worker.
            expect(deployment.invokeApi.requests).toEqual([
              {
                functionName: WORKER,
                invocationType: "Event",
                // The run it was queued for: the worker reads it with the thread record in one request.
                payload: {
                  kind: RUN_JOB_KIND,
                  tenantId: TENANT,
                  threadId: thread.thread_id,
                  queuedRunId: run.run_id,
                },
                outcome: workerDone,
              },
            ]);
            expect(deployment.worker.invocations).toHaveLength(1);
            // Every step ran in the worker's process, none in the API function's.
            const journal = deployment.journal();
            expect(journal.filter(({ event }) => event === "end").map(({ step }) => step)).toEqual([
              1, 2, 3,
            ]);
            expect(new Set(journal.map(({ pid }) => pid))).toEqual(
              new Set([deployment.worker.invocations[0]!.pid]),
            );
            expect(deployment.api.pids).not.toContain(deployment.worker.invocations[0]!.pid);
          },
        ),
      60_000,
    );

    it.concurrent(
      "runs.wait past the API function's 10 s deadline: its first leg hands over through the Lambda Invoke API stand-in and the worker completes the run, each step once",
      () =>
        withDeployment(
          // A 10 s invocation deadline, less the default 3 s margin and the 2 s the answer keeps: a 5 s leg.
          { apiTimeoutMs: 10_000, workerTimeoutMs: 60_000 },
          async (deployment) => {
            const steps = 10;
            const all = Array.from({ length: steps }, (_, index) => index + 1);
            const client = await deployment.client(TENANT);
            const thread = await client.threads.create();
            // The SDK raises the answer's TimeoutError: the run goes on in the background.
            const waited = await client.runs
              .wait(thread.thread_id, "agent", {
                input: { steps, stepMs: 1_000 },
                config: LONG_RUN_CONFIG,
              })
              .then(
                () => undefined,
                (error: unknown) => error as Error,
              );
            const [run] = await client.runs.list(thread.thread_id);
            expect(waited?.message).toBe(
              `TimeoutError: Run ${run!.run_id} continues in the background: join it (GET /threads/${thread.thread_id}/runs/${run!.run_id}/join)`,
            );
            // The API function answered before its deadline (Lambda did not have to end it).
            const waitInvocation = deployment.api.invocations.find(({ event }) =>
              (event as { rawPath?: string }).rawPath?.endsWith("/runs/wait"),
            );
            expect(waitInvocation?.outcome).toMatchObject({ kind: "response" });
            expect(waitInvocation!.ended! - waitInvocation!.started).toBeLessThan(10_000);
            const { values, timeouts } = await joinUntilDone(client, thread.thread_id, run!.run_id);
            expect(values).toEqual({ steps, stepMs: 1_000, done: all });
            expect(timeouts).toBeGreaterThan(0);
            expect(await client.runs.get(thread.thread_id, run!.run_id)).toMatchObject({
              status: "success",
            });

            await deployment.invokeApi.drain();
            // The API function's leg handed the run itself over (its run id), once.
            expect(deployment.invokeApi.requests).toEqual([
              {
                functionName: WORKER,
                invocationType: "Event",
                payload: {
                  kind: RUN_JOB_KIND,
                  tenantId: TENANT,
                  threadId: thread.thread_id,
                  runId: run!.run_id,
                },
                outcome: workerDone,
              },
            ]);
            const workerPids = new Set(deployment.worker.pids);
            const apiPids = new Set(deployment.api.pids);
            const ends = deployment.journal().filter(({ event }) => event === "end");
            // Each step ended once: the first ones in the API function, the rest in the worker.
            expect(ends.map(({ step }) => step)).toEqual(all);
            const inApi = ends.filter(({ pid }) => apiPids.has(pid)).length;
            expect(inApi).toBeGreaterThan(0);
            expect(inApi).toBeLessThan(steps);
            expect(ends.slice(0, inApi).every(({ pid }) => apiPids.has(pid))).toBe(true);
            expect(ends.slice(inApi).every(({ pid }) => workerPids.has(pid))).toBe(true);
          },
        ),
      60_000,
    );

    it.concurrent(
      "a 45 s run (longer than API Gateway's 30 s and than one worker leg) completes through runs.create + runs.join, over two worker legs, each step once",
      () =>
        withDeployment(
          // A 45 s worker timeout gives legs of 35 s (the worker keeps 10 s to hand over): the run needs two.
          { apiTimeoutMs: API_FUNCTION_TIMEOUT_MS, workerTimeoutMs: 45_000 },
          async (deployment) => {
            const client = await deployment.client(TENANT);
            const thread = await client.threads.create();
            const steps = 45;
            const started = Date.now();
            const run = await client.runs.create(thread.thread_id, "agent", {
              input: { steps, stepMs: 1_000 },
              config: LONG_RUN_CONFIG,
            });
            const { values, timeouts } = await joinUntilDone(client, thread.thread_id, run.run_id);
            const elapsed = Date.now() - started;
            const all = Array.from({ length: steps }, (_, index) => index + 1);
            expect(values).toEqual({ steps, stepMs: 1_000, done: all });
            expect(elapsed).toBeGreaterThan(45_000);
            // Each join waited until API Gateway's limit was near, answered 408, and was sent again.
            expect(timeouts).toBeGreaterThan(0);
            expect(await client.runs.get(thread.thread_id, run.run_id)).toMatchObject({
              status: "success",
            });
            expect(await client.threads.get(thread.thread_id)).toMatchObject({ status: "idle" });

            await deployment.invokeApi.drain();
            // The thread's job, then the run's next legs, handed over by the worker to itself: a job naming the
            // run, or, when a loaded machine let a leg's lease lapse before its handover, the thread's job that
            // takes the stalled run over (its recovery path; the steps below still end once each).
            const legs = deployment.worker.invocations;
            expect(legs.length).toBeGreaterThanOrEqual(2);
            const threadJob = { kind: RUN_JOB_KIND, tenantId: TENANT, threadId: thread.thread_id };
            const [first, ...next] = deployment.invokeApi.requests.map(({ payload }) => payload);
            expect(first).toEqual({ ...threadJob, queuedRunId: run.run_id });
            expect(next).toHaveLength(legs.length - 1);
            for (const job of next) {
              expect([{ ...threadJob, runId: run.run_id }, threadJob]).toContainEqual(job);
            }
            for (const { outcome } of deployment.invokeApi.requests) {
              expect(outcome).toEqual(workerDone);
            }
            // Each step ended once; every leg did part of the work, and ended before its deadline.
            const ends = deployment.journal().filter(({ event }) => event === "end");
            expect(ends.map(({ step }) => step)).toEqual(all);
            for (const leg of legs) {
              expect(ends.some(({ pid }) => pid === leg.pid)).toBe(true);
              expect(leg.ended! - leg.started).toBeLessThan(45_000);
            }
          },
        ),
      120_000,
    );

    it.concurrent(
      "a cron fires through worker.handler on the scheduled sweep event (EventBridge rule stand-in): its run goes to the worker through the Lambda Invoke API stand-in, once",
      () =>
        withDeployment(
          { apiTimeoutMs: API_FUNCTION_TIMEOUT_MS, workerTimeoutMs: 60_000 },
          async (deployment) => {
            const client = await deployment.client("cron-tenant");
            const thread = await client.threads.create();
            const cron = await client.crons.createForThread(thread.thread_id, "agent", {
              schedule: "* * * * *",
              input: { steps: 2, stepMs: 50 },
              config: LONG_RUN_CONFIG,
            });
            // The image's clock is the real one: its fire of two minutes ago was missed (the rule was down), so
            // it is due now. Written as a sweep would, through the table's cron items.
            const crons = new CronItems(new TableClient(dynamodb, deployment.tableName));
            const stored = (await crons.get("cron-tenant", cron.cron_id))!;
            const missed = Date.parse(cron.next_run_date!) - 2 * 60_000;
            await crons.save(
              { ...stored, nextRunAt: missed, dueAt: missed, revision: stored.revision + 1 },
              stored.revision,
            );
            // The rule's event, twice (EventBridge may deliver a scheduled event more than once): one fire.
            const sweeps = [
              await deployment.worker.invoke({ kind: RECOVERY_SWEEP_KIND }),
              await deployment.worker.invoke({ kind: RECOVERY_SWEEP_KIND }),
            ];
            expect(
              sweeps.map((outcome) => (outcome as { body?: { crons?: unknown } }).body?.crons),
            ).toEqual([
              { fired: 1, failed: 0 },
              { fired: 0, failed: 0 },
            ]);
            const [run] = await client.runs.list(thread.thread_id);
            expect(run!.metadata).toMatchObject({ cron_id: cron.cron_id });
            const values = (await client.runs.join(
              thread.thread_id,
              run!.run_id,
            )) as unknown as LongValues;
            expect(values.done).toEqual([1, 2]);
            await deployment.invokeApi.drain();
            // The sweep handed the fire's run to the worker as any run is handed: one Event invocation. (The
            // sweep also recovers any thread of the table it finds stalled, and the tests beside this one share
            // the table: on a loaded machine a lease of theirs may lapse, and its takeover is not this test's.)
            const forThisThread = deployment.invokeApi.requests.filter(
              ({ payload }) => (payload as { threadId?: unknown }).threadId === thread.thread_id,
            );
            expect(forThisThread).toEqual([
              {
                functionName: WORKER,
                invocationType: "Event",
                payload: expect.objectContaining({
                  kind: RUN_JOB_KIND,
                  threadId: thread.thread_id,
                }),
                outcome: workerDone,
              },
            ]);
            await client.crons.delete(cron.cron_id);
          },
        ),
      60_000,
    );
  },
);

/** A worker invocation that ran its job: the worker's answer to Lambda. */
const workerDone: FunctionOutcome = {
  kind: "response",
  requestId: expect.any(String) as string,
  body: { jobs: 1, batchItemFailures: [] },
};

/**
 * Joins until the run ends: behind API Gateway a join waits at most until its limit is near, answers 408 (the SDK
 * raises it, and does not re-send it: the client joins again), and the run goes on meanwhile.
 */
async function joinUntilDone(
  client: Client,
  threadId: string,
  runId: string,
): Promise<{ values: unknown; timeouts: number }> {
  let timeouts = 0;
  for (;;) {
    try {
      return { values: await client.runs.join(threadId, runId), timeouts };
    } catch (error) {
      if ((error as { status?: unknown }).status !== 408 || timeouts >= 20) throw error;
      timeouts += 1;
    }
  }
}
