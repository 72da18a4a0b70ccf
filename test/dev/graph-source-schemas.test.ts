import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { END, START, StateGraph } from "@langchain/langgraph";
import { z } from "zod";
import { type GraphSource } from "../../src/dev/graph-source-schemas";
import {
  readSourceSchemasCached,
  type CachedSourceSchemas,
} from "../../src/dev/source-schema-cache";
import { graphSchemas, type IntrospectableGraph } from "../../src/runtime/graphs/graph-schemas";

/**
 * JSON schemas read from graphs' TypeScript with the real compiler (seconds of it: an integration test), over the
 * fixture graphs of fixtures/annotation-graphs.ts, as LangGraph Server's API tests expect them.
 */
const FIXTURES = join(__dirname, "fixtures", "annotation-graphs.ts");
const SOURCES: GraphSource[] = [
  { id: "chat", file: FIXTURES, exportName: "chat" },
  { id: "orders", file: FIXTURES, exportName: "orders" },
  { id: "nested", file: FIXTURES, exportName: "nested" },
  { id: "expression", file: FIXTURES, exportName: "default" },
  { id: "missing", file: FIXTURES, exportName: "nowhere" },
  { id: "javascript", file: join(__dirname, "fixtures", "plain.js"), exportName: "graph" },
  { id: "esm", file: join(__dirname, "fixtures", "esm-graph.mts"), exportName: "graph" },
];
const DRAFT_07 = "http://json-schema.org/draft-07/schema#";
const BASE_MESSAGE = "BaseMessage<MessageStructure<MessageToolSet>,MessageType>";

