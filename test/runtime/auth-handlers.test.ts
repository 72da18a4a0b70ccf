import { randomUUID } from "node:crypto";
import { Writable } from "node:stream";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";
import type { Client } from "@langchain/langgraph-sdk";
import pino from "pino";
import { InMemorySaver } from "../../src/checkpoint/memory";
import { signDevToken } from "../../src/dev/auth";
import { teamAuth, THREADS_ADMIN_SCOPE } from "../../src/examples/auth";
import { ownerOnly } from "../../src/runtime/auth/owner-only";
import { readRuntimeConfig } from "../../src/runtime/config";
import { createHandler } from "../../src/runtime/handler";
import { verifiedCredential } from "../../src/runtime/request-auth";
import type { GraphFactory } from "../../src/runtime/types";
import { CURRENT_SDK } from "../support/sdk-majors";
import {
  apiEvent,
  backendOptions,
  startTestServer,
  type Backend,
  type TestServer,
} from "./support";

const TENANT = "tenant-acme";
const OTHER_TENANT = "tenant-globex";

/** One node: appends "!" to `text`. */
const echo: GraphFactory = ({ checkpointer }) =>
  new StateGraph(Annotation.Root({ text: Annotation<string>() }))
    .addNode("shout", (state) => ({ text: `${state.text}!` }))
    .addEdge(START, "shout")
    .addEdge("shout", END)
    .compile({ checkpointer });

