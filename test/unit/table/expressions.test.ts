import { TABLE_KEYS } from "../../../src/table/definition";
import {
  allOf,
  anyOf,
  expression,
  indexPartition,
  projection,
  renderUpdate,
  singleItem,
  sortKeyBeginsWith,
  sortKeyBetween,
  sortKeyFrom,
  updateFragment,
  wholePartition,
  type Expression,
} from "../../../src/table/expressions";

/** Placeholders an expression text uses: `#name` and `:value` tokens. */
function placeholdersIn(text: string): { names: string[]; values: string[] } {
  const tokens = text.match(/[#:][A-Za-z0-9_]+/g) ?? [];
  const unique = (prefix: string) =>
    [...new Set(tokens.filter((token) => token.startsWith(prefix)))].sort();
  return { names: unique("#"), values: unique(":") };
}

/**
 * DynamoDB rejects a request whose text uses a placeholder it does not define, or defines one the text does
 * not use: the placeholders of the text and of the maps must be the same sets.
 */
function expectConsistent(text: string, names: object, values: object = {}): void {
  const used = placeholdersIn(text);
  expect(Object.keys(names).sort()).toEqual(used.names);
  expect(Object.keys(values).sort()).toEqual(used.values);
}

const ttlLater = expression("#ttl > :now", { "#ttl": "ttl" }, { ":now": 100 });
const noTtl = expression("attribute_not_exists(#ttl)", { "#ttl": "ttl" });
const owner = expression("#owner = :owner", { "#owner": "lease_owner" }, { ":owner": "run-1" });

describe("expression", () => {
  it("defaults to no placeholders", () => {
    expect(expression("attribute_exists(pk)")).toEqual({
      text: "attribute_exists(pk)",
      names: {},
      values: {},
    });
  });
});

describe("allOf and anyOf", () => {
  it("returns a single condition as it is", () => {
    expect(allOf(owner)).toBe(owner);
    expect(anyOf(owner)).toBe(owner);
  });

  it("parenthesizes each part and joins them with AND or OR, merging placeholders", () => {
    expect(allOf(ttlLater, owner)).toEqual({
      text: "(#ttl > :now) AND (#owner = :owner)",
      names: { "#ttl": "ttl", "#owner": "lease_owner" },
      values: { ":now": 100, ":owner": "run-1" },
    });
    expect(anyOf(noTtl, ttlLater)).toEqual({
      text: "(attribute_not_exists(#ttl)) OR (#ttl > :now)",
      names: { "#ttl": "ttl" },
      values: { ":now": 100 },
    });
  });

  it("keeps the grouping of nested conditions (A AND (B OR C))", () => {
    const nested = allOf(owner, anyOf(noTtl, ttlLater));
    expect(nested.text).toBe(
      "(#owner = :owner) AND ((attribute_not_exists(#ttl)) OR (#ttl > :now))",
    );
    expectConsistent(nested.text, nested.names, nested.values);
  });

  it("refuses an empty list: no condition is not a condition that always holds", () => {
    expect(() => allOf()).toThrow(RangeError);
    expect(() => anyOf()).toThrow(RangeError);
  });

  it("merges a placeholder that two parts give the same meaning", () => {
    const again = expression("#ttl <> :now", { "#ttl": "ttl" }, { ":now": 100 });
    expect(allOf(ttlLater, again).values).toEqual({ ":now": 100 });
    const list = (items: unknown[]) => expression(":ids = :ids", {}, { ":ids": items });
    expect(allOf(list(["a", 1]), list(["a", 1])).values).toEqual({ ":ids": ["a", 1] });
    const bytes = (data: number[]) => expression(":d = :d", {}, { ":d": new Uint8Array(data) });
    expect(allOf(bytes([1, 2]), bytes([1, 2])).values[":d"]).toEqual(new Uint8Array([1, 2]));
  });

  it("refuses one value placeholder with two different values", () => {
    const earlier = expression("#ttl > :now", { "#ttl": "ttl" }, { ":now": 99 });
    expect(() => allOf(ttlLater, earlier)).toThrow(/Placeholder :now/);
    expect(() => anyOf(ttlLater, earlier)).toThrow(RangeError);
    // Types matter: the number 100 and the string "100" are different DynamoDB values.
    const text = expression("#ttl > :now", { "#ttl": "ttl" }, { ":now": "100" });
    expect(() => allOf(ttlLater, text)).toThrow(RangeError);
    const bytes = (data: number[]) => expression(":d = :d", {}, { ":d": new Uint8Array(data) });
    expect(() => allOf(bytes([1, 2]), bytes([1, 3]))).toThrow(RangeError);
    const map = (value: object) => expression(":m = :m", {}, { ":m": value });
    expect(() => allOf(map({ a: 1 }), map({ a: 2 }))).toThrow(RangeError);
  });

  it("refuses one name placeholder for two different attributes", () => {
    const other = expression("attribute_exists(#ttl)", { "#ttl": "expires" });
    expect(() => allOf(noTtl, other)).toThrow(/Placeholder #ttl/);
  });

  it("detects a conflict however deep the nesting", () => {
    const conflicting = expression(
      "#owner = :owner",
      { "#owner": "lease_owner" },
      { ":owner": "x" },
    );
    expect(() => allOf(anyOf(noTtl, owner), anyOf(ttlLater, conflicting))).toThrow(RangeError);
  });
});

describe("renderUpdate", () => {
  const setTtl = updateFragment({
    set: ["#ttl = :ttl"],
    names: { "#ttl": "ttl" },
    values: { ":ttl": 500 },
  });
  const setStatus = updateFragment({
    set: ["#status = :status"],
    names: { "#status": "status" },
    values: { ":status": "RUNNING" },
  });
  const removeLease = updateFragment({
    remove: ["#owner", "#expires"],
    names: { "#owner": "lease_owner", "#expires": "lease_expires_at" },
  });

  it("fills a fragment's missing parts with empty ones", () => {
    expect(updateFragment({})).toEqual({ set: [], remove: [], names: {}, values: {} });
  });

  it("renders SET clauses, then REMOVE clauses, with every placeholder of the fragments", () => {
    const rendered = renderUpdate([setTtl, removeLease, setStatus]);
    expect(rendered).toEqual({
      UpdateExpression: "SET #ttl = :ttl, #status = :status REMOVE #owner, #expires",
      ExpressionAttributeNames: {
        "#ttl": "ttl",
        "#owner": "lease_owner",
        "#expires": "lease_expires_at",
        "#status": "status",
      },
      ExpressionAttributeValues: { ":ttl": 500, ":status": "RUNNING" },
    });
    expect(rendered).not.toHaveProperty("ConditionExpression");
    expectConsistent(
      rendered.UpdateExpression,
      rendered.ExpressionAttributeNames,
      rendered.ExpressionAttributeValues,
    );
  });

  it("leaves ExpressionAttributeValues out when nothing has a value (DynamoDB refuses an empty map)", () => {
    const rendered = renderUpdate([removeLease]);
    expect(rendered).toEqual({
      UpdateExpression: "REMOVE #owner, #expires",
      ExpressionAttributeNames: { "#owner": "lease_owner", "#expires": "lease_expires_at" },
    });
    expect(rendered).not.toHaveProperty("ExpressionAttributeValues");
  });

  it("adds the condition's text and merges its placeholders with the fragments'", () => {
    const condition: Expression = allOf(owner, anyOf(noTtl, ttlLater));
    const rendered = renderUpdate([setTtl, removeLease], condition);
    expect(rendered.ConditionExpression).toBe(condition.text);
    expect(rendered.ExpressionAttributeNames).toEqual({
      "#ttl": "ttl",
      "#owner": "lease_owner",
      "#expires": "lease_expires_at",
    });
    expect(rendered.ExpressionAttributeValues).toEqual({
      ":ttl": 500,
      ":owner": "run-1",
      ":now": 100,
    });
    expectConsistent(
      `${rendered.UpdateExpression} ${rendered.ConditionExpression}`,
      rendered.ExpressionAttributeNames,
      rendered.ExpressionAttributeValues,
    );
  });

  it("takes values only from the condition when the fragments have none", () => {
    const rendered = renderUpdate([removeLease], owner);
    expect(rendered.ExpressionAttributeValues).toEqual({ ":owner": "run-1" });
  });

  it("refuses a placeholder given different values by a fragment and the condition", () => {
    const condition = expression("#ttl < :ttl", { "#ttl": "ttl" }, { ":ttl": 400 });
    expect(() => renderUpdate([setTtl], condition)).toThrow(/Placeholder :ttl/);
    const renamed = expression("attribute_exists(#ttl)", { "#ttl": "expiry" });
    expect(() => renderUpdate([setTtl], renamed)).toThrow(/Placeholder #ttl/);
  });

  it("refuses two fragments giving one placeholder different values, and merges equal ones", () => {
    const otherTtl = updateFragment({ set: [], names: { "#ttl": "ttl" }, values: { ":ttl": 600 } });
    expect(() => renderUpdate([setTtl, otherTtl])).toThrow(RangeError);
    const sameTtl = updateFragment({ set: [], names: { "#ttl": "ttl" }, values: { ":ttl": 500 } });
    expect(renderUpdate([setTtl, sameTtl]).ExpressionAttributeValues).toEqual({ ":ttl": 500 });
  });
});

describe("key conditions", () => {
  const pk = "acme#t-1";

  it.each([
    ["wholePartition", wholePartition(pk), "#pk = :pk", { ":pk": pk }],
    ["singleItem", singleItem(pk, "m"), "#pk = :pk AND #sk = :sk", { ":pk": pk, ":sk": "m" }],
    [
      "sortKeyBetween",
      sortKeyBetween(pk, "c#", "m"),
      "#pk = :pk AND #sk BETWEEN :low AND :high",
      { ":pk": pk, ":low": "c#", ":high": "m" },
    ],
    [
      "sortKeyBeginsWith",
      sortKeyBeginsWith(pk, "n#a#"),
      "#pk = :pk AND begins_with(#sk, :prefix)",
      { ":pk": pk, ":prefix": "n#a#" },
    ],
    [
      "sortKeyFrom",
      sortKeyFrom(pk, "c#"),
      "#pk = :pk AND #sk >= :low",
      { ":pk": pk, ":low": "c#" },
    ],
  ])(
    "%s names the table's keys and defines exactly the placeholders it uses",
    (_, built, text, values) => {
      expect(built.KeyConditionExpression).toBe(text);
      expect(built.ExpressionAttributeValues).toEqual(values);
      for (const [placeholder, attribute] of Object.entries(built.ExpressionAttributeNames)) {
        expect(attribute).toBe(
          placeholder === "#pk" ? TABLE_KEYS.partitionKey : TABLE_KEYS.sortKey,
        );
      }
      expectConsistent(
        built.KeyConditionExpression,
        built.ExpressionAttributeNames,
        built.ExpressionAttributeValues,
      );
    },
  );

  it("addresses a secondary index's partition by its own key attribute", () => {
    const built = indexPartition("tenant_status", "acme#PAUSED_FOR_HUMAN");
    expect(built).toEqual({
      KeyConditionExpression: "#partition = :partition",
      ExpressionAttributeNames: { "#partition": "tenant_status" },
      ExpressionAttributeValues: { ":partition": "acme#PAUSED_FOR_HUMAN" },
    });
  });
});

describe("projection", () => {
  it("projects every attribute through its own placeholder, in order", () => {
    const built = projection(["sk", "ttl", "status"]);
    expect(built).toEqual({
      ProjectionExpression: "#p0, #p1, #p2",
      ExpressionAttributeNames: { "#p0": "sk", "#p1": "ttl", "#p2": "status" },
    });
    expectConsistent(built.ProjectionExpression, built.ExpressionAttributeNames);
  });
});
