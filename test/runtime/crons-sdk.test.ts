import type { Client, Cron } from "@langchain/langgraph-sdk";
import { systemAssistantId } from "../../src/runtime/http/assistant-directory";
import { fireCronsPeriodically } from "../../src/dev/cron-timer";
import { InMemoryCronStore } from "../../src/runtime/crons/in-memory-cron-store";
import type { CronStore } from "../../src/shared/crons";
import { TableClient } from "../../src/table/client";
import { CronItems } from "../../src/table/cron-items";
import { chatGraph, slowGraph } from "./graphs";
import {
  backendOptions,
  quietLogger,
  startTestServer,
  type Backend,
  type TestServer,
} from "./support";

const MINUTE = 60_000;
const MAX_CRONS = 4;

/**
 * Crons through the official SDK's `client.crons`, unchanged, against the dev server on both backends. Fires are
 * made by calling the sweep (`fireDueCrons`) with a controlled clock: no test waits for a real minute.
 */
describe.each<Backend>(["memory", "dynamodb"])("crons (%s backend)", (backend) => {
  let server: TestServer;
  let store: CronStore;
  const counts = { started: 0, finished: 0 };
  let tenants = 0;
  let current: Client | undefined;
  /** A client of a tenant of its own (each test has its own quota and listings). */
  const freshClient = async () => {
    current = await server.client(`tenant-crons-${backend}-${(tenants += 1)}`);
    return current;
  };

  // Sweeps fire every tenant's due crons: each test leaves none behind, so the next counts only its own fires.
  afterEach(async () => {
    for (const cron of (await current?.crons.search({ limit: 100 })) ?? []) {
      await current!.crons.delete(cron.cron_id);
    }
  });

  beforeAll(async () => {
    const options = await backendOptions(backend);
    store =
      backend === "memory"
        ? new InMemoryCronStore()
        : new CronItems(new TableClient(options.dynamodbClient!, options.tableName!));
    server = await startTestServer({
      assistants: { chat: chatGraph, slow: slowGraph(counts) },
      ...options,
      cronStore: store,
      maxCronsPerTenant: MAX_CRONS,
    });
  });

  afterAll(async () => {
    await server.close();
  });

  const tick = { messages: [{ role: "human", content: "tick" }] };

  async function runsOf(client: Client, threadId: string) {
    return client.runs.list(threadId, { limit: 100 });
  }

  async function cronOf(client: Client, cronId: string): Promise<Cron> {
    const [cron] = (await client.crons.search({ limit: 100 })).filter((c) => c.cron_id === cronId);
    if (!cron) throw new Error(`cron ${cronId} not listed`);
    return cron;
  }

  it("creates, searches, counts, updates and deletes crons; another tenant sees, counts and changes none", async () => {
    const client = await freshClient();
    const other = await freshClient();
    const thread = await client.threads.create();
    const before = Date.now();
    const stateless = await client.crons.create("chat", {
      schedule: "* * * * *",
      input: tick,
      metadata: { team: "a" },
    });
    expect(stateless).toMatchObject({
      assistant_id: systemAssistantId("chat"),
      thread_id: null,
      schedule: "* * * * *",
      enabled: true,
      on_run_completed: "delete",
      metadata: { team: "a" },
      payload: { input: tick },
      end_time: null,
    });
    const next = Date.parse(stateless.next_run_date!);
    expect(next).toBeGreaterThan(before);
    expect(next).toBeLessThanOrEqual(before + MINUTE);
    expect(next % MINUTE).toBe(0);

    const endTime = new Date(Date.now() + 30 * 24 * 3600_000).toISOString();
    const onThread = await client.crons.createForThread(thread.thread_id, "chat", {
      schedule: "0 9 * * *",
      timezone: "Europe/Paris",
      endTime,
      input: tick,
    });
    expect(onThread).toMatchObject({
      thread_id: thread.thread_id,
      timezone: "Europe/Paris",
      end_time: endTime,
    });
    // 09:00 in Paris is 07:00 or 08:00 UTC, depending on the season.
    expect([7, 8]).toContain(new Date(onThread.next_run_date!).getUTCHours());

    expect(await client.crons.count()).toBe(2);
    expect(await client.crons.count({ threadId: thread.thread_id })).toBe(1);
    expect((await client.crons.search({ metadata: { team: "a" } })).map((c) => c.cron_id)).toEqual([
      stateless.cron_id,
    ]);
    expect(
      (await client.crons.search({ sortBy: "next_run_date", sortOrder: "asc" })).map(
        (c) => c.cron_id,
      ),
    ).toEqual([stateless.cron_id, onThread.cron_id]);
    const page = await client.crons.search({
      limit: 1,
      offset: 1,
      sortBy: "created_at",
      sortOrder: "asc",
    });
    expect(page.map((c) => c.cron_id)).toEqual([onThread.cron_id]);
    const selected = await client.crons.search({ select: ["cron_id", "schedule"] });
    expect(Object.keys(selected[0]!).sort()).toEqual(["cron_id", "schedule"]);

    // Another tenant: nothing to see, count, change or delete, and the first tenant's thread is not there.
    expect(await other.crons.search()).toEqual([]);
    expect(await other.crons.count()).toBe(0);
    await expect(other.crons.update(stateless.cron_id, { enabled: false })).rejects.toThrow(/404/);
    await expect(other.crons.delete(stateless.cron_id)).rejects.toThrow(/404/);
    await expect(
      other.crons.createForThread(thread.thread_id, "chat", { schedule: "* * * * *" }),
    ).rejects.toThrow(/404/);
    expect((await cronOf(client, stateless.cron_id)).enabled).toBe(true);

    const updated = await client.crons.update(onThread.cron_id, {
      schedule: "*/5 * * * *",
      timezone: undefined,
      endTime: null as unknown as string,
      enabled: false,
      metadata: { owner: "ops" },
    });
    expect(updated).toMatchObject({
      schedule: "*/5 * * * *",
      end_time: null,
      enabled: false,
      next_run_date: null,
      metadata: { owner: "ops" },
    });
    expect(await client.crons.count({ threadId: thread.thread_id })).toBe(1);
    expect((await client.crons.search({ enabled: false })).map((c) => c.cron_id)).toEqual([
      onThread.cron_id,
    ]);

    await client.crons.delete(stateless.cron_id);
    expect((await client.crons.search()).map((c) => c.cron_id)).toEqual([onThread.cron_id]);
    await expect(client.crons.delete(stateless.cron_id)).rejects.toThrow(/404/);
  });

  it("refuses a bad schedule, time zone, assistant, thread, end time and a cron over the quota, storing nothing", async () => {
    const client = await freshClient();
    const thread = await client.threads.create();
    const refusals: Array<[Promise<unknown>, RegExp]> = [
      [client.crons.create("chat", { schedule: "* * *" }), /422.*schedule.*5 fields/],
      [client.crons.create("chat", { schedule: "61 * * * *" }), /422.*schedule/],
      [client.crons.create("chat", { schedule: "0 0 30 2 *" }), /422.*schedule/],
      [
        client.crons.create("chat", { schedule: "* * * * *", timezone: "Mars/Olympus" }),
        /422.*timezone/,
      ],
      [client.crons.create("nobody", { schedule: "* * * * *" }), /404.*No assistant found/],
      [
        client.crons.createForThread("no-such-thread", "chat", { schedule: "* * * * *" }),
        /404.*Thread not found/,
      ],
      [
        client.crons.create("chat", {
          schedule: "* * * * *",
          endTime: new Date(Date.now() - MINUTE).toISOString(),
        }),
        /422.*end_time.*future/,
      ],
      [
        client.crons.create("chat", { schedule: "* * * * *", webhook: "https://evil.example/x" }),
        /422.*webhook/,
      ],
    ];
    for (const [refused, message] of refusals) await expect(refused).rejects.toThrow(message);
    expect(await client.crons.count()).toBe(0);

    for (let index = 0; index < MAX_CRONS; index++) {
      await client.crons.createForThread(thread.thread_id, "chat", { schedule: "* * * * *" });
    }
    await expect(client.crons.create("chat", { schedule: "* * * * *" })).rejects.toThrow(
      /409.*Cron quota exceeded/,
    );
    expect(await client.crons.count()).toBe(MAX_CRONS);
  });

  it("fires a minute schedule once at its time on the controlled clock, never twice, and a missed span once", async () => {
    const client = await freshClient();
    const thread = await client.threads.create();
    const cron = await client.crons.createForThread(thread.thread_id, "chat", {
      schedule: "* * * * *",
      input: tick,
    });
    const first = Date.parse(cron.next_run_date!);

    // Not yet due: nothing fires.
    await server.handler.fireDueCrons(first - 1);
    expect(await runsOf(client, thread.thread_id)).toEqual([]);

    // Two sweepers at the same instant (the worker's sweep overlapping another): one fire.
    const sweeps = await Promise.all([
      server.handler.fireDueCrons(first),
      server.handler.fireDueCrons(first),
    ]);
    expect(sweeps.reduce((sum, sweep) => sum + sweep.fired, 0)).toBe(1);
    const [run] = await runsOf(client, thread.thread_id);
    expect(run!.metadata!).toMatchObject({
      cron_id: cron.cron_id,
      cron_scheduled_at: new Date(first).toISOString(),
    });
    await client.runs.join(thread.thread_id, run!.run_id);
    expect((await client.runs.get(thread.thread_id, run!.run_id)).status).toBe("success");
    const state = await client.threads.getState<{ messages: Array<{ content: string }> }>(
      thread.thread_id,
    );
    expect(state.values.messages.map((message) => message.content)).toEqual(["tick", "echo: tick"]);

    // The same instant again: no double.
    expect((await server.handler.fireDueCrons(first)).fired).toBe(0);
    expect(await runsOf(client, thread.thread_id)).toHaveLength(1);
    expect(Date.parse((await cronOf(client, cron.cron_id)).next_run_date!)).toBe(first + MINUTE);

    // No sweep for five and a half minutes: the latest missed minute fires, once.
    const late = first + 5 * MINUTE + 30_000;
    expect((await server.handler.fireDueCrons(late)).fired).toBe(1);
    expect((await server.handler.fireDueCrons(late)).fired).toBe(0);
    const runs = await runsOf(client, thread.thread_id);
    expect(runs).toHaveLength(2);
    expect(runs[0]!.metadata!.cron_scheduled_at).toBe(new Date(first + 5 * MINUTE).toISOString());
    expect(Date.parse((await cronOf(client, cron.cron_id)).next_run_date!)).toBe(
      first + 6 * MINUTE,
    );
    await client.runs.join(thread.thread_id, runs[0]!.run_id);
  });

  it("a fire claimed by a sweeper that died is made once by a later sweep: before its run (made) and after (not made again)", async () => {
    const client = await freshClient();
    const tenantId = `tenant-crons-${backend}-${tenants}`;
    const thread = await client.threads.create();
    const cron = await client.crons.createForThread(thread.thread_id, "chat", {
      schedule: "* * * * *",
      input: tick,
    });
    const first = Date.parse(cron.next_run_date!);
    // Died after its claim, before the run: the claim names the fire; the next sweep after it lapses makes it.
    const stored = (await store.get(tenantId, cron.cron_id))!;
    expect(
      await store.save(
        { ...stored, pendingFire: first, dueAt: first + 1, revision: stored.revision + 1 },
        stored.revision,
      ),
    ).toBe(true);
    expect((await server.handler.fireDueCrons(first + 2)).fired).toBe(1);
    const [run] = await runsOf(client, thread.thread_id);
    expect(run!.metadata!.cron_scheduled_at).toBe(new Date(first).toISOString());
    await client.runs.join(thread.thread_id, run!.run_id);

    // Died after the run, before the settle: the next sweep finds the run and makes no other.
    const settled = (await store.get(tenantId, cron.cron_id))!;
    expect(settled.pendingFire).toBeUndefined();
    await store.save(
      { ...settled, pendingFire: first, dueAt: first + 3, revision: settled.revision + 1 },
      settled.revision,
    );
    expect((await server.handler.fireDueCrons(first + 4)).fired).toBe(0);
    expect(await runsOf(client, thread.thread_id)).toHaveLength(1);
    expect((await store.get(tenantId, cron.cron_id))!.pendingFire).toBeUndefined();
  });

  it("a stateless cron runs on a new thread per fire: deleted after its run by default, kept with on_run_completed keep", async () => {
    const client = await freshClient();
    const kept = await client.crons.create("chat", {
      schedule: "* * * * *",
      input: tick,
      onRunCompleted: "keep",
    });
    const deleted = await client.crons.create("slow", {
      schedule: "* * * * *",
      input: { delayMs: 1 },
    });
    const first = Date.parse(kept.next_run_date!);
    expect(Date.parse(deleted.next_run_date!)).toBe(first);
    const finishedBefore = counts.finished;
    expect((await server.handler.fireDueCrons(first)).fired).toBe(2);

    // The slow graph's run ends, then its thread goes; the kept one stays, with its run.
    const keptThreads = async (expected: number) => {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const remaining = (await client.threads.search({ limit: 10 })).map((t) => t.thread_id);
        if (counts.finished > finishedBefore && remaining.length === expected) return remaining;
        if (Date.now() > deadline) throw new Error(`threads left: ${remaining.join(", ")}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const [keptThread] = await keptThreads(1);
    const [run] = await runsOf(client, keptThread!);
    expect(run!.metadata!.cron_id).toBe(kept.cron_id);
    await client.runs.join(keptThread!, run!.run_id);
    expect((await client.runs.get(keptThread!, run!.run_id)).status).toBe("success");

    // The next fire makes a thread of its own.
    expect((await server.handler.fireDueCrons(first + MINUTE)).fired).toBe(2);
    const both = await keptThreads(2);
    expect(both).toContain(keptThread);
    for (const threadId of both) {
      const [made] = await runsOf(client, threadId);
      await client.runs.join(threadId, made!.run_id);
    }
  });

  it("an update (disable, a new schedule) and a delete take effect at the next sweep", async () => {
    const client = await freshClient();
    const thread = await client.threads.create();
    const cron = await client.crons.createForThread(thread.thread_id, "chat", {
      schedule: "* * * * *",
      input: tick,
    });
    const first = Date.parse(cron.next_run_date!);
    await client.crons.update(cron.cron_id, { enabled: false });
    expect((await server.handler.fireDueCrons(first + 10 * MINUTE)).fired).toBe(0);
    expect(await runsOf(client, thread.thread_id)).toEqual([]);

    const hourly = await client.crons.update(cron.cron_id, {
      enabled: true,
      schedule: "0 * * * *",
    });
    const hour = Date.parse(hourly.next_run_date!);
    expect(hour % (60 * MINUTE)).toBe(0);
    expect((await server.handler.fireDueCrons(hour - 1)).fired).toBe(0);
    expect((await server.handler.fireDueCrons(hour)).fired).toBe(1);
    const [run] = await runsOf(client, thread.thread_id);
    await client.runs.join(thread.thread_id, run!.run_id);

    await client.crons.delete(cron.cron_id);
    expect((await server.handler.fireDueCrons(hour + 24 * 60 * MINUTE)).fired).toBe(0);
    expect(await runsOf(client, thread.thread_id)).toHaveLength(1);
  });

  it("a cron past its end time never fires again", async () => {
    const client = await freshClient();
    const thread = await client.threads.create();
    const endTime = new Date(Date.now() + 2 * MINUTE).toISOString();
    const cron = await client.crons.createForThread(thread.thread_id, "chat", {
      schedule: "* * * * *",
      input: tick,
      endTime,
    });
    const afterEnd = Date.parse(endTime) + 10 * MINUTE;
    // The sweep after the end fires the last scheduled minute before it, once, then the cron is over.
    expect((await server.handler.fireDueCrons(afterEnd)).fired).toBe(1);
    const [run] = await runsOf(client, thread.thread_id);
    expect(Date.parse(String(run!.metadata!.cron_scheduled_at))).toBeLessThanOrEqual(
      Date.parse(endTime),
    );
    await client.runs.join(thread.thread_id, run!.run_id);
    expect((await server.handler.fireDueCrons(afterEnd + 60 * MINUTE)).fired).toBe(0);
    expect((await cronOf(client, cron.cron_id)).next_run_date).toBeNull();
  });

  it("the dev server's timer fires a due cron in process, on the real clock", async () => {
    const client = await freshClient();
    const tenantId = `tenant-crons-${backend}-${tenants}`;
    const thread = await client.threads.create();
    const cron = await client.crons.createForThread(thread.thread_id, "chat", {
      schedule: "* * * * *",
      input: tick,
    });
    // Its fire a minute ago was missed (as if the server had been down): due now, on the real clock.
    const stored = (await store.get(tenantId, cron.cron_id))!;
    const missed = Date.parse(cron.next_run_date!) - 2 * MINUTE;
    await store.save(
      { ...stored, nextRunAt: missed, dueAt: missed, revision: stored.revision + 1 },
      stored.revision,
    );
    const timer = fireCronsPeriodically(server.handler, 50, quietLogger);
    try {
      const deadline = Date.now() + 20_000;
      let runs = await runsOf(client, thread.thread_id);
      while (runs.length === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        runs = await runsOf(client, thread.thread_id);
      }
      expect(runs).toHaveLength(1);
      expect(runs[0]!.metadata!.cron_id).toBe(cron.cron_id);
      await client.runs.join(thread.thread_id, runs[0]!.run_id);
    } finally {
      timer.stop();
    }
    // Ticks went on meanwhile: never two runs for one fire (a new minute may have brought a fire of its own).
    const fires = (await runsOf(client, thread.thread_id)).map(
      (run) => run.metadata!.cron_scheduled_at,
    );
    expect(new Set(fires).size).toBe(fires.length);
  });
});

describe.each<Backend>(["memory", "dynamodb"])(
  "crons turned off: CRONS_ENABLED=false, the module's create_crons = false (%s backend)",
  (backend) => {
    let on: TestServer;
    let off: TestServer;
    let store: CronStore;

    beforeAll(async () => {
      const options = await backendOptions(backend);
      store =
        backend === "memory"
          ? new InMemoryCronStore()
          : new CronItems(new TableClient(options.dynamodbClient!, options.tableName!));
      // Two deployments of one table: crons were on when the cron was made, then turned off.
      on = await startTestServer({ assistants: { chat: chatGraph }, ...options, cronStore: store });
      off = await startTestServer({
        assistants: { chat: chatGraph },
        ...options,
        cronStore: store,
        cronsEnabled: false,
      });
    });

    afterAll(async () => {
      await on.close();
      await off.close();
    });

    it("refuses to create or enable a cron (400, nothing stored), fires none, and still lists, updates and deletes", async () => {
      const tenant = `tenant-crons-off-${backend}`;
      const before = await (
        await on.client(tenant)
      ).crons.create("chat", {
        schedule: "* * * * *",
        input: { messages: [{ role: "human", content: "tick" }] },
      });
      const client = await off.client(tenant);
      await expect(
        client.crons.create("chat", { schedule: "* * * * *", input: {} }),
      ).rejects.toThrow(/400.*Crons are turned off in this deployment \(CRONS_ENABLED=false\)/);
      const thread = await client.threads.create();
      await expect(
        client.crons.createForThread(thread.thread_id, "chat", { schedule: "* * * * *" }),
      ).rejects.toThrow(/400/);
      expect(await client.crons.count()).toBe(1);

      // Due now: the sweep of the deployment with crons off fires nothing.
      const stored = (await store.get(tenant, before.cron_id))!;
      expect(await off.handler.fireDueCrons(stored.nextRunAt! + 1_000)).toEqual({
        fired: 0,
        failed: 0,
      });
      expect((await client.crons.search({ limit: 10 }))[0]!.cron_id).toBe(before.cron_id);
      await expect(client.crons.update(before.cron_id, { enabled: true })).rejects.toThrow(/400/);
      expect(await client.crons.update(before.cron_id, { enabled: false })).toMatchObject({
        enabled: false,
      });
      await client.crons.delete(before.cron_id);
      expect(await client.crons.count()).toBe(0);
    });
  },
);
