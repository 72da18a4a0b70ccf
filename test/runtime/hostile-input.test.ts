import { SignJWT } from "jose";
import { createHandler, type ApiHandler } from "../../src/runtime/handler";
import {
  apiEvent,
  backendOptions,
  bookingAssistants,
  quietLogger,
  startTestServer,
  type Backend,
  type TestServer,
} from "./support";

/** The deepest JSON body accepted: every object or array counts as one level, the body's own included. */
const MAX_DEPTH = 64;
const BACKENDS: Backend[] = ["memory", "dynamodb"];

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** Calls the handler as API Gateway would; `body` is sent as is when a string, else as JSON. */
async function send(
  handler: ApiHandler,
  method: string,
  path: string,
  options: { body?: unknown; tenantId?: string; claims?: Record<string, unknown> } = {},
): Promise<Answer> {
  const body =
    options.body === undefined || typeof options.body === "string"
      ? options.body
      : JSON.stringify(options.body);
  const result = await handler(
    apiEvent(method, path, {
      body,
      tenantId: options.tenantId,
      // The authorizer's claims are typed as strings; these tests hand the handler other JSON types on purpose.
      claims: options.claims as Record<string, string> | undefined,
    }),
  );
  return {
    status: result.statusCode,
    body: result.body ? (JSON.parse(result.body) as Record<string, unknown>) : {},
  };
}

/** JSON text of `levels` nested containers around a number: arrays, objects or both in turn. */
function nested(levels: number, shape: "arrays" | "objects" | "mixed" = "mixed"): string {
  const closers: string[] = [];
  let text = "";
  for (let level = 0; level < levels; level += 1) {
    const array = shape === "arrays" || (shape === "mixed" && level % 2 === 0);
    text += array ? "[" : '{"k":';
    closers.push(array ? "]" : "}");
  }
  return text + "1" + closers.reverse().join("");
}

/** The nesting depth of a JSON text, counted independently of the server to keep the boundary honest. */
function depthOf(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index];
    if (inString) {
      if (character === "\\") index += 1;
      else if (character === '"') inString = false;
    } else if (character === '"') inString = true;
    else if (character === "[" || character === "{") deepest = Math.max(deepest, ++depth);
    else if (character === "]" || character === "}") depth -= 1;
  }
  return deepest;
}

function expectDepthRefusal(answer: Answer): void {
  expect(answer.status).toBe(400);
  expect(answer.body.detail).toMatch(/^Invalid body/);
  expect(answer.body.detail).toMatch(/nest|depth|deep/i);
}

const path = (threadId: string, suffix = "") => `/threads/${encodeURIComponent(threadId)}${suffix}`;

