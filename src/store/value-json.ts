import { StoreValueTooLargeError } from "../shared/errors";
import { MAX_BODY_DEPTH } from "../shared/defaults";
import { describeStoreInput, fail } from "./validation";

/**
 * Store values are JSON: what a store returns is what `JSON.parse(JSON.stringify(value))` gives (Dates become
 * strings, properties set to undefined disappear), whichever store holds it. What JSON would silently lose or
 * cannot write is refused instead: non-finite numbers, bigints, functions, symbols, cycles, Maps, Sets and
 * binary arrays, and nesting deeper than 64 levels.
 */

/** Default largest value, as UTF-8 JSON bytes. */
export const DEFAULT_MAX_VALUE_BYTES = 256 * 1024;
/**
 * Largest `maxValueBytes` a store accepts: what always fits one DynamoDB item next to its key and attributes
 * (items are at most 400 KB).
 */
export const MAX_VALUE_BYTES = 320 * 1024;
/** Largest value plus embedding vectors (4 bytes per dimension each) one item holds. */
export const MAX_ITEM_PAYLOAD_BYTES = 340 * 1024;

export interface StoreValueJson {
  json: string;
  bytes: number;
}

/** Checks a put's value and returns its JSON text; throws before anything is written. */
export function serializeStoreValue(value: unknown, maxValueBytes: number): StoreValueJson {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    fail("value", `expected an object (or null to delete), got ${describeStoreInput(value)}`);
  }
  assertJsonData(value, 0, new Set());
  const json = JSON.stringify(value);
  if (typeof json !== "string" || !json.startsWith("{")) {
    fail("value", "expected an object, got a value whose toJSON() is not one");
  }
  const bytes = Buffer.byteLength(json);
  if (bytes > maxValueBytes)
    throw new StoreValueTooLargeError(maxValueBytes, bytes, "value's JSON");
  return { json, bytes };
}

/** The value stored as `json` (a fresh object: callers may change it freely). */
export function parseStoreValue(json: string): Record<string, unknown> {
  return JSON.parse(json) as Record<string, unknown>;
}

function assertJsonData(value: unknown, depth: number, ancestors: Set<object>): void {
  switch (typeof value) {
    case "string":
    case "boolean":
    case "undefined":
      return;
    case "number":
      if (!Number.isFinite(value)) fail("value", `expected finite numbers, got ${value}`);
      return;
    case "object":
      break;
    default:
      fail("value", `expected JSON data, got ${describeStoreInput(value)}`);
  }
  if (value === null) return;
  if (depth >= MAX_BODY_DEPTH) {
    fail("value", `expected at most ${MAX_BODY_DEPTH} levels of nesting, got more`);
  }
  const object = value as object;
  if ("toJSON" in object && typeof object.toJSON === "function") {
    assertJsonData((object.toJSON as () => unknown)(), depth, ancestors);
    return;
  }
  if (
    object instanceof Map ||
    object instanceof Set ||
    object instanceof WeakMap ||
    object instanceof WeakSet ||
    object instanceof ArrayBuffer ||
    ArrayBuffer.isView(object) ||
    object instanceof Promise
  ) {
    fail(
      "value",
      `expected JSON data, got ${describeStoreInput(object)} (JSON would drop its contents)`,
    );
  }
  if (ancestors.has(object)) fail("value", "expected JSON data, got a cycle");
  ancestors.add(object);
  const children = Array.isArray(object) ? object : Object.values(object);
  for (const child of children) assertJsonData(child, depth + 1, ancestors);
  ancestors.delete(object);
}
