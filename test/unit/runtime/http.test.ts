import pino from "pino";
import {
  HttpError,
  errorResponse,
  exceedsDepth,
  matchRoute,
  parseBody,
  type HttpEvent,
} from "../../../src/runtime/http/http";
import { ERROR_STATUSES, ROUTES, type ApiFace } from "../../../src/runtime/http/routes";
import { DEFAULT_MAX_BODY_BYTES, MAX_BODY_DEPTH } from "../../../src/shared/defaults";
import {
  AssistantExistsError,
  AssistantMismatchError,
  AssistantNotFoundError,
  AssistantTooLargeError,
  AssistantVersionNotFoundError,
  CheckpointCapacityError,
  CheckpointNotFoundError,
  CheckpointTooLargeError,
  CheckpointerRequiredError,
  GraphDrawingUnavailableError,
  IncompleteCheckpointError,
  InvalidConfigurationError,
  InvalidIdentifierError,
  InvalidRequestError,
  InvalidStoreOperationError,
  InvalidTenantClaimError,
  AuthRefusedError,
  MissingTenantClaimError,
  MultitaskRejectedError,
  NothingToResumeError,
  RunActiveError,
  RunBudgetExhaustedError,
  RunDeadlineError,
  RunNotFinishedError,
  RunCancelledError,
  RunNotFoundError,
  StoreCapacityError,
  StoreEmbeddingError,
  StoreRequiredError,
  CronsDisabledError,
  StoreSearchTooBroadError,
  StoreValueTooLargeError,
  SystemAssistantError,
  CronNotFoundError,
  CronQuotaExceededError,
  ThreadBusyError,
  ThreadExistsError,
  ThreadExpiredError,
  ThreadNotFoundError,
  ThreadPausedError,
} from "../../../src/shared/errors";

/** The HttpError `action` throws (every refusal of the router and the body parser is one). */
function httpError(action: () => unknown): HttpError {
  try {
    action();
  } catch (error) {
    if (error instanceof HttpError) return error;
    throw error;
  }
  throw new Error("expected an HttpError, got none");
}

const event = (body: string | undefined, isBase64Encoded = false) =>
  ({ body, isBase64Encoded }) as unknown as HttpEvent;

/** A JSON body nested `depth` levels (the body object is the first; the rest are arrays or objects). */
function nestedBody(depth: number, inner: "array" | "object"): string {
  const levels = depth - 1;
  return inner === "array"
    ? `{"v":${"[".repeat(levels)}${"]".repeat(levels)}}`
    : `${'{"v":'.repeat(levels)}{}${"}".repeat(levels)}`;
}

describe("matchRoute", () => {
  // Characters a thread or assistant id may hold that a path must carry percent-encoded.
  const awkward = "a b/c?d#e%f+g-ü-😀";

  it.each(ROUTES.map((route) => [`${route.method} ${route.path}`, route] as const))(
    "matches %s with its params decoded",
    (key, route) => {
      const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
      const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) =>
        encodeURIComponent(`${name}:${awkward}`),
      );
      const matched = matchRoute(route.method, path);
      expect(matched.route).toBe(route);
      expect(matched.key).toBe(key);
      expect(matched.params).toEqual(
        Object.fromEntries(names.map((name) => [name, `${name}:${awkward}`])),
      );
    },
  );

  it("matches with trailing slashes", () => {
    expect(matchRoute("POST", "/invoke/").key).toBe("POST /invoke");
    expect(matchRoute("POST", "/threads//").key).toBe("POST /threads");
    expect(matchRoute("GET", "/threads/t-1/").params).toEqual({ thread_id: "t-1" });
  });

  it("decodes percent-encoding in params only, and leaves `+` as it is", () => {
    expect(matchRoute("GET", "/threads/a%2Fb/state").params).toEqual({ thread_id: "a/b" });
    expect(matchRoute("GET", "/threads/a+b").params).toEqual({ thread_id: "a+b" });
    expect(() => matchRoute("POST", "/inv%6Fke")).toThrow(HttpError);
  });

  it("prefers a literal segment of the same method, and takes it as a param for another", () => {
    expect(matchRoute("POST", "/threads/search").key).toBe("POST /threads/search");
    expect(matchRoute("GET", "/threads/search")).toMatchObject({
      key: "GET /threads/{thread_id}",
      params: { thread_id: "search" },
    });
  });

  it.each([
    ["GET", "/threads/%E0%A4%A/state"],
    ["GET", "/threads/%zz"],
    ["DELETE", "/threads/%"],
    ["GET", "/assistants/%C3"],
  ])("does not match %s %s (malformed percent-encoding)", (method, path) => {
    const error = httpError(() => matchRoute(method, path));
    expect(error.statusCode).toBe(404);
    expect(error.headers).toEqual({});
  });

  it.each([
    ["GET", "/"],
    ["GET", ""],
    ["POST", "/nope"],
    ["POST", "/invoke/extra"],
    ["GET", "/threads/t-1/unknown"],
    ["GET", "/threads/t-1/state/cp-1/more"],
    ["GET", "/THREADS/t-1"],
  ])("answers %s %j with 404", (method, path) => {
    const error = httpError(() => matchRoute(method, path));
    expect(error.statusCode).toBe(404);
    expect(error.message).toBe(`${method} ${path} not implemented`);
    expect(error.headers).toEqual({});
  });

  it.each([
    ["GET", "/invoke", "POST"],
    ["PUT", "/threads", "POST"],
    ["POST", "/threads/t-1", "GET, PATCH, DELETE"],
    ["PUT", "/threads/t-1/", "GET, PATCH, DELETE"],
    ["DELETE", "/threads/t-1/state", "GET, POST"],
    ["GET", "/runs/wait", "POST"],
    ["PUT", "/threads/t-1/runs/r-1/cancel", "POST"],
    ["PUT", "/assistants/agent", "GET, PATCH, DELETE"],
    ["PUT", "/threads/search", "POST, GET, PATCH, DELETE"],
    ["get", "/threads/t-1/status", "GET"],
  ])("answers %s %s with 405 allowing %s", (method, path, allow) => {
    const error = httpError(() => matchRoute(method, path));
    expect(error.statusCode).toBe(405);
    expect(error.headers).toEqual({ allow });
  });
});