describe.each(BACKENDS)("bodies nested deeper than 64 levels (%s)", (backend) => {
  let handler: ApiHandler;
  const booked: string[] = [];

  beforeAll(async () => {
    handler = createHandler({
      assistants: bookingAssistants((state) => {
        booked.push(state.request);
      }),
      logger: quietLogger,
      metrics: false,
      ...(await backendOptions(backend)),
    });
  });

  it("refuses a resume 10,000 levels deep (simple face) without booking, leaving the thread paused", async () => {
    const started = await send(handler, "POST", "/invoke", {
      body: { thread_id: "deep-resume-simple", input: { request: "simple-deep" } },
    });
    expect(started.status).toBe(202);

    // An approval that would book if it were run: only the depth may stop it.
    const deep = `{"thread_id":"deep-resume-simple","resume":{"approve":true,"note":${nested(10_000)}}}`;
    expect(Buffer.byteLength(deep)).toBeLessThan(256 * 1024);
    expectDepthRefusal(await send(handler, "POST", "/invoke", { body: deep }));
    expect(booked).not.toContain("simple-deep");

    const status = await send(handler, "GET", path("deep-resume-simple", "/status"));
    expect(status.body).toMatchObject({ status: "PAUSED_FOR_HUMAN", next_node: "human_approval" });

    const done = await send(handler, "POST", "/invoke", {
      body: { thread_id: "deep-resume-simple", resume: { approve: true } },
    });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: "COMPLETED", result: { booked: true } });
    expect(booked.filter((request) => request === "simple-deep")).toHaveLength(1);
  });

  it("refuses a command.resume 10,000 levels deep (SDK face) without booking, leaving the thread interrupted", async () => {
    const threadId = "deep-resume-sdk";
    expect(
      (await send(handler, "POST", "/threads", { body: { thread_id: threadId } })).status,
    ).toBe(200);
    const paused = await send(handler, "POST", path(threadId, "/runs/wait"), {
      body: { assistant_id: "booking", input: { request: "sdk-deep" } },
    });
    expect(paused.body.__interrupt__).toHaveLength(1);

    const deep = `{"assistant_id":"booking","command":{"resume":{"approve":true,"note":${nested(10_000, "arrays")}}}}`;
    expect(Buffer.byteLength(deep)).toBeLessThan(256 * 1024);
    expectDepthRefusal(await send(handler, "POST", path(threadId, "/runs/wait"), { body: deep }));
    expect(booked).not.toContain("sdk-deep");

    expect((await send(handler, "GET", path(threadId))).body.status).toBe("interrupted");
    expect((await send(handler, "GET", path(threadId, "/state"))).body.next).toEqual([
      "human_approval",
    ]);

    const done = await send(handler, "POST", path(threadId, "/runs/wait"), {
      body: { assistant_id: "booking", command: { resume: { approve: true } } },
    });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ approved: true, booked: true });
    expect(booked.filter((request) => request === "sdk-deep")).toHaveLength(1);
  });

  // Each body is one level too deep (or far too deep); `probe` must still be missing afterwards.
  const tooDeep = nested(MAX_DEPTH - 1, "objects");
  it.each<{ name: string; method: string; url: string; body: string; probe?: string }>([
    {
      name: "a start whose input is 65 levels deep (simple face)",
      method: "POST",
      url: "/invoke",
      body: `{"thread_id":"deep-start","input":{"request":"r","note":${tooDeep}}}`,
      probe: path("deep-start", "/status"),
    },
    {
      name: "a start with 10,000 levels deep inside an array (simple face)",
      method: "POST",
      url: "/invoke",
      body: `{"thread_id":"deep-array","input":{"request":"r","list":[1,"two",${nested(10_000, "arrays")}]}}`,
      probe: path("deep-array", "/status"),
    },
    {
      name: "a start with an unknown field 65 levels deep (simple face)",
      method: "POST",
      url: "/invoke",
      body: `{"thread_id":"deep-extra","input":{"request":"r"},"extra":{"x":${tooDeep}}}`,
      probe: path("deep-extra", "/status"),
    },
    {
      name: "a thread whose metadata is 65 levels deep (SDK face)",
      method: "POST",
      url: "/threads",
      body: `{"thread_id":"deep-metadata","metadata":{"note":${tooDeep}}}`,
      probe: path("deep-metadata"),
    },
    {
      name: "a run creating its thread with input 10,000 levels deep (SDK face)",
      method: "POST",
      url: path("deep-run", "/runs/wait"),
      body: `{"assistant_id":"booking","if_not_exists":"create","input":{"request":"r","note":${nested(10_000)}}}`,
      probe: path("deep-run"),
    },
    {
      name: "an inbox search whose metadata filter is 65 levels deep (SDK face)",
      method: "POST",
      url: "/threads/search",
      body: `{"status":"interrupted","metadata":{"note":${tooDeep}}}`,
    },
  ])("refuses $name with 400 before anything is written", async (testCase) => {
    expect(depthOf(testCase.body)).toBeGreaterThan(MAX_DEPTH);
    expectDepthRefusal(await send(handler, testCase.method, testCase.url, { body: testCase.body }));
    if (testCase.probe) {
      expect((await send(handler, "GET", testCase.probe)).status).toBe(404);
    }
  });

  it("accepts bodies exactly 64 levels deep on both faces", async () => {
    const deepest = nested(MAX_DEPTH - 2, "mixed");
    const start = `{"thread_id":"depth-64","input":{"request":"depth-64","note":${deepest}}}`;
    expect(depthOf(start)).toBe(MAX_DEPTH);
    expect((await send(handler, "POST", "/invoke", { body: start })).status).toBe(202);

    const resume = `{"thread_id":"depth-64","resume":{"approve":true,"note":${deepest}}}`;
    expect(depthOf(resume)).toBe(MAX_DEPTH);
    const done = await send(handler, "POST", "/invoke", { body: resume });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: "COMPLETED", result: { booked: true } });

    const create = `{"thread_id":"depth-64-sdk","metadata":{"note":${deepest}}}`;
    expect(depthOf(create)).toBe(MAX_DEPTH);
    expect((await send(handler, "POST", "/threads", { body: create })).status).toBe(200);
    const thread = await send(handler, "GET", path("depth-64-sdk"));
    expect(thread.body.metadata).toEqual({ note: JSON.parse(deepest) });

    const search = `{"metadata":{"note":${deepest}}}`;
    expect(depthOf(search)).toBe(MAX_DEPTH);
    const found = await send(handler, "POST", "/threads/search", { body: search });
    expect(found.status).toBe(200);
    expect((found.body as unknown as Array<{ thread_id: string }>).map((t) => t.thread_id)).toEqual(
      ["depth-64-sdk"],
    );
  });
});

