import { generateKeyPair } from "jose";
import { signDevToken } from "../../src/dev/auth";
import { createCorsPolicy, isLoopbackOrigin, readCorsOrigins } from "../../src/dev/cors";
import { streamingChatGraph } from "./graphs";
import { backendOptions, startTestServer, type TestServer } from "./support";

/**
 * The dev server's edge for browser UIs, with plain fetch (Node's fetch sends the `Origin` it is given): CORS
 * preflights answered before authentication, the allowed origin on every answer, and the dev token accepted as
 * `X-Api-Key` as it is as a bearer token. The browser test (test/browser/cross-origin-sdk.test.ts) runs the same
 * edge in Chromium.
 */
const LISTED = "https://ui.example.com";
const PAGE = "http://localhost:5173";
const INPUT = { messages: [{ role: "human", content: "hi" }] };

describe("dev server CORS and X-Api-Key", () => {
  let server: TestServer;
  let token: string;

  beforeAll(async () => {
    server = await startTestServer(
      { assistants: { chat: streamingChatGraph() }, ...(await backendOptions("memory")) },
      { corsOrigins: [LISTED] },
    );
    token = await server.token("tenant-cors");
  });

  afterAll(() => server.close());

  const preflight = (origin: string, method = "POST", headers = "x-api-key,content-type") =>
    fetch(`${server.url}/threads`, {
      method: "OPTIONS",
      headers: {
        origin,
        "access-control-request-method": method,
        "access-control-request-headers": headers,
      },
    });

  it.each([PAGE, "http://127.0.0.1:3001", "http://[::1]:8080", "https://localhost", LISTED])(
    "answers a preflight from %s with 204 and the allow headers, without a credential",
    async (origin) => {
      const answer = await preflight(origin);
      expect(answer.status).toBe(204);
      expect(await answer.text()).toBe("");
      expect(answer.headers.get("access-control-allow-origin")).toBe(origin);
      expect(answer.headers.get("access-control-allow-methods")).toBe(
        "GET, POST, PUT, PATCH, DELETE, OPTIONS",
      );
      const allowed = answer.headers.get("access-control-allow-headers")!.split(", ");
      expect(allowed).toEqual(
        expect.arrayContaining([
          "authorization",
          "x-api-key",
          "content-type",
          "last-event-id",
          "x-request-id",
          "x-auth-scheme",
          "accept",
          "mcp-protocol-version",
        ]),
      );
      expect(answer.headers.get("access-control-max-age")).toBe("600");
      expect(answer.headers.get("vary")).toMatch(/^Origin\b/);
      expect(answer.headers.get("www-authenticate")).toBeNull();
    },
  );

  it("allows the x- headers a preflight asks for (the SDK's defaultHeaders), and no other", async () => {
    const answer = await preflight(PAGE, "GET", "X-Tenant-Hint, x-api-key, cookie");
    const allowed = answer.headers.get("access-control-allow-headers")!.split(", ");
    expect(allowed).toContain("x-tenant-hint");
    expect(allowed.filter((name) => name === "x-api-key")).toHaveLength(1);
    expect(allowed).not.toContain("cookie");
  });

  it.each([
    "https://evil.example",
    "http://localhost.evil.example",
    "http://127.0.0.2:3000",
    "null",
  ])(
    "gives a preflight from %s no CORS headers, so the browser stops the request",
    async (origin) => {
      const answer = await preflight(origin);
      expect(answer.status).toBe(204);
      expect(answer.headers.get("access-control-allow-origin")).toBeNull();
      expect(answer.headers.get("access-control-allow-headers")).toBeNull();
      // A disallowed origin's actual request gets no CORS header either (the browser keeps the answer).
      const actual = await fetch(`${server.url}/threads/search`, {
        method: "POST",
        headers: { origin, "x-api-key": token, "content-type": "application/json" },
        body: "{}",
      });
      expect(actual.status).toBe(200);
      expect(actual.headers.get("access-control-allow-origin")).toBeNull();
      expect(actual.headers.get("vary")).toBe("Origin");
    },
  );

  it("answers a 401 with the allowed origin, so the page can read it", async () => {
    const answer = await fetch(`${server.url}/threads`, {
      method: "POST",
      headers: { origin: PAGE, "content-type": "application/json" },
      body: "{}",
    });
    expect(answer.status).toBe(401);
    expect(answer.headers.get("access-control-allow-origin")).toBe(PAGE);
    expect(answer.headers.get("vary")).toBe("Origin");
    expect(await answer.json()).toEqual({ message: "Unauthorized" });
  });

  it("serves the dev token as X-Api-Key on a route, with the origin and Content-Location exposed", async () => {
    const created = await fetch(`${server.url}/threads`, {
      method: "POST",
      headers: { origin: PAGE, "x-api-key": token, "content-type": "application/json" },
      body: "{}",
    });
    expect(created.status).toBe(200);
    expect(created.headers.get("access-control-allow-origin")).toBe(PAGE);
    const exposed = created.headers.get("access-control-expose-headers")!.split(", ");
    expect(exposed).toEqual(
      expect.arrayContaining(["content-location", "location", "x-pagination-next"]),
    );
    const { thread_id: threadId } = (await created.json()) as { thread_id: string };
    // The same thread through the bearer header: one tenant, whichever header carries the token.
    const read = await fetch(`${server.url}/threads/${threadId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(read.status).toBe(200);
    // Both headers with the same token are one credential.
    const both = await fetch(`${server.url}/threads/${threadId}`, {
      headers: { authorization: `Bearer ${token}`, "x-api-key": token },
    });
    expect(both.status).toBe(200);
  });

  it("streams a run to X-Api-Key with the allowed origin on the event stream", async () => {
    const answer = await fetch(`${server.url}/runs/stream`, {
      method: "POST",
      headers: { origin: PAGE, "x-api-key": token, "content-type": "application/json" },
      body: JSON.stringify({ assistant_id: "chat", input: INPUT, stream_mode: "values" }),
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(answer.headers.get("access-control-allow-origin")).toBe(PAGE);
    expect(answer.headers.get("vary")).toBe("Origin");
    expect(answer.headers.get("content-location")).toMatch(/^\/threads\/.+\/runs\/.+$/);
    const events = await answer.text();
    expect(events).toMatch(/^event: metadata\n/);
    expect(events).toContain("hello there");
  });

  it.each<[string, () => Promise<Record<string, string>>]>([
    ["a key that is no dev token", async () => ({ "x-api-key": "lsv2_pt_0123456789" })],
    [
      "a key signed by another dev key",
      async () => ({
        "x-api-key": await signDevToken(await generateKeyPair("ES256"), {
          tenantId: "tenant-cors",
        }),
      }),
    ],
    [
      "a key and a bearer token that disagree",
      async () => ({
        "x-api-key": token,
        authorization: `Bearer ${await server.token("tenant-other")}`,
      }),
    ],
    [
      "a key next to a non-bearer Authorization",
      async () => ({ "x-api-key": token, authorization: "Basic eDp5" }),
    ],
  ])("answers 401 to %s", async (_name, credentials) => {
    const answer = await fetch(`${server.url}/threads/search`, {
      method: "POST",
      headers: { ...(await credentials()), "content-type": "application/json" },
      body: "{}",
    });
    expect(answer.status).toBe(401);
    expect(await answer.json()).toEqual({ message: "Unauthorized" });
  });
});

describe("CORS policy and CORS_ALLOW_ORIGINS", () => {
  it("counts loopback origins on any port as loopback, and nothing that only looks like one", () => {
    expect(
      ["http://localhost:3000", "https://127.0.0.1", "http://[::1]:5173"].map(isLoopbackOrigin),
    ).toEqual([true, true, true]);
    expect(
      [
        "http://localhost.evil.example",
        "http://localhost:3000/",
        "ftp://localhost",
        "null",
        "http://10.0.0.1:3000",
      ].map(isLoopbackOrigin),
    ).toEqual([false, false, false, false, false]);
  });

  it("reads comma-separated origins, and refuses a path, a wildcard or no scheme, naming the variable", () => {
    expect(readCorsOrigins({})).toEqual([]);
    expect(
      readCorsOrigins({ CORS_ALLOW_ORIGINS: " https://ui.example.com, http://box.lan:8080/ ," }),
    ).toEqual(["https://ui.example.com", "http://box.lan:8080"]);
    for (const wrong of ["*", "ui.example.com", "https://ui.example.com/app", "file:///tmp"]) {
      expect(() => readCorsOrigins({ CORS_ALLOW_ORIGINS: wrong })).toThrow(
        /^Invalid CORS_ALLOW_ORIGINS: expected origins like https:\/\/ui\.example\.com/,
      );
    }
    expect(() => createCorsPolicy(["*"])).toThrow(/Invalid origins/);
  });
});