describe("source schemas of Annotation graphs (TypeScript compiler)", () => {
  const cacheFile = join(mkdtempSync(join(tmpdir(), "memory-table-schemas-")), "schemas.json");
  let read: CachedSourceSchemas;

  beforeAll(() => {
    read = readSourceSchemasCached(SOURCES, cacheFile);
  }, 180_000);

  it("describes messages, nullable values, split input and output, and the config", () => {
    expect(read.cached).toBe(false);
    const chat = read.schemas.chat!.graph;
    expect(chat.state).toMatchObject({
      $schema: DRAFT_07,
      type: "object",
      properties: {
        messages: { type: "array", items: { $ref: `#/definitions/${BASE_MESSAGE}` } },
        summary: { type: ["null", "string"] },
        turns: { type: "number", description: "How many turns the caller allows." },
      },
      definitions: {
        [BASE_MESSAGE]: {
          description: expect.stringContaining("Base class for all types of messages"),
          oneOf: [{ $ref: "#/definitions/RemoveMessage" }],
        },
      },
    });
    // Every reference points at a definition of the same schema.
    const text = JSON.stringify(chat.state);
    const definitions = Object.keys((chat.state as { definitions: object }).definitions);
    for (const [, name] of text.matchAll(/"\$ref":"#\/definitions\/([^"]+)"/g)) {
      expect(definitions).toContain(JSON.parse(`"${name}"`));
    }
    expect(chat.input).toMatchObject({ properties: { turns: {}, messages: {}, summary: {} } });
    expect(Object.keys((chat.output as { properties: object }).properties).sort()).toEqual([
      "messages",
      "summary",
    ]);
    expect(chat.config).toMatchObject({
      $schema: DRAFT_07,
      type: "object",
      properties: { model_name: { type: "string" } },
    });
  });

  it("names a package's types plainly in an ES module too", () => {
    expect(read.schemas.esm!.graph.state).toMatchObject({
      properties: { messages: { items: { $ref: `#/definitions/${BASE_MESSAGE}` } } },
      definitions: { [BASE_MESSAGE]: { oneOf: [{ $ref: "#/definitions/RemoveMessage" }] } },
    });
    expect(JSON.stringify(read.schemas)).not.toContain("import(");
  });

  it("reads custom reducers, literal unions, optional and nested values through an aliased async export", () => {
    const orders = read.schemas.orders!.graph;
    const state = orders.state as {
      properties: Record<string, Record<string, unknown>>;
      definitions: Record<string, { properties: Record<string, unknown> }>;
    };
    expect(state.properties.total).toEqual({ type: "number" });
    expect(state.properties.tags).toEqual({ type: "array", items: { type: "string" } });
    expect(state.properties.status).toEqual({ type: "string", enum: ["open", "paid", "shipped"] });
    const shipTo = state.properties.shipTo!.$ref as string;
    const address = state.definitions[decodeURIComponent(shipTo.slice("#/definitions/".length))]!;
    expect(address.properties).toEqual({
      street: { type: "string" },
      city: { type: "string" },
      zip: { type: "string" },
    });
    expect(JSON.stringify(state.properties.notes)).toContain('"type":"null"');
    expect(state).not.toHaveProperty("required");
    expect(orders.config).toMatchObject({
      properties: { region: { type: "string", enum: ["apac", "eu", "us"] } },
    });
  });

  it("names subgraphs by namespace, two levels deep", () => {
    const nested = read.schemas.nested!;
    expect(Object.keys(nested.subgraphs)).toEqual(["middle", "middle|inner"]);
    expect(nested.subgraphs.middle!.state).toMatchObject({
      properties: {
        log: { type: "array" },
        phase: { type: "string", enum: ["first", "second"] },
      },
    });
    expect(nested.subgraphs["middle|inner"]!.state).toMatchObject({
      properties: { log: { type: "array" }, level: { type: "string", enum: ["debug", "info"] } },
    });
    // No config declared: no config schema, rather than an empty object.
    expect(nested.graph).not.toHaveProperty("config");
  });

  it("names what it could not read and leaves those graphs out", () => {
    for (const id of ["expression", "missing", "javascript"]) {
      expect(read.schemas).not.toHaveProperty(id);
      expect(read.problems).toEqual(
        expect.arrayContaining([expect.objectContaining({ graphId: id })]),
      );
    }
    expect(read.problems.find((p) => p.graphId === "missing")?.message).toMatch(/export "nowhere"/);
    expect(read.problems.find((p) => p.graphId === "javascript")?.message).toMatch(
      /not TypeScript/,
    );
  });

  it("answers from its cache until a file the compiler read changes", () => {
    const again = readSourceSchemasCached(SOURCES, cacheFile);
    expect(again.cached).toBe(true);
    expect(again.schemas).toEqual(read.schemas);
  });

  it("reads anew once an input's modification time differs, or for other sources", () => {
    const cache = JSON.parse(readFileSync(cacheFile, "utf8")) as {
      inputs: Array<[string, number, number]>;
    };
    const fixture = cache.inputs.find(([file]) => file === FIXTURES)!;
    expect(fixture).toBeDefined();
    fixture[1] -= 1000;
    writeFileSync(cacheFile, JSON.stringify(cache));
    const reread = readSourceSchemasCached(SOURCES, cacheFile);
    expect(reread.cached).toBe(false);
    expect(reread.schemas).toEqual(read.schemas);
    expect(readSourceSchemasCached(SOURCES.slice(3, 6), cacheFile).cached).toBe(false);
  }, 180_000);
});

describe("schemas of a zod graph (at run time, before any source schema)", () => {
  const graph = new StateGraph(
    z.object({ items: z.array(z.string()), counter: z.number().optional() }),
  )
    .addNode("count", (state) => ({ counter: state.items.length }))
    .addEdge(START, "count")
    .addEdge("count", END)
    .compile() as unknown as IntrospectableGraph;

  it("comes from the graph itself, without LangGraph's metadata, and wins over the source's", () => {
    const schemas = graphSchemas(graph, { state: { title: "from source" } });
    expect(schemas.state).toMatchObject({
      type: "object",
      properties: { items: { type: "array", items: { type: "string" } }, counter: {} },
    });
    expect(
      (schemas.state as { properties: { items: object } }).properties.items,
    ).not.toHaveProperty("langgraph_type");
    expect(schemas.input).toMatchObject({ properties: { items: {}, counter: {} } });
  });

  it("leaves an Annotation graph to its source schemas, and unknown without them", () => {
    const annotation = { builder: {} } as IntrospectableGraph;
    expect(graphSchemas(annotation)).toEqual({});
    expect(graphSchemas(annotation, { state: { type: "object" } })).toEqual({
      state: { type: "object" },
    });
  });
});