describe.each(BACKENDS)("thread ids (%s)", (backend) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({
      assistants: bookingAssistants(),
      ...(await backendOptions(backend)),
    });
  });

  afterAll(async () => {
    await server.close();
  });

  it("serves a 256-character id with #, %, $ and an emoji on every route, for a 200-character tenant", async () => {
    const tenant = `tenant-${backend}-`.padEnd(200, "t");
    const threadId = "🦜 id#%$%23#🦜".padEnd(256, "x");
    expect(tenant).toHaveLength(200);
    expect(threadId).toHaveLength(256);
    const client = await server.client(tenant);
    const token = await server.token(tenant);

    // Each step names its route, so a failure says which route refused an id the others accepted.
    const step = async <T>(route: string, work: () => Promise<T>): Promise<T> => {
      try {
        return await work();
      } catch (error) {
        throw new Error(`${route}: ${(error as Error).message}`, { cause: error });
      }
    };

    const created = await step("create", () => client.threads.create({ threadId }));
    expect(created.thread_id).toBe(threadId);
    const paused = (await step("runs.wait start", () =>
      client.runs.wait(threadId, "booking", { input: { request: "long id" } }),
    )) as Record<string, unknown>;
    expect(paused.__interrupt__).toHaveLength(1);

    const thread = await step("get", () => client.threads.get(threadId));
    expect(thread).toMatchObject({ thread_id: threadId, status: "interrupted" });
    const state = await step("state", () => client.threads.getState(threadId));
    expect(state.next).toEqual(["human_approval"]);
    expect(state.checkpoint.thread_id).toBe(threadId);
    const history = await step("history", () => client.threads.getHistory(threadId));
    expect(history.length).toBeGreaterThanOrEqual(1);
    const listed = await step("search", () => client.threads.search({ status: "interrupted" }));
    expect(listed.map((item) => item.thread_id)).toEqual([threadId]);
    const status = await step("status", () =>
      fetch(`${server.url}${path(threadId, "/status")}`, {
        headers: { authorization: `Bearer ${token}` },
      }),
    );
    expect(status.status).toBe(200);
    expect(await status.json()).toMatchObject({ thread_id: threadId, status: "PAUSED_FOR_HUMAN" });

    const done = (await step("runs.wait resume", () =>
      client.runs.wait(threadId, "booking", { command: { resume: { approve: true } } }),
    )) as Record<string, unknown>;
    expect(done).toMatchObject({ approved: true, booked: true });

    await step("delete", () => client.threads.delete(threadId));
    await expect(client.threads.get(threadId)).rejects.toThrow(/404/);
  });

  it.each([".", ".."])(
    "refuses the path-segment id %j on both faces (422 SDK, 400 simple)",
    async (threadId) => {
      const created = await send(server.handler, "POST", "/threads", {
        body: { thread_id: threadId },
      });
      expect(created.status).toBe(422);
      expect(created.body.detail).toMatch(/Invalid thread_id/);
      const started = await send(server.handler, "POST", "/invoke", {
        body: { thread_id: threadId, input: { request: "r" } },
      });
      expect(started.status).toBe(400);
      expect(started.body.detail).toMatch(/Invalid thread_id/);
    },
  );

  it("refuses an id with a lone surrogate on both faces (422 SDK, 400 simple)", async () => {
    // The JSON escape itself, as a client would send it: JSON.parse turns it into a lone surrogate.
    const created = await send(server.handler, "POST", "/threads", {
      body: '{"thread_id":"a\\ud800b"}',
    });
    expect(created.status).toBe(422);
    expect(created.body.detail).toMatch(/Invalid thread_id/);
    const started = await send(server.handler, "POST", "/invoke", {
      body: '{"thread_id":"a\\ud800b","input":{"request":"r"}}',
    });
    expect(started.status).toBe(400);
    expect(started.body.detail).toMatch(/Invalid thread_id/);
  });
});

