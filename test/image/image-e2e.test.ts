import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, relative } from "node:path";
import { DeleteItemCommand, QueryCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { threadPartitionKey, THREAD_RECORD_SK } from "../../src/table/keys";
import { BOOTSTRAP_FILE, RIC_DIR } from "../../scripts/build-image";
import { writeCompileCache } from "../../scripts/compile-cache";
import { COMPILE_CACHE_DIR } from "../../image/compile-cache";
import { IMAGE_HANDLERS } from "../../src/runtime/environment";
import {
  createLocalClient,
  createTestTable,
  deleteTestTable,
  localEndpoint,
} from "../support/dynamodb";
import { apiGatewayEvent, dynamodbStreamEvent, resultBody, type HttpRequest } from "./events";
import {
  imageNodeBinary,
  IMAGE_NODE_MAJOR,
  missingImageNode,
  startRic,
  type RicProcess,
} from "./ric-process";
import { RuntimeApiEmulator, type InvocationOutcome } from "./runtime-api";
import { bundleGraphModule, prepareTaskRoot, writeModule, type TaskRoot } from "./task-root";

/**
 * The image's content, end to end, without Docker: `npm run build:image`'s tree, run by aws-lambda-ric on the
 * image's Node major against a Lambda Runtime API on 127.0.0.1, with DynamoDB Local as the table.
 */
const node = imageNodeBinary();
if (!node) console.log(`SKIP: image end-to-end tests: ${missingImageNode()}`);
const describeWithImageNode = node ? describe : describe.skip;

describeWithImageNode(
  "container image end to end (integration: ric on Node 22, DynamoDB Local)",
  () => {
    let taskRoot: TaskRoot;
    let client: DynamoDBClient;
    let tableName: string;
    const running: Runtime[] = [];

    beforeAll(async () => {
      taskRoot = await prepareTaskRoot();
      client = createLocalClient();
      tableName = await createTestTable(client, "memory-table-image");
      // What an app team's `COPY` adds on top of the image (way a of the README).
      await bundleGraphModule(
        join(__dirname, "fixtures", "echo-graph.ts"),
        taskRoot.dir,
        "graphs/echo-graph.mjs",
      );
      writeModule(
        taskRoot.dir,
        "graphs/throws.cjs",
        'throw new Error("graph module exploded at load");\n',
      );
      writeModule(taskRoot.dir, "graphs/wrong-shape.mjs", "export const answer = 42;\n");
      await bundleGraphModule(
        join(__dirname, "fixtures", "auth-graph.ts"),
        taskRoot.dir,
        "graphs/auth-graph.mjs",
      );
    }, 60_000);

    afterEach(async () => {
      await Promise.all(
        running.splice(0).map(async ({ ric, api }) => {
          await ric.kill();
          await api.stop();
        }),
      );
    });

    afterAll(async () => {
      if (tableName) await deleteTestTable(client, tableName);
      client?.destroy();
      taskRoot?.remove();
    });

    /** One execution environment: its own Runtime API and the runtime process polling it. */
    interface Runtime {
      api: RuntimeApiEmulator;
      ric: RicProcess;
    }

    async function start(handler: string, env: Record<string, string> = {}): Promise<Runtime> {
      const api = await RuntimeApiEmulator.start();
      const ric = startRic({
        node: node!,
        taskRoot: taskRoot.dir,
        handler,
        runtimeApi: api.address,
        env: {
          TABLE_NAME: tableName,
          DYNAMODB_ENDPOINT: localEndpoint(),
          LOG_LEVEL: "warn",
          ...env,
        },
      });
      const runtime = { api, ric };
      running.push(runtime);
      return runtime;
    }

    /** Invokes through the Runtime API; fails fast with the process output if the runtime dies instead. */
    async function invoke({ api, ric }: Runtime, event: unknown): Promise<InvocationOutcome> {
      const died = ric.exited.then((code) => {
        throw new Error(`runtime exited (${String(code)}) before answering:\n${ric.output()}`);
      });
      return Promise.race([api.invoke(event, { timeoutMs: 20_000 }), died]);
    }

    async function request(runtime: Runtime, request: HttpRequest) {
      const outcome = await invoke(runtime, apiGatewayEvent(request));
      if (outcome.kind !== "response") {
        throw new Error(
          `expected a response, got ${JSON.stringify(outcome)}:\n${runtime.ric.output()}`,
        );
      }
      const result = outcome.body as { statusCode: number };
      return { statusCode: result.statusCode, body: resultBody(result) };
    }

    it(`runs on Node ${IMAGE_NODE_MAJOR}, the Dockerfile's Node major`, () => {
      expect(execFileSync(node!, ["--version"], { encoding: "utf8" })).toMatch(
        new RegExp(`^v${IMAGE_NODE_MAJOR}\\.`),
      );
    });

    it("refuses to start without a handler command, saying what it expected", () => {
      const result = spawnSync(node!, [join(taskRoot.dir, BOOTSTRAP_FILE)], {
        env: { PATH: "/usr/bin:/bin" },
        encoding: "utf8",
      });
      expect(result.status).toBe(2);
      expect(result.stderr.trim()).toBe(
        "Invalid command: expected a handler such as index.handler or cleaner.handler, got nothing",
      );
    });

    it("pauses the booking graph in one process and completes it in a fresh one after the first is killed", async () => {
      const threadId = `booking-${randomUUID()}`;
      const first = await start(IMAGE_HANDLERS.api);
      const paused = await request(first, {
        method: "POST",
        path: "/invoke",
        tenant: "acme",
        body: { thread_id: threadId, input: { request: "move my appointment" } },
      });
      expect(paused.statusCode).toBe(202);
      expect(paused.body).toMatchObject({
        status: "PAUSED_FOR_HUMAN",
        thread_id: threadId,
        ask: { question: expect.any(String), slot: "2026-09-10T14:00" },
      });
      // The example's schemas, read from its TypeScript when the tree was built: Lambda has no compiler.
      const schemas = await request(first, {
        method: "GET",
        path: "/assistants/booking/schemas",
        tenant: "acme",
      });
      expect(schemas.statusCode).toBe(200);
      expect(schemas.body).toMatchObject({
        graph_id: "booking",
        state_schema: {
          type: "object",
          properties: { request: { type: "string" }, approved: { type: ["null", "boolean"] } },
        },
        input_schema: { properties: { request: { type: "string" } } },
      });

      // Lambda reclaims the execution environment: nothing of the first process survives but the table.
      await first.ric.kill();

      const second = await start(IMAGE_HANDLERS.api, { LOG_LEVEL: "info" });
      const otherTenant = await request(second, {
        method: "GET",
        path: `/threads/${threadId}/status`,
        tenant: "globex",
      });
      expect(otherTenant.statusCode).toBe(404);

      const completed = await request(second, {
        method: "POST",
        path: "/invoke",
        tenant: "acme",
        body: { thread_id: threadId, resume: { approve: true } },
      });
      expect(completed.statusCode).toBe(200);
      expect(completed.body).toMatchObject({
        status: "COMPLETED",
        thread_id: threadId,
        result: { slot: "2026-09-10T14:00", approved: true, booked: true },
      });
      // At info level: JSON lines from pino, one per request, carrying ids and outcomes but never state.
      const output = await second.ric.waitForOutput(/"outcome":"completed"/);
      const requestLogs = output
        .split("\n")
        .filter((line) => line.startsWith("{") && line.includes('"msg":"request"'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(requestLogs).toEqual([
        expect.objectContaining({ tenant: "globex", statusCode: 404 }),
        expect.objectContaining({
          tenant: "acme",
          thread: threadId,
          statusCode: 200,
          outcome: "completed",
        }),
      ]);
      expect(output).not.toMatch(/move my appointment|approve/);
    });

    it("serves a plug-in graph given by GRAPH_MODULE (relative to the task root) as the assistant agent", async () => {
      const runtime = await start(IMAGE_HANDLERS.api, { GRAPH_MODULE: "graphs/echo-graph.mjs" });
      const threadId = `echo-${randomUUID()}`;
      const answer = await request(runtime, {
        method: "POST",
        path: "/invoke",
        tenant: "acme",
        body: { thread_id: threadId, input: { text: "hello" } },
      });
      expect(answer.statusCode).toBe(200);
      expect(answer.body).toMatchObject({
        status: "COMPLETED",
        result: { text: "hello", echoed: "HELLO!" },
      });

      const assistant = await request(runtime, {
        method: "GET",
        path: "/assistants/agent",
        tenant: "acme",
      });
      expect(assistant.statusCode).toBe(200);
      // The image's schema file describes its example, not a plug-in graph: an Annotation graph's are unknown.
      const schemas = await request(runtime, {
        method: "GET",
        path: "/assistants/agent/schemas",
        tenant: "acme",
      });
      expect(schemas.body).toEqual({ graph_id: "agent" });
    });

    it("applies LangGraph auth in the image: AUTH_POLICY=owner-only, and a GRAPH_MODULE's bundled auth export", async () => {
      const setups: Array<Record<string, string>> = [
        { GRAPH_MODULE: "graphs/echo-graph.mjs", AUTH_POLICY: "owner-only" },
        { GRAPH_MODULE: "graphs/auth-graph.mjs" },
      ];
      for (const env of setups) {
        const runtime = await start(IMAGE_HANDLERS.api, env);
        const as = (subject: string, method: "GET" | "POST", path: string, body?: unknown) =>
          request(runtime, { method, path, tenant: "acme", subject, body });
        const created = await as("alice", "POST", "/threads", {});
        expect(created.body).toMatchObject({ metadata: { owner: "alice" } });
        const path = `/threads/${(created.body as { thread_id: string }).thread_id}`;
        expect((await as("alice", "GET", path)).statusCode).toBe(200);
        expect((await as("bob", "GET", path)).statusCode).toBe(404);
        const searched = await as("bob", "POST", "/threads/search", {
          metadata: { owner: "alice" },
        });
        expect(searched.body).toEqual([]);
        await runtime.ric.kill();
      }
    });

    it("runs an app team's own entry built on the library's createHandler (way b)", async () => {
      // Their image: their bundled entry next to the same runtime client, none of our handlers.
      const ownRoot = join(taskRoot.dir, "..", `${basename(taskRoot.dir)}-own`);
      mkdirSync(ownRoot);
      try {
        cpSync(join(taskRoot.dir, BOOTSTRAP_FILE), join(ownRoot, BOOTSTRAP_FILE));
        cpSync(join(taskRoot.dir, RIC_DIR), join(ownRoot, RIC_DIR), { recursive: true });
        await bundleGraphModule(
          join(__dirname, "fixtures", "own-image-handler.ts"),
          ownRoot,
          "handler.mjs",
        );
        const api = await RuntimeApiEmulator.start();
        const ric = startRic({
          node: node!,
          taskRoot: ownRoot,
          handler: "handler.handler",
          runtimeApi: api.address,
          env: { TABLE_NAME: tableName, DYNAMODB_ENDPOINT: localEndpoint(), LOG_LEVEL: "warn" },
        });
        running.push({ api, ric });
        const answer = await request(
          { api, ric },
          {
            method: "POST",
            path: "/invoke",
            tenant: "acme",
            body: { thread_id: `own-${randomUUID()}`, input: { text: "own image" } },
          },
        );
        expect(answer.statusCode).toBe(200);
        expect(answer.body).toMatchObject({
          status: "COMPLETED",
          result: { echoed: "OWN IMAGE!" },
        });
      } finally {
        rmSync(ownRoot, { recursive: true, force: true });
      }
    });

    it.each([
      [
        "a module that throws at load",
        { GRAPH_MODULE: "graphs/throws.cjs" },
        "GRAPH_MODULE",
        /graph module exploded at load/,
      ],
      [
        "a module with the wrong exports",
        { GRAPH_MODULE: "graphs/wrong-shape.mjs" },
        "GRAPH_MODULE",
        /got exports \{answer\}/,
      ],
      [
        "a module that does not exist",
        { GRAPH_MODULE: "graphs/missing.mjs" },
        "GRAPH_MODULE",
        /does not exist/,
      ],
      ["no table", { TABLE_NAME: "" }, "TABLE_NAME", /got nothing \(the variable is not set\)/],
      ["a malformed table name", { TABLE_NAME: "my table" }, "TABLE_NAME", /got "my table"/],
      ["a bad deadline margin", { DEADLINE_MARGIN_MS: "soon" }, "DEADLINE_MARGIN_MS", /got "soon"/],
    ])(
      "reports %s as an init error at the Runtime API, naming the variable once",
      async (_, env, variable, detail) => {
        const { api, ric } = await start(IMAGE_HANDLERS.api, env);
        const initError = await Promise.race([
          api.nextInitError(),
          ric.exited.then((code) => {
            throw new Error(`exited (${String(code)}) without an init error:\n${ric.output()}`);
          }),
        ]);
        expect(initError.errorType).toBe("InvalidConfigurationError");
        expect(initError.body.errorMessage).toMatch(new RegExp(`^Invalid ${variable}: `));
        expect(initError.body.errorMessage).toMatch(detail);
        expect(await ric.exited).toBe(1);
        // One logged error: the client's `Init Error` line, not a second crash dump of the same error.
        const lines = ric
          .output()
          .split("\n")
          .filter((line) => line.includes(`Invalid ${variable}`));
        expect(lines).toHaveLength(1);
        expect(lines[0]).toContain("Init Error");
      },
    );

    it("runs the cleaner command: a thread record's removal removes that thread's items, a live thread keeps its own", async () => {
      const api1 = await start(IMAGE_HANDLERS.api);
      const expired = `expired-${randomUUID()}`;
      const kept = `kept-${randomUUID()}`;
      for (const threadId of [expired, kept]) {
        const paused = await request(api1, {
          method: "POST",
          path: "/invoke",
          tenant: "acme",
          body: { thread_id: threadId, input: { request: "book" } },
        });
        expect(paused.statusCode).toBe(202);
      }
      // What DynamoDB TTL does: delete the thread record only.
      const expiredPk = threadPartitionKey("acme", expired);
      const keptPk = threadPartitionKey("acme", kept);
      await client.send(
        new DeleteItemCommand({
          TableName: tableName,
          Key: { pk: { S: expiredPk }, sk: { S: THREAD_RECORD_SK } },
        }),
      );
      expect(await itemCount(expiredPk)).toBeGreaterThan(0);
      const keptBefore = await itemCount(keptPk);

      const cleaner = await start(IMAGE_HANDLERS.cleaner);
      const outcome = await invoke(
        cleaner,
        dynamodbStreamEvent([
          { pk: expiredPk, sk: THREAD_RECORD_SK, byTtl: true },
          // A removal event for a thread whose record is live (here: it was recreated): its items stay.
          { pk: keptPk, sk: THREAD_RECORD_SK, byTtl: false },
          // Not a thread record: ignored.
          { pk: keptPk, sk: "c#0001", byTtl: true },
          // A partition DynamoDB refuses to query (an empty key value): a real failure of one thread,
          // reported by its sequence number so Lambda retries from it, not the whole batch.
          { pk: "", sk: THREAD_RECORD_SK, byTtl: true },
        ]),
      );
      expect(outcome).toMatchObject({
        kind: "response",
        body: { records: 4, threads: 3, batchItemFailures: [{ itemIdentifier: "1003" }] },
      });
      expect((outcome.body as { itemsRemoved: number }).itemsRemoved).toBeGreaterThan(0);
      expect(await itemCount(expiredPk)).toBe(0);
      expect(await itemCount(keptPk)).toBe(keptBefore);

      // Not a stream event: an invocation error (posted to /invocation/{id}/error), and nothing is removed.
      const invalid = await invoke(cleaner, { hello: "world" });
      expect(invalid).toMatchObject({
        kind: "error",
        body: {
          errorType: "InvalidEventError",
          errorMessage: expect.stringMatching(/^Invalid event: /),
        },
      });
      expect(await itemCount(keptPk)).toBe(keptBefore);
    });

    describe("the compile cache shipped in the task root (npm run build:image -- --compile-cache)", () => {
      let cacheTmp: string;
      beforeEach(() => {
        writeCompileCache(taskRoot.dir, node!);
        // Node's cache folder lives under the process's tmpdir (Lambda's /tmp): one of its own per test.
        cacheTmp = mkdtempSync(join(tmpdir(), "memory-table-compile-cache-tmp-"));
      });
      afterEach(() => {
        rmSync(join(taskRoot.dir, COMPILE_CACHE_DIR), { recursive: true, force: true });
        rmSync(cacheTmp, { recursive: true, force: true });
      });

      /** The modules whose compiled code Node took from the cache, by path relative to the task root. */
      function acceptedModules(output: string): string[] {
        const accepted = /cache for file:\/\/(\S+) was accepted/g;
        return [...output.matchAll(accepted)].map((match) => relative(taskRoot.dir, match[1]!));
      }

      it("a cold start takes the entry's and its chunks' compiled code from the cache, then serves requests", async () => {
        const runtime = await start(IMAGE_HANDLERS.api, {
          NODE_DEBUG_NATIVE: "COMPILE_CACHE",
          TMPDIR: cacheTmp,
        });
        const answer = await request(runtime, {
          method: "POST",
          path: "/invoke",
          tenant: "acme",
          body: { thread_id: `cached-${randomUUID()}`, input: { request: "book" } },
        });
        expect(answer.statusCode).toBe(202);
        // Every module a cold start of the API entry loads statically: none compiled from source.
        expect(acceptedModules(runtime.ric.output())).toEqual(
          expect.arrayContaining(taskRoot.build.loads["index.mjs"]!),
        );
      });

      it("a cache that does not match (corrupt, or another build's) is ignored: Node compiles the modules and the entry serves", async () => {
        const shipped = join(taskRoot.dir, COMPILE_CACHE_DIR);
        for (const file of readdirSync(shipped)) {
          const path = join(shipped, file);
          writeFileSync(path, randomBytes(statSync(path).size));
        }
        const runtime = await start(IMAGE_HANDLERS.api, {
          NODE_DEBUG_NATIVE: "COMPILE_CACHE",
          TMPDIR: cacheTmp,
        });
        const answer = await request(runtime, {
          method: "POST",
          path: "/invoke",
          tenant: "acme",
          body: { thread_id: `uncached-${randomUUID()}`, input: { request: "book" } },
        });
        expect(answer.statusCode).toBe(202);
        expect(runtime.ric.output()).toMatch(/magic number mismatch/);
        expect(acceptedModules(runtime.ric.output())).toEqual([]);
      });
    });

    async function itemCount(pk: string): Promise<number> {
      const page = await client.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: "pk = :pk",
          ExpressionAttributeValues: { ":pk": { S: pk } },
          Select: "COUNT",
          ConsistentRead: true,
        }),
      );
      return page.Count ?? 0;
    }
  },
);