describe("parseBody", () => {
  it("reads an absent, empty or blank body as {}", () => {
    for (const body of [undefined, "", "  \n\t "]) expect(parseBody(event(body), 10)).toEqual({});
    expect(parseBody(event("", true), 10)).toEqual({});
  });

  it("parses a JSON object, plain or base64-encoded", () => {
    const text = '{"input":{"messages":["héllo"]}}';
    expect(parseBody(event(text), 1000)).toEqual({ input: { messages: ["héllo"] } });
    expect(parseBody(event(Buffer.from(text).toString("base64"), true), 1000)).toEqual({
      input: { messages: ["héllo"] },
    });
  });

  it("limits the decoded body in bytes: at the limit it is read, one byte over it is a 413", () => {
    const text = '{"v":"é"}'; // 10 bytes in UTF-8, 9 characters
    expect(parseBody(event(text), 10)).toEqual({ v: "é" });
    const over = httpError(() => parseBody(event(text), 9));
    expect(over.statusCode).toBe(413);
    expect(over.message).toBe("Invalid body: expected at most 9 bytes, got 10");
    // Base64 text is longer than what it encodes; the limit is on what it encodes.
    const encoded = Buffer.from(text).toString("base64");
    expect(encoded.length).toBeGreaterThan(10);
    expect(parseBody(event(encoded, true), 10)).toEqual({ v: "é" });
    expect(httpError(() => parseBody(event(encoded, true), 9)).statusCode).toBe(413);
  });

  it.each(['{"a":', "{'a':1}", "{a:1}", '{"a":1}}', "undefined", "NaN"])(
    "answers malformed JSON %j with 400",
    (body) => {
      const error = httpError(() => parseBody(event(body), 1000));
      expect(error.statusCode).toBe(400);
      expect(error.message).toBe("Invalid body: expected JSON, got malformed JSON");
    },
  );

  it.each([
    ["[]", "an array"],
    ["[{}]", "an array"],
    ["null", "null"],
    ["42", "a number"],
    ['"text"', "a string"],
    ["true", "a boolean"],
  ])("answers the JSON %s with 400 (not an object)", (body, got) => {
    const error = httpError(() => parseBody(event(body), 1000));
    expect(error.statusCode).toBe(400);
    expect(error.message).toBe(`Invalid body: expected a JSON object, got ${got}`);
  });

  it.each(["array", "object"] as const)(
    "accepts exactly MAX_BODY_DEPTH levels of %s nesting and refuses one more",
    (inner) => {
      expect(MAX_BODY_DEPTH).toBe(64);
      expect(() => parseBody(event(nestedBody(MAX_BODY_DEPTH, inner)), 10_000)).not.toThrow();
      const error = httpError(() =>
        parseBody(event(nestedBody(MAX_BODY_DEPTH + 1, inner)), 10_000),
      );
      expect(error.statusCode).toBe(400);
      expect(error.message).toBe(
        `Invalid body: expected at most ${MAX_BODY_DEPTH} levels of nesting, got more`,
      );
    },
  );

  it("refuses a 100,000-deep array without overflowing the stack", () => {
    const body = nestedBody(100_000, "array");
    expect(body.length).toBeLessThanOrEqual(DEFAULT_MAX_BODY_BYTES);
    expect(httpError(() => parseBody(event(body), DEFAULT_MAX_BODY_BYTES)).statusCode).toBe(400);
  });
});