describe.each(BACKENDS)("run ids (%s)", (backend) => {
  let server: TestServer;
  const tenant = `run-ids-${backend}`;
  const threadId = "run-ids";
  // Every route with a {run_id}: each must refuse a bad id before any store is read or written.
  const RUN_ROUTES = [
    ["GET", ""],
    ["GET", "/join"],
    ["GET", "/stream"],
    ["POST", "/cancel"],
    ["DELETE", ""],
  ] as const;

  beforeAll(async () => {
    server = await startTestServer({
      assistants: bookingAssistants(),
      ...(await backendOptions(backend)),
    });
  });

  afterAll(async () => {
    await server.close();
  });

  const call = async (method: string, runId: string, suffix: string) => {
    const response = await fetch(
      `${server.url}${path(threadId, `/runs/${encodeURIComponent(runId)}${suffix}`)}`,
      { method, headers: { authorization: `Bearer ${await server.token(tenant)}` } },
    );
    const text = await response.text();
    return {
      status: response.status,
      detail: text ? (JSON.parse(text) as { detail?: string }).detail : "",
    };
  };

  it("answers 422 to a 10,000-character or control-character run id on every run route, changing nothing", async () => {
    const client = await server.client(tenant);
    await client.threads.create({ threadId });
    // A real run on the thread, paused at its approval: what a refused request must leave as it is.
    const paused = (await client.runs.wait(threadId, "booking", {
      input: { request: "run ids" },
    })) as Record<string, unknown>;
    expect(paused.__interrupt__).toHaveLength(1);
    const [run] = await client.runs.list(threadId);

    for (const badId of ["r".repeat(10_000), "r".repeat(257), "run\u0001id"]) {
      for (const [method, suffix] of RUN_ROUTES) {
        const answer = await call(method, badId, suffix);
        expect({ route: `${method} ${suffix}`, ...answer }).toEqual({
          route: `${method} ${suffix}`,
          status: 422,
          detail: expect.stringMatching(/^Invalid run_id: expected /),
        });
      }
    }
    // The official client sees the same 422.
    await expect(client.runs.get(threadId, "r".repeat(10_000))).rejects.toThrow(/422/);

    expect(await client.runs.list(threadId)).toEqual([run]);
    expect(await client.threads.get(threadId)).toMatchObject({ status: "interrupted" });
  });

  it("answers 404, not 500, to an unknown 256-character run id on every run route", async () => {
    const longest = "🦜#%$".padEnd(256, "r");
    expect(longest).toHaveLength(256);
    for (const [method, suffix] of RUN_ROUTES) {
      expect({ route: `${method} ${suffix}`, ...(await call(method, longest, suffix)) }).toEqual({
        route: `${method} ${suffix}`,
        status: 404,
        detail: expect.stringMatching(/not found/),
      });
    }
  });
});

