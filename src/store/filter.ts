import { compareCodePoints } from "../shared/order";
import { describeStoreInput, fail } from "./validation";

/**
 * A search's `filter`: conditions on top-level fields of an item's value, all of which must hold (as in
 * LangGraph's InMemoryStore). A condition is a JSON value (deep equality) or an object of operators:
 *
 * | operator                       | holds when the field...                                                  |
 * |--------------------------------|--------------------------------------------------------------------------|
 * | `$eq`, `$ne`                   | equals / does not equal the operand (deep JSON equality; missing = not equal) |
 * | `$gt`, `$gte`, `$lt`, `$lte`   | compares so with the operand: numbers with numbers, strings with strings by code point; any other pair never matches |
 * | `$in`, `$nin`                  | equals one / none of the operand's elements (an array)                   |
 * | `$exists`                      | is present (`true`) or absent (`false`)                                  |
 *
 * Deliberate differences from InMemoryStore: equality is deep (it compares objects and arrays by reference, so
 * they never match there), comparisons never coerce types (it converts both sides with `Number()`), and an
 * unknown operator or an object mixing operators and fields is refused rather than compared as a value.
 */

const COMPARISONS = ["$gt", "$gte", "$lt", "$lte"] as const;
const OPERATORS = new Set<string>(["$eq", "$ne", ...COMPARISONS, "$in", "$nin", "$exists"]);

type Comparison = (typeof COMPARISONS)[number];

export type FieldTest =
  | { op: "$eq" | "$ne"; operand: unknown }
  | { op: Comparison; operand: number | string }
  | { op: "$in" | "$nin"; operand: unknown[] }
  | { op: "$exists"; operand: boolean };

/** A checked filter: per field, the tests that must all hold. */
export type StoreFilter = ReadonlyArray<{ field: string; tests: FieldTest[] }>;

/** Checks a filter before any request; `undefined` and `{}` filter nothing. */
export function parseStoreFilter(filter: unknown): StoreFilter | undefined {
  if (filter === undefined || filter === null) return undefined;
  if (!isPlainObject(filter)) {
    fail("filter", `expected an object of field conditions, got ${describeStoreInput(filter)}`);
  }
  const parsed = Object.entries(filter).map(([field, condition]) => ({
    field,
    tests: parseCondition(`filter.${field}`, condition),
  }));
  return parsed.length > 0 ? parsed : undefined;
}

/** True when `value` (an item's value) meets every condition. */
export function matchesStoreFilter(
  value: Record<string, unknown>,
  filter: StoreFilter | undefined,
): boolean {
  if (!filter) return true;
  return filter.every(({ field, tests }) => {
    const present = Object.hasOwn(value, field);
    const fieldValue = present ? value[field] : undefined;
    return tests.every((test) => passes(test, present, fieldValue));
  });
}

/** Deep equality of JSON values (object key order does not matter). */
export function jsonEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return (
      a.length === other.length && a.every((element, index) => jsonEquals(element, other[index]))
    );
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  return (
    keys.length === Object.keys(right).length &&
    keys.every((key) => Object.hasOwn(right, key) && jsonEquals(left[key], right[key]))
  );
}

function parseCondition(field: string, condition: unknown): FieldTest[] {
  if (!isPlainObject(condition)) return [{ op: "$eq", operand: condition }];
  const keys = Object.keys(condition);
  const operators = keys.filter((key) => key.startsWith("$"));
  if (operators.length === 0) return [{ op: "$eq", operand: condition }];
  if (operators.length !== keys.length) {
    fail(field, "expected either operators ($eq, $gt, ...) or a value to compare, got both");
  }
  return operators.map((op) => {
    const operand = condition[op];
    const where = `${field}.${op}`;
    if (!OPERATORS.has(op)) {
      fail(field, `expected operators among ${[...OPERATORS].join(", ")}, got an unknown one`);
    }
    if ((COMPARISONS as readonly string[]).includes(op)) {
      if (
        typeof operand !== "string" &&
        !(typeof operand === "number" && Number.isFinite(operand))
      ) {
        fail(where, `expected a number or a string, got ${describeStoreInput(operand)}`);
      }
      return { op: op as Comparison, operand };
    }
    if (op === "$in" || op === "$nin") {
      if (!Array.isArray(operand))
        fail(where, `expected an array, got ${describeStoreInput(operand)}`);
      return { op, operand };
    }
    if (op === "$exists") {
      if (typeof operand !== "boolean") {
        fail(where, `expected a boolean, got ${describeStoreInput(operand)}`);
      }
      return { op, operand };
    }
    return { op: op as "$eq" | "$ne", operand };
  });
}

function passes(test: FieldTest, present: boolean, value: unknown): boolean {
  switch (test.op) {
    case "$eq":
      return present && jsonEquals(value, test.operand);
    case "$ne":
      return !present || !jsonEquals(value, test.operand);
    case "$in":
      return present && test.operand.some((candidate) => jsonEquals(value, candidate));
    case "$nin":
      return !present || !test.operand.some((candidate) => jsonEquals(value, candidate));
    case "$exists":
      return present === test.operand;
    default:
      return compares(test.op, value, test.operand);
  }
}

function compares(op: Comparison, value: unknown, operand: number | string): boolean {
  let order: number;
  if (typeof value === "number" && typeof operand === "number") order = value - operand;
  else if (typeof value === "string" && typeof operand === "string") {
    order = compareCodePoints(value, operand);
  } else return false;
  switch (op) {
    case "$gt":
      return order > 0;
    case "$gte":
      return order >= 0;
    case "$lt":
      return order < 0;
    case "$lte":
      return order <= 0;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}
