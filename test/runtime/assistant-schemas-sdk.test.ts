import type { Client } from "@langchain/langgraph-sdk";
import { END, START, StateGraph } from "@langchain/langgraph";
import { z } from "zod";
import { extractSourceSchemas, type GraphSource } from "../../src/dev/graph-source-schemas";
import type { GraphFactory, HandlerGraph } from "../../src/runtime/types";
import { chat, nested, orders } from "../dev/fixtures/annotation-graphs";
import { backendOptions, startTestServer, type TestServer } from "./support";

/**
 * `client.assistants.getSchemas` and `getSubgraphs` of the official SDK, unchanged, against the dev server given the
 * schemas read from the fixture graphs' TypeScript (as `npm start` and the image are): the shapes LangGraph
 * Server's own API tests check for its `agent`, `simple_runtime` and `nested` graphs, and a zod graph's.
 */
const FIXTURES = require.resolve("../dev/fixtures/annotation-graphs.ts");
const SOURCES: GraphSource[] = [
  { id: "chat", file: FIXTURES, exportName: "chat" },
  { id: "orders", file: FIXTURES, exportName: "orders" },
  { id: "nested", file: FIXTURES, exportName: "nested" },
];
const DRAFT_07 = "http://json-schema.org/draft-07/schema#";
const BASE_MESSAGE = "BaseMessage<MessageStructure<MessageToolSet>,MessageType>";

const served =
  (graph: unknown): GraphFactory =>
  async () =>
    (await graph) as HandlerGraph;

/** A graph built with a plain zod schema (no LangGraph metadata): it describes itself at run time. */
const plainZod: GraphFactory = () =>
  new StateGraph(z.object({ items: z.array(z.string()), counter: z.number() }))
    .addNode("count", (state) => ({ counter: state.items.length }))
    .addEdge(START, "count")
    .addEdge("count", END)
    .compile() as unknown as HandlerGraph;

describe("assistant schemas through the SDK (source schemas of Annotation graphs, zod at run time)", () => {
  let server: TestServer;
  let client: Client;

  beforeAll(async () => {
    const read = extractSourceSchemas(SOURCES);
    expect(read.problems).toEqual([]);
    server = await startTestServer({
      assistants: {
        chat: served(chat),
        orders: served(orders()),
        nested: served(nested),
        plain_zod: plainZod,
      },
      graphSchemas: read.schemas,
      ...(await backendOptions("memory")),
    });
    client = await server.client("tenant-schemas");
  }, 180_000);

  afterAll(async () => {
    await server?.close();
  });

  it("gives a created assistant of an Annotation graph its state, input, output and config schemas", async () => {
    const assistant = await client.assistants.create({
      graphId: "chat",
      config: { configurable: { model_name: "openai" } },
    });
    const schemas = await client.assistants.getSchemas(assistant.assistant_id);
    expect(schemas.graph_id).toBe("chat");
    expect(schemas.input_schema).not.toBeNull();
    expect(schemas.output_schema).not.toBeNull();
    expect(schemas.config_schema).toMatchObject({
      type: "object",
      properties: { model_name: { type: "string" } },
      $schema: DRAFT_07,
    });
    expect(schemas.state_schema).toMatchObject({
      type: "object",
      properties: {
        messages: { type: "array", items: { $ref: `#/definitions/${BASE_MESSAGE}` } },
      },
      definitions: {
        [BASE_MESSAGE]: {
          description: expect.stringContaining("Base class for all types of messages"),
          oneOf: [{ $ref: "#/definitions/RemoveMessage" }],
        },
      },
      $schema: DRAFT_07,
    });
  });

  it("gives the same schema as config and context, a literal union as an enum", async () => {
    const schemas = await client.assistants.getSchemas("orders");
    const region = {
      type: "object",
      properties: { region: { type: "string", enum: ["apac", "eu", "us"] } },
    };
    expect(schemas).toMatchObject({ config_schema: region, context_schema: region });
  });

  it("describes subgraphs by namespace, recursively", async () => {
    const assistant = await client.assistants.create({ graphId: "nested" });
    expect(Object.keys(await client.assistants.getSubgraphs(assistant.assistant_id))).toEqual([
      "middle",
    ]);
    const subgraphs = await client.assistants.getSubgraphs(assistant.assistant_id, {
      recurse: true,
    });
    expect(Object.keys(subgraphs)).toEqual(["middle", "middle|inner"]);
    expect(subgraphs).toMatchObject({
      middle: {
        state: {
          type: "object",
          properties: {
            phase: { type: "string", enum: ["first", "second"] },
            log: { type: "array" },
          },
        },
      },
      "middle|inner": {
        state: {
          type: "object",
          properties: {
            level: { type: "string", enum: ["debug", "info"] },
            log: { type: "array" },
          },
        },
      },
    });
  });

  it("gives a zod graph the schemas it carries, without LangGraph's metadata", async () => {
    const schemas = await client.assistants.getSchemas("plain_zod");
    expect(schemas.state_schema).toMatchObject({
      type: "object",
      properties: expect.objectContaining({
        items: expect.any(Object),
        counter: expect.any(Object),
      }),
    });
    expect(schemas.state_schema?.properties?.items).not.toHaveProperty("langgraph_type");
    // No config schema declared: the field is left out, as LangGraph Server leaves it.
    expect(schemas).not.toHaveProperty("config_schema");
  });
});