describe("tenant claims", () => {
  let server: TestServer;
  const PROBE = "claim-probe";

  beforeAll(async () => {
    server = await startTestServer({
      assistants: bookingAssistants(),
      ...(await backendOptions("memory")),
    });
  });

  afterAll(async () => {
    await server.close();
  });

  /** Creates the probe thread under a tenant whose id is a string form another claim type could take. */
  const createProbe = async (tenantId: string) => {
    const created = await send(server.handler, "POST", "/threads", {
      body: { thread_id: PROBE, if_exists: "do_nothing" },
      tenantId,
    });
    expect(created.status).toBe(200);
  };

  it("answers 401 when the claim is absent", async () => {
    const answer = await send(server.handler, "GET", path(PROBE), { claims: {} });
    expect(answer.status).toBe(401);
  });

  it.each<[string, unknown]>([
    ["null", null],
    ["a number", 42],
    ["a boolean", true],
    ["an array", ["tenant-a"]],
    ["an object", { tenant: "tenant-a" }],
    ["an empty string", ""],
  ])("refuses a claim that is %s (401/403), never reading it as a tenant", async (_, value) => {
    // Threads exist under every tenant id the value could be coerced to: none of them may be reached.
    for (const alias of new Set([String(value), JSON.stringify(value)])) {
      if (alias !== "") await createProbe(alias);
    }
    const claims = { "custom:tenant_id": value };
    const read = await send(server.handler, "GET", path(PROBE), { claims });
    expect([401, 403]).toContain(read.status);
    const search = await send(server.handler, "POST", "/threads/search", { body: {}, claims });
    expect([401, 403]).toContain(search.status);
    const started = await send(server.handler, "POST", "/invoke", {
      body: { thread_id: "claim-start", input: { request: "r" } },
      claims,
    });
    expect([401, 403]).toContain(started.status);
  });

  it("answers 403 to a claim with a lone surrogate", async () => {
    const answer = await send(server.handler, "GET", path(PROBE), {
      claims: { "custom:tenant_id": "a\ud800b" },
    });
    expect(answer.status).toBe(403);
  });

  it.each<[string, unknown]>([
    ["null", null],
    ["42", 42],
  ])(
    "refuses a signed dev token whose tenant claim is %s (401/403, never 2xx)",
    async (alias, value) => {
      await createProbe(alias);
      const token = await new SignJWT({ "custom:tenant_id": value })
        .setProtectedHeader({ alg: "ES256" })
        .setIssuer("memory-table-dev")
        .setAudience("memory-table")
        .setExpirationTime("1h")
        .sign(server.keys.privateKey);
      const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
      const read = await fetch(`${server.url}${path(PROBE)}`, { headers });
      expect([401, 403]).toContain(read.status);
      const started = await fetch(`${server.url}/invoke`, {
        method: "POST",
        headers,
        body: JSON.stringify({ thread_id: "token-start", input: { request: "r" } }),
      });
      expect([401, 403]).toContain(started.status);
    },
  );
});

describe.each(BACKENDS)("only a field's own values are accepted (%s)", (backend) => {
  let handler: ApiHandler;

  beforeAll(async () => {
    handler = createHandler({
      assistants: bookingAssistants(),
      logger: quietLogger,
      metrics: false,
      ...(await backendOptions(backend)),
    });
    expect(
      (await send(handler, "POST", "/threads", { body: { thread_id: "own-properties" } })).status,
    ).toBe(200);
  });

  it.each(["__proto__", "constructor", "toString", "hasOwnProperty"])(
    "answers 422 to the inbox status %j",
    async (status) => {
      const answer = await send(handler, "POST", "/threads/search", { body: { status } });
      expect(answer.status).toBe(422);
      expect(answer.body.detail).toMatch(/Invalid status/);
    },
  );

  it.each(["__proto__", "constructor"])(
    "answers 422 to if_exists %j without creating the thread",
    async (ifExists) => {
      const threadId = `if-exists-${ifExists}`;
      const answer = await send(handler, "POST", "/threads", {
        body: { thread_id: threadId, if_exists: ifExists },
      });
      expect(answer.status).toBe(422);
      expect(answer.body.detail).toMatch(/Invalid if_exists/);
      expect((await send(handler, "GET", path(threadId))).status).toBe(404);
    },
  );

  it.each(["__proto__", "constructor", "toString"])(
    "answers 404 (unknown assistant) to assistant_id %j on both faces",
    async (assistantId) => {
      const run = await send(handler, "POST", path("own-properties", "/runs/wait"), {
        body: { assistant_id: assistantId, input: { request: "r" } },
      });
      expect(run.status).toBe(404);
      expect(run.body.detail).toMatch(/No assistant found for/);

      const threadId = `assistant-${assistantId}`;
      const invoke = await send(handler, "POST", "/invoke", {
        body: { thread_id: threadId, assistant_id: assistantId, input: { request: "r" } },
      });
      expect(invoke.status).toBe(404);
      expect(invoke.body.detail).toMatch(/Assistant not found/);
      expect((await send(handler, "GET", path(threadId, "/status"))).status).toBe(404);
    },
  );
});
