import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HandlerOptions } from "../../src/runtime/assembly";
import { createHandler, type ApiHandler } from "../../src/runtime/handler";
import { createWorkerHandler } from "../../src/runtime/worker";
import { RECOVERY_SWEEP_KIND } from "../../src/shared/worker-events";
import { localEndpoint } from "../support/dynamodb";
import { recoveryGraph } from "./fixtures/recovery-graph";
import { apiEvent, createTable, quietLogger, type TableHandle } from "./support";

const TSX = join(__dirname, "../../node_modules/tsx/dist/cli.mjs");
const PROCESS = join(__dirname, "fixtures/recovery-process.ts");
const TENANT = "tenant-recovery";
const READ = "read-1";
const SWEPT = "swept-1";
const INVOKED = "invoked-1";
const SCHEDULED = "scheduled-1";

/**
 * Stalled runs after a real crash, on DynamoDB Local: a child process (the library's handler, its in-process
 * dispatcher, 2 s run leases) starts background runs and is SIGKILLed inside their second node, after the first
 * node's checkpoint is stored. Another handler on the same table then recovers them with no new run: when a run
 * is read, or through `recoverRuns` alone.
 */
describe("stalled runs recovered after their process was killed (dynamodb checkpointer)", () => {
  let table: TableHandle;
  let directory: string;
  let api: ApiHandler;
  let runs: Record<string, string>;

  const journal = () =>
    existsSync(join(directory, "events.log"))
      ? readFileSync(join(directory, "events.log"), "utf8").trim().split("\n")
      : [];
  const linesOf = (label: string) =>
    journal().filter((line) => line.startsWith(`${label} `) && !line.includes("-queued "));
  const get = async (path: string) => {
    const result = await api(apiEvent("GET", path, { tenantId: TENANT }));
    return { status: result.statusCode, body: JSON.parse(result.body!) as Record<string, unknown> };
  };

  /** The surviving process's handlers (API and worker): the child's graph, no longer blocking, same leases. */
  const survivorOptions = (): HandlerOptions => ({
    assistants: { recovery: recoveryGraph(directory, 0) },
    tableName: table.tableName,
    dynamodbClient: table.client,
    runLeaseMs: 2_000,
    runHeartbeatMs: 500,
    logger: quietLogger,
    metrics: false,
  });

  beforeAll(async () => {
    table = await createTable();
    directory = mkdtempSync(join(tmpdir(), "memory-table-recovery-"));
    const log = openSync(join(directory, "child.log"), "w");
    const child: ChildProcess = spawn(
      process.execPath,
      [
        TSX,
        PROCESS,
        localEndpoint(),
        table.tableName,
        directory,
        TENANT,
        JSON.stringify([READ, SWEPT, SCHEDULED]),
        JSON.stringify([INVOKED]),
      ],
      // Its own process group: tsx runs the script in a child process, and the kill must take both.
      { stdio: ["ignore", log, log], detached: true },
    );
    api = createHandler(survivorOptions());
    try {
      await waitFor(() => existsSync(join(directory, "runs.json")), 60_000);
      runs = JSON.parse(readFileSync(join(directory, "runs.json"), "utf8")) as Record<
        string,
        string
      >;
      // Both runs are inside `second`, and `first`'s checkpoint is stored (LangGraph writes it while the next
      // step runs): the crash hits after it.
      for (const thread of [READ, SWEPT, SCHEDULED, INVOKED]) {
        await waitFor(() => linesOf(thread).includes(`${thread} start second`), 60_000);
        await waitFor(async () => {
          const state = await get(`/threads/${thread}/state`);
          const values = state.body.values as { steps?: string[] } | undefined;
          return (values?.steps ?? []).includes(`first:${thread}`);
        }, 30_000);
      }
    } finally {
      process.kill(-child.pid!, "SIGKILL");
      await new Promise((resolve) =>
        child.exitCode !== null ? resolve(null) : child.once("exit", resolve),
      );
    }
  }, 120_000);

  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it("a read of the killed run recovers it: it goes on from its last checkpoint (first node once) to success, then the run queued behind it runs", async () => {
    let status = "";
    await waitFor(async () => {
      status = String((await get(`/threads/${READ}/runs/${runs[READ]!}`)).body.status);
      return status !== "pending" && status !== "running";
    }, 60_000);
    expect(status).toBe("success");
    await waitFor(async () => {
      status = String((await get(`/threads/${READ}/runs/${runs[`${READ}-queued`]!}`)).body.status);
      return status !== "pending" && status !== "running";
    }, 60_000);
    expect(status).toBe("success");

    // Finished nodes never ran again; only the node the crash interrupted did.
    expect(linesOf(READ)).toEqual([
      `${READ} start first`,
      `${READ} end first`,
      `${READ} start second`,
      `${READ} start second`,
      `${READ} end second`,
    ]);
    const state = await get(`/threads/${READ}/state`);
    expect((state.body.values as { steps: string[] }).steps).toEqual([
      `first:${READ}`,
      `second:${READ}`,
      `first:${READ}-queued`,
      `second:${READ}-queued`,
    ]);
    expect((await get(`/threads/${READ}`)).body.status).toBe("idle");
  }, 120_000);

  it("recoverRuns alone (no read, no new run) recovers another killed thread; a reject run is then accepted", async () => {
    const threads = async function* () {
      yield { tenantId: TENANT, threadId: SWEPT };
    };
    // The killed run's lease lapses 2 s after the kill: until then there is nothing to recover.
    let recovered = 0;
    await waitFor(async () => (recovered = await api.recoverRuns(threads())) > 0, 30_000);
    expect(recovered).toBe(1);
    // Watched through the journal only: a read would recover the thread by itself.
    await waitFor(() => linesOf(SWEPT).includes(`${SWEPT} end second`), 60_000);
    expect(linesOf(SWEPT)).toEqual([
      `${SWEPT} start first`,
      `${SWEPT} end first`,
      `${SWEPT} start second`,
      `${SWEPT} start second`,
      `${SWEPT} end second`,
    ]);
    let status = "";
    await waitFor(async () => {
      status = String((await get(`/threads/${SWEPT}/runs/${runs[SWEPT]!}`)).body.status);
      return status !== "pending" && status !== "running";
    }, 30_000);
    expect(status).toBe("success");
    // The run's record says it ended before its thread is freed (settlement.ts's order): wait for the thread.
    await waitFor(async () => (await get(`/threads/${SWEPT}`)).body.status === "idle", 30_000);

    const created = await api(
      apiEvent("POST", `/threads/${SWEPT}/runs`, {
        body: JSON.stringify({
          assistant_id: "recovery",
          input: { label: `${SWEPT}-after` },
          multitask_strategy: "reject",
        }),
        tenantId: TENANT,
      }),
    );
    expect(created.statusCode).toBe(200);
    const after = JSON.parse(created.body!) as { run_id: string };
    await waitFor(async () => {
      status = String((await get(`/threads/${SWEPT}/runs/${after.run_id}`)).body.status);
      return status !== "pending" && status !== "running";
    }, 30_000);
    expect(status).toBe("success");
    const state = await get(`/threads/${SWEPT}/state`);
    expect((state.body.values as { steps: string[] }).steps).toEqual([
      `first:${SWEPT}`,
      `second:${SWEPT}`,
      `first:${SWEPT}-after`,
      `second:${SWEPT}-after`,
    ]);
  }, 120_000);

  it("a killed /invoke run refuses the next start (409) and is taken over by it, from its last checkpoint", async () => {
    const invoke = (input: Record<string, unknown>) =>
      api(
        apiEvent("POST", "/invoke", {
          body: JSON.stringify({ thread_id: INVOKED, assistant_id: "recovery", input }),
          tenantId: TENANT,
        }),
      );

    // The killed run's lease lapses 2 s after the kill. Until its takeover ends, a start is refused (reject):
    // while the dead run's lease is live, then because it stalled (which starts its takeover), then while the
    // takeover holds the thread. A start after the takeover ended runs.
    await waitFor(async () => {
      const attempt = await invoke({ label: `${INVOKED}-again` });
      const ended = linesOf(INVOKED).includes(`${INVOKED} end second`);
      if (!ended) expect(attempt.statusCode).toBe(409);
      return ended;
    }, 60_000);
    expect(linesOf(INVOKED)).toEqual([
      `${INVOKED} start first`,
      `${INVOKED} end first`,
      `${INVOKED} start second`,
      `${INVOKED} start second`,
      `${INVOKED} end second`,
    ]);
    await waitFor(async () => {
      const status = await api(apiEvent("GET", `/threads/${INVOKED}/status`, { tenantId: TENANT }));
      return JSON.parse(status.body!).status === "COMPLETED";
    }, 30_000);
    const again = await invoke({ label: `${INVOKED}-again` });
    expect(again.statusCode).toBe(200);
    expect(JSON.parse(again.body!)).toMatchObject({ status: "COMPLETED" });
    // Oldest last: the killed run, taken over to success; refused starts left no run behind.
    const listed = (await get(`/threads/${INVOKED}/runs`)).body as unknown as Array<{
      status: string;
      kwargs: { input: { label: string } };
    }>;
    expect(listed.at(-1)).toMatchObject({
      status: "success",
      kwargs: { input: { label: INVOKED } },
    });
    expect(listed.every((run) => run.status === "success")).toBe(true);
  }, 120_000);

  it("the worker's scheduled sweep finds a killed run through the unsettled-threads index and takes it over", async () => {
    const worker = createWorkerHandler(survivorOptions());
    const sweep = { kind: RECOVERY_SWEEP_KIND };
    // Nothing read this thread or recovered it before.
    expect(linesOf(SCHEDULED)).not.toContain(`${SCHEDULED} end second`);
    // The killed run's lease lapses 2 s after the kill: until then the sweep finds nothing to recover. The
    // schedule sweeps again and again (every minute in AWS); here until the run's takeover ended.
    let recovered = 0;
    await waitFor(async () => {
      recovered += (await worker(sweep, { getRemainingTimeInMillis: () => 60_000 })).recovered ?? 0;
      return linesOf(SCHEDULED).includes(`${SCHEDULED} end second`);
    }, 60_000);
    expect(recovered).toBeGreaterThanOrEqual(1);
    expect(linesOf(SCHEDULED)).toEqual([
      `${SCHEDULED} start first`,
      `${SCHEDULED} end first`,
      `${SCHEDULED} start second`,
      `${SCHEDULED} start second`,
      `${SCHEDULED} end second`,
    ]);
    await waitFor(
      async () =>
        (await get(`/threads/${SCHEDULED}/runs/${runs[SCHEDULED]!}`)).body.status === "success",
      30_000,
    );
    // Settled: the index no longer lists the thread, so later sweeps read nothing of it.
    await waitFor(async () => (await get(`/threads/${SCHEDULED}`)).body.status === "idle", 30_000);
    const after = await worker(sweep, { getRemainingTimeInMillis: () => 60_000 });
    expect(after.recovered).toBe(0);
  }, 120_000);
});

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number) {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