describe("exceedsDepth", () => {
  it("counts every object and array as a level, empty ones included", () => {
    expect(exceedsDepth({}, 1)).toBe(false);
    expect(exceedsDepth({}, 0)).toBe(true);
    expect(exceedsDepth([[]], 1)).toBe(true);
    expect(exceedsDepth({ a: [{}] }, 3)).toBe(false);
    expect(exceedsDepth({ a: [{}] }, 2)).toBe(true);
  });

  it("does not count scalars as levels", () => {
    expect(exceedsDepth("text", 0)).toBe(false);
    expect(exceedsDepth(null, 0)).toBe(false);
    expect(exceedsDepth({ a: 1, b: "x", c: null, d: true }, 1)).toBe(false);
  });

  it("finds one deep branch among many shallow ones", () => {
    const wide: Record<string, unknown> = {};
    for (let i = 0; i < 1000; i += 1) wide[`k${i}`] = { leaf: i };
    expect(exceedsDepth(wide, 2)).toBe(false);
    wide.k500 = { leaf: { deeper: [] } };
    expect(exceedsDepth(wide, 3)).toBe(true);
    expect(exceedsDepth(wide, 4)).toBe(false);
  });

  it("walks a 100,000-deep value without recursion", () => {
    let deep: unknown[] = [];
    for (let i = 0; i < 100_000; i += 1) deep = [deep];
    expect(exceedsDepth(deep, 100_001)).toBe(false);
    expect(exceedsDepth(deep, 100_000)).toBe(true);
  });
});

