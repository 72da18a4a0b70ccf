import type { Client } from "@langchain/langgraph-sdk";
import {
  Annotation,
  END,
  START,
  StateGraph,
  type LangGraphRunnableConfig,
} from "@langchain/langgraph";
import { configurableFromHeaders } from "../../src/runtime/http/run-headers";
import type { GraphFactory } from "../../src/runtime/types";
import { sdkMatrix } from "../support/sdk-majors";
import { backendOptions, startTestServer, type Backend, type TestServer } from "./support";

const EchoState = Annotation.Root({
  configurable: Annotation<Record<string, unknown>>(),
});

/** Answers with the `configurable` its run got, less what LangGraph itself adds (checkpoint and thread ids). */
const echoConfigGraph: GraphFactory = ({ checkpointer }) =>
  new StateGraph(EchoState)
    .addNode("echo", (_state, config: LangGraphRunnableConfig) => {
      const own = Object.entries(config.configurable ?? {}).filter(
        ([key, value]) =>
          !key.startsWith("__") && !key.startsWith("checkpoint_") && typeof value !== "object",
      );
      return { configurable: Object.fromEntries(own) };
    })
    .addEdge(START, "echo")
    .addEdge("echo", END)
    .compile({ checkpointer });

/** Headers no run may see: credentials, and what AWS's edge or a proxy adds. */
const WITHHELD = {
  cookie: "session=secret",
  "x-tenant-id": "someone-else",
  "x-service-key": "secret",
  "x-forwarded-for": "203.0.113.9",
  "x-forwarded-proto": "https",
  "x-amzn-trace-id": "Root=1-abc",
  "x-amz-security-token": "secret",
};

describe("configurableFromHeaders", () => {
  it("gives x-* headers and user-agent, never credentials or the edge's headers", () => {
    expect(
      configurableFromHeaders({
        "x-configurable-header": "hello",
        "X-Request-Id": "r-1",
        "user-agent": "jest",
        authorization: "Bearer secret",
        "x-api-key": "secret",
        "content-type": "application/json",
        "x-absent": undefined,
        ...WITHHELD,
      }),
    ).toEqual({ "x-configurable-header": "hello", "x-request-id": "r-1", "user-agent": "jest" });
  });
});

/**
 * A run's graph sees the request's `x-*` headers and user agent in `config.configurable`, as LangGraph Server's
 * (its API test sends `x-configurable-header` through the SDK's `defaultHeaders`), over the body's same keys;
 * the credential (bearer or `x-api-key`) and the edge's headers never reach it.
 */
describe.each(sdkMatrix<Backend>(["memory", "dynamodb"], ["memory"]))(
  "request headers in a run's config ($backend, SDK $sdk.version)",
  ({ backend, sdk }) => {
    let server: TestServer;

    beforeAll(async () => {
      server = await startTestServer({
        assistants: { echo: echoConfigGraph },
        ...(await backendOptions(backend)),
      });
    });

    afterAll(async () => {
      await server.close();
    });

    async function clientWith(headers: Record<string, string>): Promise<Client> {
      return sdk.createClient({
        apiUrl: server.url,
        apiKey: null,
        defaultHeaders: headers,
        callerOptions: { maxRetries: 0 },
      });
    }

    it("carries x-* headers into waited, background and streamed runs; the bearer token stays out", async () => {
      const token = await server.token(`tenant-headers-${backend}`);
      const client = await clientWith({
        authorization: `Bearer ${token}`,
        "x-configurable-header": "extra-client",
        ...WITHHELD,
      });
      const thread = await client.threads.create();
      const waited = (await client.runs.wait(thread.thread_id, "echo", {
        input: {},
        config: { configurable: { "x-configurable-header": "from-body", suffix: "kept" } },
      })) as { configurable: Record<string, unknown> };
      expect(waited.configurable).toMatchObject({
        "x-configurable-header": "extra-client",
        suffix: "kept",
      });
      const seen = JSON.stringify(waited.configurable);
      for (const name of ["authorization", "x-api-key", ...Object.keys(WITHHELD)]) {
        expect(seen).not.toContain(`"${name}"`);
      }
      expect(seen).not.toContain("secret");

      const background = await client.runs.create(thread.thread_id, "echo", { input: {} });
      const joined = (await client.runs.join(thread.thread_id, background.run_id)) as {
        configurable: Record<string, unknown>;
      };
      expect(joined.configurable["x-configurable-header"]).toBe("extra-client");

      const chunks = [];
      for await (const chunk of client.runs.stream(null, "echo", {
        input: {},
        streamMode: "values",
      })) {
        chunks.push(chunk);
      }
      const last = chunks.filter((chunk) => chunk.event === "values").at(-1);
      expect(last?.data).toMatchObject({
        configurable: { "x-configurable-header": "extra-client" },
      });
    });

    it("keeps a credential sent as x-api-key out of the run's config", async () => {
      const token = await server.token(`tenant-headers-key-${backend}`);
      const client = await clientWith({ "x-api-key": token, "x-request-id": "req-7" });
      const values = (await client.runs.wait(null, "echo", { input: {} })) as {
        configurable: Record<string, unknown>;
      };
      expect(values.configurable["x-request-id"]).toBe("req-7");
      expect(values.configurable).not.toHaveProperty("x-api-key");
      expect(JSON.stringify(values)).not.toContain(token);
    });
  },
);