/** A logger whose JSON lines the test reads. */
function capture(): { logger: pino.Logger; lines: () => Record<string, unknown>[] } {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      raw.push(...chunk.toString("utf8").trim().split("\n"));
      done();
    },
  });
  return {
    logger: pino({ level: "info" }, stream),
    lines: () => raw.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/** A user of a tenant: a dev token (verified exactly as API Gateway's JWT authorizer would) with `sub`. */
async function userClient(
  server: TestServer,
  tenantId: string,
  subject: string,
  headers: Record<string, string> = {},
): Promise<Client> {
  const token = await signDevToken(server.keys, { tenantId, subject });
  return CURRENT_SDK.createClient({
    apiUrl: server.url,
    apiKey: null,
    defaultHeaders: { Authorization: `Bearer ${token}`, ...headers },
    callerOptions: { maxRetries: 0 },
  });
}

async function drain(stream: AsyncIterable<unknown>): Promise<unknown[]> {
  const parts: unknown[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

describe.each<Backend>(["memory", "dynamodb"])(
  "AUTH_POLICY=owner-only, two users of one tenant via the SDK (%s)",
  (backend) => {
    let server: TestServer;
    let alice: Client;
    let bob: Client;
    /** The same user name in another tenant: still nobody there. */
    let aliceElsewhere: Client;

    beforeAll(async () => {
      server = await startTestServer({
        assistants: { echo },
        environment: readRuntimeConfig({ AUTH_POLICY: "owner-only" }),
        ...(await backendOptions(backend)),
      });
      alice = await userClient(server, TENANT, "alice");
      bob = await userClient(server, TENANT, "bob");
      aliceElsewhere = await userClient(server, OTHER_TENANT, "alice");
    });

    afterAll(() => server.close());

    it("stamps the owner on create and hides a thread, its state, history, runs and streams from the other user", async () => {
      const thread = await alice.threads.create({ metadata: { topic: "invoices", owner: "bob" } });
      // The handler's stamp wins over what the client sent.
      expect(thread.metadata).toMatchObject({ topic: "invoices", owner: "alice" });
      const result = await alice.runs.wait(thread.thread_id, "echo", { input: { text: "hi" } });
      expect(result).toMatchObject({ text: "hi!" });
      const [run] = await alice.runs.list(thread.thread_id);
      expect(run).toBeDefined();
      expect(run!.metadata).toMatchObject({ owner: "alice" });
      const id = thread.thread_id;

      expect((await alice.threads.get(id)).thread_id).toBe(id);
      expect((await alice.threads.getState(id)).values).toMatchObject({ text: "hi!" });
      expect((await alice.threads.getHistory(id)).length).toBeGreaterThan(0);
      expect((await alice.runs.get(id, run!.run_id)).run_id).toBe(run!.run_id);

      for (const client of [bob, aliceElsewhere]) {
        await expect(client.threads.get(id)).rejects.toThrow(/404/);
        await expect(client.threads.getState(id)).rejects.toThrow(/404/);
        await expect(client.threads.getHistory(id)).rejects.toThrow(/404/);
        await expect(client.threads.update(id, { metadata: { x: 1 } })).rejects.toThrow(/404/);
        await expect(client.threads.updateState(id, { values: { text: "x" } })).rejects.toThrow(
          /404/,
        );
        await expect(client.threads.copy(id)).rejects.toThrow(/404/);
        await expect(client.threads.delete(id)).rejects.toThrow(/404/);
        await expect(client.runs.list(id)).rejects.toThrow(/404/);
        await expect(client.runs.get(id, run!.run_id)).rejects.toThrow(/404/);
        await expect(client.runs.join(id, run!.run_id)).rejects.toThrow(/404/);
        await expect(client.runs.cancel(id, run!.run_id)).rejects.toThrow(/404/);
        await expect(client.runs.delete(id, run!.run_id)).rejects.toThrow(/404/);
        await expect(drain(client.runs.joinStream(id, run!.run_id))).rejects.toThrow(/404/);
        await expect(drain(client.threads.joinStream(id))).rejects.toThrow(/404/);
        await expect(client.runs.wait(id, "echo", { input: { text: "mine" } })).rejects.toThrow(
          /404/,
        );
        await expect(client.runs.create(id, "echo", { input: { text: "mine" } })).rejects.toThrow(
          /404/,
        );
        expect((await client.threads.search({ metadata: { topic: "invoices" } })).length).toBe(0);
        expect(await client.threads.count({ metadata: { topic: "invoices" } })).toBe(0);
      }
      // Nothing the other users tried was written: the thread, its one run and its state are as they were.
      expect(await alice.runs.list(id)).toHaveLength(1);
      expect((await alice.threads.getState(id)).values).toMatchObject({ text: "hi!" });
      expect((await alice.threads.get(id)).metadata).toEqual({
        topic: "invoices",
        owner: "alice",
        graph_id: "echo",
        assistant_id: expect.any(String),
      });
      expect(await alice.threads.count({ metadata: { topic: "invoices" } })).toBe(1);
      // The owner keeps the thread's other routes, streams included (read after the route returned).
      const streamed = (await drain(
        alice.runs.stream(id, "echo", { input: { text: "again" }, streamMode: "values" }),
      )) as Array<{ event: string; data: unknown }>;
      expect(streamed.map((part) => part.event)).toContain("values");
      expect(streamed.at(-1)).toMatchObject({ event: "values", data: { text: "again!" } });
      const copy = await alice.threads.copy(id);
      expect(copy.metadata).toMatchObject({ owner: "alice" });
      await alice.threads.delete(copy.thread_id);
    });

    it("pages a search inside the filter: a page of N holds N of the user's threads", async () => {
      const batch = { batch: `paging-${backend}` };
      const mine = [];
      for (let index = 0; index < 3; index += 1) {
        mine.push((await alice.threads.create({ metadata: batch })).thread_id);
      }
      // Newer than alice's, so a page cut before filtering (newest first) would hold none of hers.
      for (let index = 0; index < 5; index += 1) await bob.threads.create({ metadata: batch });

      const first = await alice.threads.search({ metadata: batch, limit: 2 });
      expect(first.map((thread) => thread.thread_id)).toEqual([mine[2], mine[1]]);
      const second = await alice.threads.search({ metadata: batch, limit: 2, offset: 2 });
      expect(second.map((thread) => thread.thread_id)).toEqual([mine[0]]);
      expect(await alice.threads.count({ metadata: batch })).toBe(3);
      expect(await bob.threads.count({ metadata: batch })).toBe(5);
      const bobs = await bob.threads.search({ metadata: batch, limit: 5 });
      expect(bobs.every((thread) => thread.metadata?.owner === "bob")).toBe(true);
    });

    it("makes a thread a run creates (if_not_exists: create) its user's, and a stateless run works", async () => {
      const id = randomUUID();
      await alice.runs.wait(id, "echo", { input: { text: "new" }, ifNotExists: "create" });
      expect((await alice.threads.get(id)).metadata).toMatchObject({ owner: "alice" });
      await expect(bob.threads.get(id)).rejects.toThrow(/404/);
      // Bob cannot take the id over with a run of his own either.
      await expect(
        bob.runs.wait(id, "echo", { input: { text: "mine" }, ifNotExists: "create" }),
      ).rejects.toThrow(/404/);
      expect(await bob.runs.wait(null, "echo", { input: { text: "once" } })).toMatchObject({
        text: "once!",
      });
    });

    it("keeps each user's store items under their own namespace", async () => {
      await alice.store.putItem(["alice", "notes"], "todo", { text: "pay invoices" });
      await bob.store.putItem(["bob", "notes"], "todo", { text: "file taxes" });
      await expect(bob.store.getItem(["alice", "notes"], "todo")).rejects.toThrow(/403/);
      await expect(bob.store.putItem(["alice", "notes"], "todo", { x: 1 })).rejects.toThrow(/403/);
      await expect(bob.store.deleteItem(["alice", "notes"], "todo")).rejects.toThrow(/403/);
      await expect(bob.store.searchItems(["alice"])).rejects.toThrow(/403/);
      // No namespace: the user's own.
      const bobs = await bob.store.searchItems([]);
      expect(bobs.items.map((item) => item.value)).toEqual([{ text: "file taxes" }]);
      expect((await bob.store.listNamespaces()).namespaces).toEqual([["bob", "notes"]]);
      expect((await alice.store.getItem(["alice", "notes"], "todo"))?.value).toEqual({
        text: "pay invoices",
      });
      // Another tenant's alice has a store of her own, empty.
      expect((await aliceElsewhere.store.searchItems([])).items).toEqual([]);
      expect(await aliceElsewhere.store.getItem(["alice", "notes"], "todo")).toBeNull();
    });

    it("hides a user's crons from the other user", async () => {
      const cron = await alice.crons.create("echo", {
        schedule: "0 3 * * *",
        input: { text: "nightly" },
        metadata: { job: `nightly-${backend}` },
      });
      const listed = await alice.crons.search({ metadata: { job: `nightly-${backend}` } });
      expect(listed.map((found) => found.cron_id)).toEqual([cron.cron_id]);
      expect(listed[0]!.metadata).toMatchObject({ owner: "alice" });
      expect(await bob.crons.search({ metadata: { job: `nightly-${backend}` } })).toEqual([]);
      expect(await bob.crons.count({ metadata: { job: `nightly-${backend}` } })).toBe(0);
      await expect(bob.crons.update(cron.cron_id, { schedule: "0 4 * * *" })).rejects.toThrow(
        /404/,
      );
      await expect(bob.crons.delete(cron.cron_id)).rejects.toThrow(/404/);
      await alice.crons.delete(cron.cron_id);
    });
  },
);

/** The values the project's `threads:search` handler was given, newest last. */
const searchValues: unknown[] = [];

/** A project's own handlers: its authenticate reads the verified credential, and refuses or fails on demand. */
function projectAuth(): Auth {
  return new Auth()
    .authenticate((request) => {
      const credential = verifiedCredential(request);
      const refuse = request.headers.get("x-test-refuse");
      if (refuse) {
        throw new HTTPException(Number(refuse), {
          message: "Who are you?",
          headers: { "WWW-Authenticate": 'Bearer realm="acme"' },
        });
      }
      if (request.headers.get("x-test-explode")) throw new Error("identity provider unreachable");
      return {
        identity: `${credential!.subject}@${credential!.tenantId}`,
        permissions: credential!.subject === "carol" ? [] : ["write"],
      };
    })
    .on("threads:create", ({ value, user, permissions }) => {
      if (value.metadata?.explode) throw new Error("handler bug");
      if (!permissions.includes("write")) return false;
      value.metadata = { ...value.metadata, owner: user.identity };
      return undefined;
    })
    .on("store", ({ event, value, user }) => {
      // Items carry their author in their value; each user sees the items they wrote, in any namespace.
      if (event === "store:put") {
        const put = value as { value: Record<string, unknown> };
        put.value = { ...put.value, author: user.identity };
      }
      return { author: user.identity };
    })
    .on("threads:search", ({ value, user }) => {
      searchValues.push(structuredClone(value));
      return { owner: user.identity };
    })
    .on(["threads", "assistants"], ({ event, value, user }) => {
      if (event === "assistants:create") {
        const created = value as { metadata?: Record<string, unknown> | null };
        created.metadata = { ...created.metadata, owner: user.identity };
      }
      return { owner: user.identity };
    });
}

describe.each<Backend>(["memory", "dynamodb"])("a project's auth handlers (%s)", (backend) => {
  let server: TestServer;
  let logs: ReturnType<typeof capture>;
  let alice: Client;
  let bob: Client;

  beforeAll(async () => {
    logs = capture();
    server = await startTestServer({
      assistants: { echo },
      auth: projectAuth(),
      logger: logs.logger,
      ...(await backendOptions(backend)),
    });
    alice = await userClient(server, TENANT, "alice");
    bob = await userClient(server, TENANT, "bob");
  });

  afterAll(() => server.close());

  async function raw(headers: Record<string, string>, body: unknown = { metadata: {} }) {
    const token = await signDevToken(server.keys, { tenantId: TENANT, subject: "alice" });
    const response = await fetch(`${server.url}/threads`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        ...headers,
      },
      body: JSON.stringify(body),
    });
    return {
      status: response.status,
      headers: response.headers,
      body: (await response.json()) as Record<string, unknown>,
    };
  }

  it("names the user from the verified credential, inside its tenant", async () => {
    const thread = await alice.threads.create();
    expect(thread.metadata).toMatchObject({ owner: `alice@${TENANT}` });
    await expect(bob.threads.get(thread.thread_id)).rejects.toThrow(/404/);
  });

  it("gives the threads:search handler the search as the client sent it", async () => {
    searchValues.length = 0;
    await alice.threads.search({
      metadata: { topic: "invoices" },
      values: { text: "hi!" },
      status: "idle",
      limit: 3,
      offset: 1,
    });
    expect(searchValues.at(-1)).toEqual({
      metadata: { topic: "invoices" },
      values: { text: "hi!" },
      status: "idle",
      limit: 3,
      offset: 1,
    });
    await alice.threads.count({ metadata: { topic: "invoices" }, status: "interrupted" });
    expect(searchValues.at(-1)).toEqual({ metadata: { topic: "invoices" }, status: "interrupted" });
  });

  it("answers a refused authentication with the handler's status, message and headers", async () => {
    for (const status of [401, 403]) {
      const refused = await raw({ "x-test-refuse": String(status) });
      expect(refused.status).toBe(status);
      expect(refused.body).toEqual({ detail: "Who are you?" });
      expect(refused.headers.get("www-authenticate")).toBe('Bearer realm="acme"');
    }
    const carol = await userClient(server, TENANT, "carol");
    // An `on` handler returning false: 403, nothing created.
    await expect(carol.threads.create({ metadata: { by: "carol" } })).rejects.toThrow(/403/);
    expect(await carol.threads.count()).toBe(0);
  });

  it("answers a handler that throws with a 500 and an error id, logs it, and writes nothing", async () => {
    const before = await alice.threads.count();
    for (const [headers, body] of [
      [{ "x-test-explode": "1" }, { metadata: {} }],
      [{}, { thread_id: "5d3f8c4e-0d35-4c61-9d0b-1f7c2b1a9e01", metadata: { explode: true } }],
    ] as const) {
      const failed = await raw(headers, body);
      expect(failed.status).toBe(500);
      expect(failed.body).toEqual({ detail: "Internal error", error_id: expect.any(String) });
      const logged = logs.lines().find((line) => line.errorId === failed.body.error_id);
      expect(logged).toMatchObject({ msg: "unhandled error", err: { name: "Error" } });
      // Nothing of the error's message reaches the log line or the client.
      expect(JSON.stringify(logged)).not.toMatch(/unreachable|handler bug/);
    }
    expect(await alice.threads.count()).toBe(before);
    await expect(alice.threads.get("5d3f8c4e-0d35-4c61-9d0b-1f7c2b1a9e01")).rejects.toThrow(/404/);
  });

  it("filters store items by their value inside the search's read loop, and hides them from get, put and delete", async () => {
    // Bob's keys sort first and are written last: a page cut before filtering would hold none of alice's.
    for (const key of ["z1", "z2", "z3"]) await alice.store.putItem(["shared"], key, { n: key });
    for (let index = 0; index < 12; index += 1) {
      await bob.store.putItem(["shared"], `a${String(index).padStart(2, "0")}`, { n: index });
    }
    const first = await alice.store.searchItems(["shared"], { limit: 2 });
    const second = await alice.store.searchItems(["shared"], { limit: 2, offset: 2 });
    expect(first.items).toHaveLength(2);
    expect(second.items).toHaveLength(1);
    expect([...first.items, ...second.items].map((item) => item.key).sort()).toEqual([
      "z1",
      "z2",
      "z3",
    ]);
    expect(first.items[0]!.value).toMatchObject({ author: `alice@${TENANT}` });
    expect((await bob.store.searchItems(["shared"], { limit: 100 })).items).toHaveLength(12);
    expect(await bob.store.getItem(["shared"], "z1")).toBeNull();
    await expect(bob.store.putItem(["shared"], "z1", { n: "taken" })).rejects.toThrow(/404/);
    await expect(bob.store.deleteItem(["shared"], "z1")).rejects.toThrow(/404/);
    expect((await alice.store.getItem(["shared"], "z1"))?.value).toMatchObject({ n: "z1" });
  });

  it("filters assistants as LangGraph Server does, and runs still find the graph", async () => {
    const mine = await alice.assistants.create({ graphId: "echo", name: "alice's echo" });
    expect(mine.metadata).toMatchObject({ owner: `alice@${TENANT}` });
    await expect(bob.assistants.get(mine.assistant_id)).rejects.toThrow(/404/);
    await expect(bob.assistants.update(mine.assistant_id, { name: "x" })).rejects.toThrow(/404/);
    await expect(bob.assistants.delete(mine.assistant_id)).rejects.toThrow(/404/);
    const found = await alice.assistants.search({ limit: 10 });
    expect(found.map((assistant) => assistant.assistant_id)).toEqual([mine.assistant_id]);
    expect(await bob.assistants.search({ limit: 10 })).toEqual([]);
    // The assistant a run names is not filtered (the thread is): bob runs the graph on his own thread.
    const thread = await bob.threads.create();
    expect(await bob.runs.wait(thread.thread_id, "echo", { input: { text: "b" } })).toMatchObject({
      text: "b!",
    });
  });
});

describe("owner-only through the Lambda handler (API Gateway's JWT authorizer claims)", () => {
  const handler = createHandler({
    assistants: { echo },
    checkpointer: new InMemorySaver(),
    auth: ownerOnly,
    logger: pino({ level: "silent" }),
    metrics: false,
  });
  const claims = (sub?: string) => ({
    "custom:tenant_id": TENANT,
    ...(sub === undefined ? {} : { sub }),
  });

  it("stamps and filters by the JWT's sub, and by an API key's subject", async () => {
    const created = await handler(
      apiEvent("POST", "/threads", { body: "{}", claims: claims("alice") }),
    );
    expect(created.statusCode).toBe(200);
    const thread = JSON.parse(created.body!) as { thread_id: string; metadata: object };
    expect(thread.metadata).toMatchObject({ owner: "alice" });
    const path = `/threads/${thread.thread_id}`;
    expect((await handler(apiEvent("GET", path, { claims: claims("alice") }))).statusCode).toBe(
      200,
    );
    expect((await handler(apiEvent("GET", path, { claims: claims("bob") }))).statusCode).toBe(404);

    // The API-key authorizer hands on the key's subject (authorizer.lambda): it is the user.
    const byKey = apiEvent("POST", "/threads", { body: "{}" });
    (byKey.requestContext as { authorizer: unknown }).authorizer = {
      lambda: { tenant_id: TENANT, subject: "billing-bot", credential: "api-key" },
    };
    const keyed = await handler(byKey);
    expect(JSON.parse(keyed.body!)).toMatchObject({ metadata: { owner: "billing-bot" } });
  });

  it("refuses a credential that names no user (403), writing nothing", async () => {
    const refused = await handler(apiEvent("POST", "/threads", { body: "{}", claims: claims() }));
    expect(refused.statusCode).toBe(403);
    expect(JSON.parse(refused.body!).detail).toMatch(/names no user/);
  });
});

describe("the example auth (src/examples/auth.ts) through the Lambda handler: scopes from the JWT", () => {
  const handler = createHandler({
    assistants: { echo },
    checkpointer: new InMemorySaver(),
    auth: teamAuth,
    logger: pino({ level: "silent" }),
    metrics: false,
  });
  const as = (sub: string, scope?: string) => ({
    "custom:tenant_id": TENANT,
    sub,
    ...(scope ? { scope } : {}),
  });

  it("lets a user with the admin scope see every thread of the tenant, and no one else's", async () => {
    const created = await handler(
      apiEvent("POST", "/threads", { body: "{}", claims: as("alice") }),
    );
    const { thread_id: threadId } = JSON.parse(created.body!) as { thread_id: string };
    const read = (claims: Record<string, string>) =>
      handler(apiEvent("GET", `/threads/${threadId}`, { claims }));
    expect((await read(as("alice"))).statusCode).toBe(200);
    expect((await read(as("bob"))).statusCode).toBe(404);
    expect((await read(as("root", `openid ${THREADS_ADMIN_SCOPE}`))).statusCode).toBe(200);
    const put = await handler(
      apiEvent("PUT", "/store/items", {
        body: JSON.stringify({ namespace: ["alice"], key: "k", value: { a: 1 } }),
        claims: as("bob"),
      }),
    );
    expect(put.statusCode).toBe(403);
  });
});
