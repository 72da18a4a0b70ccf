import { jsonContains } from "../../../src/shared/json-containment";

/** PostgreSQL's `jsonb @>` rules, which LangGraph Server's metadata and values filters follow. */
describe("jsonContains", () => {
  it.each<[unknown, unknown]>([
    [{ a: 1, b: 2 }, { a: 1 }],
    [{ a: { b: { c: 1, d: 2 } } }, { a: { b: { c: 1 } } }],
    [{ tags: ["a", "b", "c"] }, { tags: ["c", "a"] }],
    [{ messages: [{ type: "human", content: "hi", id: "1" }] }, { messages: [{ content: "hi" }] }],
    [{ a: null }, { a: null }],
    [{ a: 1 }, {}],
    [[1, [2, 3]], [[3]]],
    ["x", "x"],
  ])("%j contains %j", (container, pattern) => {
    expect(jsonContains(container, pattern)).toBe(true);
  });

  it.each<[unknown, unknown]>([
    [{ a: 1 }, { a: 2 }],
    [{ a: 1 }, { b: undefined }],
    [{ a: "1" }, { a: 1 }],
    [{ a: { b: 1 } }, { a: { b: 1, c: 2 } }],
    [{ tags: ["a"] }, { tags: ["a", "b"] }],
    [{ tags: "a" }, { tags: ["a"] }],
    [{ a: [1] }, { a: { 0: 1 } }],
    [{}, { a: null }],
    [null, {}],
  ])("%j does not contain %j", (container, pattern) => {
    expect(jsonContains(container, pattern)).toBe(false);
  });
});
