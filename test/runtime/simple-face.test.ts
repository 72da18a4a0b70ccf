import { SignJWT } from "jose";
import { signDevToken } from "../../src/dev/auth";
import {
  backendOptions,
  bookingAssistants,
  postJson,
  startTestServer,
  type Backend,
  type TestServer,
} from "./support";

/** The simple face, `POST /invoke`, through the dev server. */
describe.each<Backend>(["memory", "dynamodb"])("simple face (%s checkpointer)", (backend) => {
  let server: TestServer;
  let token: string;
  let booked = 0;

  beforeAll(async () => {
    server = await startTestServer({
      assistants: bookingAssistants(() => {
        booked += 1;
      }),
      ...(await backendOptions(backend)),
    });
    token = await server.token("tenant-simple");
  });

  afterAll(async () => {
    await server.close();
  });

  it("pauses with 202 and an ask, then completes with 200 and the result", async () => {
    const started = await postJson(`${server.url}/invoke`, token, {
      thread_id: "booking-1",
      input: { request: "move my appointment" },
    });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({
      status: "PAUSED_FOR_HUMAN",
      thread_id: "booking-1",
      ask: { question: expect.any(String), slot: "2026-09-10T14:00" },
      next_node: "human_approval",
    });

    const status = await fetch(`${server.url}/threads/booking-1/status`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(status.status).toBe(200);
    expect(status.headers.get("content-type")).toBe("application/json");
    expect(await status.json()).toMatchObject({
      status: "PAUSED_FOR_HUMAN",
      next_node: "human_approval",
      ask: { slot: "2026-09-10T14:00" },
    });

    const done = await postJson(`${server.url}/invoke`, token, {
      thread_id: "booking-1",
      resume: { approve: true },
    });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({
      status: "COMPLETED",
      thread_id: "booking-1",
      result: {
        request: "move my appointment",
        slot: "2026-09-10T14:00",
        approved: true,
        booked: true,
      },
    });
    expect(booked).toBe(1);

    const again = await postJson(`${server.url}/invoke`, token, {
      thread_id: "booking-1",
      resume: { approve: true },
    });
    expect(again.status).toBe(409);
    expect(booked).toBe(1);

    const finalStatus = await fetch(`${server.url}/threads/booking-1/status`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(await finalStatus.json()).toMatchObject({ status: "COMPLETED", next_node: null });
  });

  it("keeps two tenants with the same thread id apart", async () => {
    const other = await server.token("tenant-simple-other");
    await postJson(`${server.url}/invoke`, token, {
      thread_id: "shared-id",
      input: { request: "a" },
    });
    const resumedByOther = await postJson(`${server.url}/invoke`, other, {
      thread_id: "shared-id",
      resume: { approve: true },
    });
    expect(resumedByOther.status).toBe(404);
    const status = await fetch(`${server.url}/threads/shared-id/status`, {
      headers: { authorization: `Bearer ${other}` },
    });
    expect(status.status).toBe(404);
  });

  it("rejects tokens like API Gateway's JWT authorizer (401) before the handler runs", async () => {
    const body = { thread_id: "auth-1", input: { request: "x" } };
    const expired = await signDevToken(server.keys, {
      tenantId: "tenant-simple",
      expiresIn: Math.floor(Date.now() / 1000) - 60,
    });
    const wrongAudience = await signDevToken(server.keys, {
      tenantId: "tenant-simple",
      audience: "someone-else",
    });
    const wrongIssuer = await signDevToken(server.keys, {
      tenantId: "tenant-simple",
      issuer: "https://evil.example",
    });
    const foreignKey = await new SignJWT({ "custom:tenant_id": "tenant-simple" })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer("memory-table-dev")
      .setAudience("memory-table")
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode("a-secret-that-is-not-the-dev-key"));
    // Signed with the dev key, right issuer and audience, but no expiry: API Gateway requires `exp`.
    const noExpiry = await new SignJWT({ "custom:tenant_id": "tenant-simple" })
      .setProtectedHeader({ alg: "ES256" })
      .setIssuer("memory-table-dev")
      .setAudience("memory-table")
      .sign(server.keys.privateKey);
    for (const bad of [expired, wrongAudience, wrongIssuer, foreignKey, noExpiry, "not-a-jwt"]) {
      const response = await postJson(`${server.url}/invoke`, bad, body);
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ message: "Unauthorized" });
    }
    const missing = await fetch(`${server.url}/invoke`, {
      method: "POST",
      body: JSON.stringify(body),
    });
    expect(missing.status).toBe(401);
    // None of them reached the handler: the thread was never created.
    const status = await fetch(`${server.url}/threads/auth-1/status`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(status.status).toBe(404);
  });

  it("lists paused threads in the inbox by the simple face's status name PAUSED_FOR_HUMAN", async () => {
    const paused = await postJson(`${server.url}/invoke`, token, {
      thread_id: "inbox-simple",
      input: { request: "needs approval" },
    });
    expect(paused.status).toBe(202);
    const search = await postJson(`${server.url}/threads/search`, token, {
      status: "PAUSED_FOR_HUMAN",
      limit: 100,
    });
    expect(search.status).toBe(200);
    const threads = search.body as unknown as Array<{ thread_id: string; status: string }>;
    expect(threads.map((thread) => thread.thread_id)).toContain("inbox-simple");
    expect(threads.every((thread) => thread.status === "interrupted")).toBe(true);
    const other = await postJson(`${server.url}/threads/search`, await server.token("tenant-x"), {
      status: "PAUSED_FOR_HUMAN",
    });
    expect(other.body).toEqual([]);
  });

  it("answers 401 when a verified token carries no tenant claim", async () => {
    const noTenant = await new SignJWT({ sub: "user" })
      .setProtectedHeader({ alg: "ES256" })
      .setIssuer("memory-table-dev")
      .setAudience("memory-table")
      .setExpirationTime("1h")
      .sign(server.keys.privateKey);
    const response = await postJson(`${server.url}/invoke`, noTenant, {
      thread_id: "x",
      input: {},
    });
    expect(response.status).toBe(401);
  });

  it("runs through the run machinery: each call is a run record the server face lists", async () => {
    const started = await postJson(`${server.url}/invoke`, token, {
      thread_id: "booking-runs",
      input: { request: "move my appointment" },
    });
    expect(started.status).toBe(202);
    const refused = await postJson(`${server.url}/invoke`, token, {
      thread_id: "booking-runs",
      input: { request: "start over" },
    });
    expect(refused.status).toBe(409);
    const done = await postJson(`${server.url}/invoke`, token, {
      thread_id: "booking-runs",
      resume: { approve: true },
    });
    expect(done.status).toBe(200);
    const listed = await fetch(`${server.url}/threads/booking-runs/runs`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(listed.status).toBe(200);
    const runs = (await listed.json()) as Array<Record<string, unknown>>;
    // Newest first; the refused start left no run behind.
    expect(runs.map((run) => [run.status, run.multitask_strategy])).toEqual([
      ["success", "reject"],
      ["success", "reject"],
    ]);
    expect(runs[0]!.kwargs).toMatchObject({ command: { resume: { approve: true } } });
    expect(runs[1]!.kwargs).toMatchObject({ input: { request: "move my appointment" } });
  });
});
