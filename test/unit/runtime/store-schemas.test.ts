import { parseRequest } from "../../../src/runtime/http/schemas/request-schema";
import {
  storeDeleteSchema,
  storeGetQuery,
  storeNamespacesSchema,
  storePutSchema,
} from "../../../src/runtime/http/schemas/store-schemas";

function refusal(read: () => unknown): string {
  try {
    read();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("accepted");
}

const put = (fields: Record<string, unknown>) => () =>
  parseRequest(storePutSchema, { namespace: ["a"], key: "k", value: {}, ...fields });

describe("store request schemas", () => {
  it("keep an item's value exactly as sent, __proto__ keys included", () => {
    const value = JSON.parse('{"__proto__":{"polluted":true},"n":1}');
    const body = put({ value })();
    expect(body.value).toBe(value);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("read a put's index and ttl, null meaning the store's fields and never expiring", () => {
    expect(put({ index: null, ttl: null })()).toMatchObject({ index: undefined, ttl: null });
    expect(put({ index: false })().index).toBe(false);
    const absent = put({})();
    expect([absent.index, absent.ttl]).toEqual([undefined, undefined]);
  });

  it.each<[Record<string, unknown>, string]>([
    [
      { index: ["$", 1] },
      "Invalid index: expected false, null or an array of field paths, got an array",
    ],
    [{ index: true }, "Invalid index: expected false, null or an array of field paths, got true"],
    [{ ttl: "5" }, 'Invalid ttl: expected a number of minutes or null, got "5"'],
    [
      { namespace: ["a", 2] },
      'Invalid namespace[1]: expected a non-empty string without ".", got a number',
    ],
    [
      { namespace: ["langgraph"] },
      'Invalid namespace: expected a root label other than "langgraph" (reserved by LangGraph)',
    ],
    [{ key: 3 }, "Invalid key: expected a non-empty string, got a number"],
  ])("refuse a put of %j", (fields, message) => {
    expect(refusal(put(fields))).toBe(message);
  });

  it("read a get's namespace from its dotted labels, and a delete's absent one as the root", () => {
    expect(parseRequest(storeGetQuery, { namespace: "a.b", key: "k" }).namespace).toEqual([
      "a",
      "b",
    ]);
    expect(refusal(() => parseRequest(storeGetQuery, { namespace: "a..b", key: "k" }))).toBe(
      'Invalid namespace[1]: expected a non-empty string without ".", got an empty string',
    );
    expect(refusal(() => parseRequest(storeDeleteSchema, { namespace: null, key: "k" }))).toBe(
      "Invalid namespace: expected at least one label, got an empty array",
    );
  });

  it("read a listing's prefix and suffix, the root allowed", () => {
    expect(parseRequest(storeNamespacesSchema, { prefix: [], suffix: null })).toMatchObject({
      prefix: [],
      suffix: undefined,
    });
    expect(refusal(() => parseRequest(storeNamespacesSchema, { max_depth: 1.5 }))).toBe(
      "Invalid max_depth: expected a positive integer, got 1.5",
    );
  });
});