describe("errorResponse", () => {
  function capturingLogger() {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino(
      { level: "info" },
      { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
    );
    return { logger, lines };
  }

  // One instance of each class the table maps, with the statuses it must answer with on each face.
  const KNOWN: Array<[Error, Record<ApiFace, number>]> = [
    [new ThreadNotFoundError("t-1"), { simple: 404, server: 404 }],
    [new ThreadExpiredError("t-1"), { simple: 404, server: 404 }],
    [new CheckpointNotFoundError("t-1", "c-1"), { simple: 404, server: 404 }],
    [new ThreadBusyError("t-1"), { simple: 409, server: 409 }],
    [new NothingToResumeError("t-1", "not paused"), { simple: 409, server: 409 }],
    [new AssistantMismatchError("t-1", "a", "b"), { simple: 409, server: 409 }],
    [new ThreadPausedError("t-1"), { simple: 409, server: 409 }],
    [new ThreadExistsError("t-1"), { simple: 409, server: 409 }],
    [new CheckpointerRequiredError("Resuming"), { simple: 400, server: 400 }],
    [new RunBudgetExhaustedError(100, 3000), { simple: 408, server: 408 }],
    [new InvalidIdentifierError("thread_id", "too long"), { simple: 400, server: 422 }],
    [new CheckpointTooLargeError(10, 20), { simple: 413, server: 413 }],
    [new CheckpointCapacityError("maxThreads", 1, 2), { simple: 413, server: 413 }],
    [new InvalidStoreOperationError("namespace", "bad"), { simple: 400, server: 422 }],
    [new StoreValueTooLargeError(10, 20, "value's JSON"), { simple: 413, server: 413 }],
    [new StoreSearchTooBroadError(1000), { simple: 422, server: 422 }],
    [new StoreCapacityError("maxItems", 1, 2), { simple: 507, server: 507 }],
    [new MissingTenantClaimError(), { simple: 401, server: 401 }],
    [
      new InvalidTenantClaimError(new InvalidIdentifierError("tenant_id", "bad")),
      { simple: 403, server: 403 },
    ],
    [new RunNotFoundError("r-1"), { simple: 404, server: 404 }],
    [new AssistantNotFoundError("a-1"), { simple: 404, server: 404 }],
    [new AssistantVersionNotFoundError("a-1", 2), { simple: 404, server: 404 }],
    [new GraphDrawingUnavailableError("g"), { simple: 404, server: 404 }],
    [new MultitaskRejectedError("t-1"), { simple: 409, server: 409 }],
    [new RunActiveError("r-1"), { simple: 409, server: 409 }],
    [new AssistantExistsError("a-1"), { simple: 409, server: 409 }],
    [new SystemAssistantError("a-1", "g", "patched"), { simple: 409, server: 409 }],
    [new CronNotFoundError("c-1"), { simple: 404, server: 404 }],
    [new CronQuotaExceededError(100), { simple: 409, server: 409 }],
    [new StoreRequiredError("Reading the store"), { simple: 400, server: 400 }],
    [new CronsDisabledError(), { simple: 400, server: 400 }],
    [new RunNotFinishedError("r-1", "running"), { simple: 408, server: 408 }],
    [new RunCancelledError("r-1"), { simple: 409, server: 409 }],
    [new InvalidRequestError("limit", "expected an integer"), { simple: 400, server: 422 }],
    [new AssistantTooLargeError(10, 20), { simple: 413, server: 413 }],
    [new AuthRefusedError(403, "Forbidden"), { simple: 403, server: 403 }],
  ];

  it("keeps an HttpError's status and headers", () => {
    const { logger, lines } = capturingLogger();
    const response = errorResponse(
      new HttpError(405, "GET /invoke not allowed", { allow: "POST" }),
      "simple",
      "req-1",
      logger,
    );
    expect(response).toEqual({
      statusCode: 405,
      headers: { "content-type": "application/json", allow: "POST" },
      body: JSON.stringify({ detail: "GET /invoke not allowed" }),
    });
    expect(lines).toEqual([]);
  });

  it("keeps the status, message and headers the project's auth handlers chose", () => {
    const { logger, lines } = capturingLogger();
    const refusal = new AuthRefusedError(401, "Who are you?", { "www-authenticate": "Bearer" });
    expect(errorResponse(refusal, "server", "req-1", logger)).toEqual({
      statusCode: 401,
      headers: { "content-type": "application/json", "www-authenticate": "Bearer" },
      body: JSON.stringify({ detail: "Who are you?" }),
    });
    expect(lines).toEqual([]);
  });

  it("has a case here for every class of ERROR_STATUSES", () => {
    for (const [type] of ERROR_STATUSES) {
      expect(KNOWN.some(([error]) => error.constructor === type)).toBe(true);
    }
  });

  it.each(
    KNOWN.flatMap(([error, statuses]) =>
      (["simple", "server"] as const).map(
        (face) => [error.name, face, statuses[face], error] as const,
      ),
    ),
  )("answers %s on the %s face with %i and its message", (_, face, status, error) => {
    const { logger, lines } = capturingLogger();
    const response = errorResponse(error, face, "req-1", logger);
    expect(response.statusCode).toBe(status);
    expect(response.headers).toEqual({ "content-type": "application/json" });
    expect(JSON.parse(response.body!)).toEqual({ detail: error.message });
    expect(lines).toEqual([]);
  });

  it.each<[string, unknown]>([
    ["an Error", new Error("secret state: card 4111")],
    ["a TypeError", new TypeError("secret state: card 4111")],
    [
      "an unmapped Memory Table error",
      new InvalidConfigurationError("x", "secret state: card 4111"),
    ],
    ["an IncompleteCheckpointError", new IncompleteCheckpointError("t", "c", "secret state")],
    ["a RunDeadlineError", new RunDeadlineError("secret state")],
    ["a StoreEmbeddingError", new StoreEmbeddingError("secret state from the model")],
    ["a thrown string", "secret state: card 4111"],
    ["undefined", undefined],
    ["null", null],
  ])(
    "answers %s with a 500 that shares an error id with its log line and carries no message",
    (_, error) => {
      const { logger, lines } = capturingLogger();
      const response = errorResponse(error, "server", "req-42", logger);
      expect(response.statusCode).toBe(500);
      const body = JSON.parse(response.body!) as Record<string, unknown>;
      expect(body).toEqual({ detail: "Internal error", error_id: expect.any(String) });
      expect(body.error_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(response.body).not.toContain("secret");

      expect(lines).toHaveLength(1);
      const line = lines[0]!;
      expect(line).toMatchObject({ level: 50, msg: "unhandled error", requestId: "req-42" });
      expect(line.errorId).toBe(body.error_id);
      expect(JSON.stringify(line)).not.toContain("secret");
    },
  );

  it("gives each unknown error its own id", () => {
    const { logger } = capturingLogger();
    const ids = new Set(
      Array.from({ length: 20 }, () => {
        const response = errorResponse(new Error("x"), "simple", "req", logger);
        return (JSON.parse(response.body!) as { error_id: string }).error_id;
      }),
    );
    expect(ids.size).toBe(20);
  });

  it("logs the unknown error's class name", () => {
    const { logger, lines } = capturingLogger();
    errorResponse(new RangeError("boom"), "simple", "req", logger);
    expect(lines[0]?.err).toEqual({ name: "RangeError" });
  });
});
