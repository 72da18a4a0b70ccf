import {
  assistantCreateSchema,
  assistantGraphQuery,
  assistantSearchSchema,
  assistantSubgraphsQuery,
} from "../../../src/runtime/http/schemas/assistant-schemas";
import { parseRequest } from "../../../src/runtime/http/schemas/request-schema";

function refusal(read: () => unknown): string {
  try {
    read();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("accepted");
}

describe("assistant request schemas", () => {
  it("keep an assistant's config, context and metadata exactly as sent, __proto__ keys included", () => {
    const config = JSON.parse('{"__proto__":{"x":1},"tags":["a"],"configurable":{"__proto__":2}}');
    const metadata = JSON.parse('{"__proto__":"kept"}');
    const body = parseRequest(assistantCreateSchema, { graph_id: "g", config, metadata });
    expect(body.config).toBe(config);
    expect(body.metadata).toBe(metadata);
    expect(Object.keys(body.config!)).toEqual(["__proto__", "tags", "configurable"]);
  });

  it("name a config field's refusal by its path", () => {
    const read = (config: unknown) => () =>
      parseRequest(assistantCreateSchema, { graph_id: "g", config });
    expect(refusal(read({ tags: "t" }))).toBe(
      "Invalid config.tags: expected an array of strings, got a string",
    );
    expect(refusal(read({ tags: ["a", 1] }))).toBe(
      "Invalid config.tags[1]: expected a string, got a number",
    );
    expect(refusal(read({ recursion_limit: 1.5 }))).toBe(
      "Invalid config.recursion_limit: expected an integer, got 1.5",
    );
    expect(refusal(read([]))).toBe("Invalid config: expected an object, got an array");
  });

  it("read a search's page, order and fields", () => {
    expect(
      parseRequest(assistantSearchSchema, { limit: null, select: ["name"], sort_by: "name" }),
    ).toMatchObject({ limit: undefined, select: ["name"], sort_by: "name" });
    expect(refusal(() => parseRequest(assistantSearchSchema, { select: ["name", 3] }))).toMatch(
      /^Invalid select: expected fields among assistant_id, .*, got 3$/,
    );
    expect(refusal(() => parseRequest(assistantSearchSchema, { sort_order: "up" }))).toBe(
      'Invalid sort_order: expected one of asc, desc, got "up"',
    );
  });

  it.each<[string, boolean | number]>([
    ["true", true],
    ["YES", true],
    ["0", false],
    ["no", false],
    ["3", 3],
  ])("read xray=%s as %j", (xray, expected) => {
    expect(parseRequest(assistantGraphQuery, { xray }).xray).toBe(expected);
  });

  it("refuse a boolean query parameter they cannot read", () => {
    expect(refusal(() => parseRequest(assistantGraphQuery, { xray: "maybe" }))).toBe(
      'Invalid xray: expected a boolean or a depth, got "maybe"',
    );
    expect(refusal(() => parseRequest(assistantSubgraphsQuery, { recurse: "2" }))).toBe(
      'Invalid recurse: expected a boolean, got "2"',
    );
    expect(refusal(() => parseRequest(assistantSubgraphsQuery, { recurse: "__proto__" }))).toBe(
      'Invalid recurse: expected a boolean, got "__proto__"',
    );
  });
});
