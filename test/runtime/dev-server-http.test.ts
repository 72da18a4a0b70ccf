import { connect, type Socket } from "node:net";
import { backendOptions, bookingAssistants, startTestServer, type TestServer } from "./support";

/** The dev server's default request limit. */
const MAX_REQUEST_BYTES = 1024 * 1024;

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One TCP connection spoken to in raw HTTP/1.1, so a test controls exactly which bytes are sent (a head without
 * its body, a body past the limit, a request pipelined behind another) and sees exactly what comes back.
 */
class RawConnection {
  private received = Buffer.alloc(0);
  private waiters = new Set<() => void>();
  closed = false;
  error: string | undefined;

  private constructor(private readonly socket: Socket) {
    const wake = () => this.waiters.forEach((waiter) => waiter());
    socket.on("data", (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      wake();
    });
    socket.on("end", () => {
      this.closed = true;
      wake();
    });
    socket.on("close", () => {
      this.closed = true;
      wake();
    });
    // A server that stops reading may reset the connection while a large body is still being written.
    socket.on("error", (error: NodeJS.ErrnoException) => {
      this.error = error.code ?? error.name;
    });
  }

  static open(url: string): Promise<RawConnection> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => resolve(new RawConnection(socket)));
      socket.once("error", reject);
    });
  }

  write(data: string | Buffer): void {
    if (!this.socket.destroyed) this.socket.write(data, () => undefined);
  }

  /** Every complete response received so far. */
  responses(): RawResponse[] {
    return parseResponses(this.received);
  }

  /** Waits until `done` holds, failing after `timeoutMs` with what was received. */
  waitUntil(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!done()) return;
        finish();
        resolve();
      };
      const timer = setTimeout(() => {
        finish();
        reject(
          new Error(
            `${what}: not within ${timeoutMs} ms (received ${JSON.stringify(this.received.toString("latin1").slice(0, 300))}, closed ${this.closed})`,
          ),
        );
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** Splits a byte stream into HTTP/1.1 responses (Content-Length or chunked bodies); stops at an incomplete one. */
function parseResponses(data: Buffer): RawResponse[] {
  const responses: RawResponse[] = [];
  let offset = 0;
  for (;;) {
    const headEnd = data.indexOf("\r\n\r\n", offset);
    if (headEnd < 0) return responses;
    const [statusLine, ...lines] = data.subarray(offset, headEnd).toString("latin1").split("\r\n");
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(":");
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    let cursor = headEnd + 4;
    let body: Buffer;
    if (headers["transfer-encoding"]?.toLowerCase() === "chunked") {
      const parts: Buffer[] = [];
      for (;;) {
        const lineEnd = data.indexOf("\r\n", cursor);
        if (lineEnd < 0) return responses;
        const size = parseInt(data.subarray(cursor, lineEnd).toString("latin1"), 16);
        if (data.byteLength < lineEnd + 2 + size + 2) return responses;
        parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
        cursor = lineEnd + 2 + size + 2;
        if (size === 0) break;
      }
      body = Buffer.concat(parts);
    } else {
      const length = Number(headers["content-length"] ?? 0);
      if (data.byteLength < cursor + length) return responses;
      body = data.subarray(cursor, cursor + length);
      cursor += length;
    }
    responses.push({
      status: Number(statusLine?.split(" ")[1]),
      headers,
      body: body.toString("utf8"),
    });
    offset = cursor;
  }
}

function requestHead(
  method: string,
  path: string,
  headers: Record<string, string | undefined>,
): string {
  const lines = [`${method} ${path} HTTP/1.1`, "host: 127.0.0.1"];
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) lines.push(`${name}: ${value}`);
  }
  return `${lines.join("\r\n")}\r\n\r\n`;
}

function request(method: string, path: string, token: string, body?: string): string {
  return (
    requestHead(method, path, {
      authorization: `Bearer ${token}`,
      "content-type": body === undefined ? undefined : "application/json",
      "content-length": body === undefined ? undefined : String(Buffer.byteLength(body)),
    }) + (body ?? "")
  );
}

describe("dev server over HTTP", () => {
  let server: TestServer;
  let token: string;
  const connections: RawConnection[] = [];

  const open = async () => {
    const connection = await RawConnection.open(server.url);
    connections.push(connection);
    return connection;
  };

  beforeAll(async () => {
    server = await startTestServer({
      assistants: bookingAssistants(),
      ...(await backendOptions("memory")),
    });
    token = await server.token("tenant-http");
  });

  afterEach(() => {
    for (const connection of connections.splice(0)) connection.destroy();
  });

  afterAll(async () => {
    await server.close();
  });

  it.each<[string, string | undefined]>([
    ["no token", undefined],
    ["an invalid token", "Bearer not-a-jwt"],
  ])(
    "answers 401 to a POST with %s without waiting for its announced 100,000-byte body",
    async (_, authorization) => {
      const connection = await open();
      // The head promises a body that never comes: only a server that checks the token first can answer (one
      // waiting for the body would answer nothing before Node's 300 s request timeout, far past this bound).
      connection.write(
        requestHead("POST", "/invoke", {
          authorization,
          "content-type": "application/json",
          "content-length": "100000",
        }),
      );
      await connection.waitUntil(
        () => connection.responses().length > 0,
        20_000,
        "a response to the unauthenticated head",
      );
      const [response] = connection.responses();
      expect(response!.status).toBe(401);
      expect(JSON.parse(response!.body)).toEqual({ message: "Unauthorized" });
    },
  );

  it("answers 413 to a body over 1 MiB, then closes the connection without serving the request behind it", async () => {
    const connection = await open();
    const padding = "x".repeat(MAX_REQUEST_BYTES);
    const oversized = JSON.stringify({ thread_id: "too-big", input: { request: padding } });
    expect(Buffer.byteLength(oversized)).toBeGreaterThan(MAX_REQUEST_BYTES);
    // A second request pipelined behind the oversized one: the server must not read on and run it.
    const behind = request("POST", "/threads", token, JSON.stringify({ thread_id: "behind-413" }));
    connection.write(request("POST", "/invoke", token, oversized) + behind);

    // Either outcome ends the wait: the connection closing, or a second response proving it was kept open.
    await connection.waitUntil(
      () => connection.closed || connection.responses().length > 1,
      5000,
      "the connection to close",
    );
    const responses = connection.responses();
    expect(responses.map((response) => response.status)).toEqual([413]);
    expect(responses[0]!.headers.connection).toBe("close");
    expect(connection.closed).toBe(true);

    const check = await fetch(`${server.url}/threads/behind-413`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(check.status).toBe(404);
    const tooBig = await fetch(`${server.url}/threads/too-big/status`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(tooBig.status).toBe(404);
  });

  it("serves a valid token and a normal body (200), and keeps the connection open for the next request", async () => {
    const connection = await open();
    connection.write(
      request(
        "POST",
        "/threads",
        token,
        JSON.stringify({ thread_id: "normal", metadata: { a: 1 } }),
      ),
    );
    await connection.waitUntil(() => connection.responses().length === 1, 5000, "the create");
    connection.write(request("GET", "/threads/normal", token));
    await connection.waitUntil(() => connection.responses().length === 2, 5000, "the read");

    const [created, read] = connection.responses();
    expect(created!.status).toBe(200);
    expect(JSON.parse(created!.body)).toMatchObject({ thread_id: "normal", status: "idle" });
    expect(read!.status).toBe(200);
    expect(JSON.parse(read!.body)).toMatchObject({ thread_id: "normal", metadata: { a: 1 } });
    expect(connection.closed).toBe(false);
  });
});
