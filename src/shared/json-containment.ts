import { isDeepStrictEqual } from "node:util";

/**
 * Whether `container` contains `pattern`, as PostgreSQL's `jsonb @>` decides (LangGraph Server filters metadata
 * and values this way): an object contains another when each of its keys holds a value containing the other's;
 * an array contains another when each of the other's elements is contained in one of its elements; other values
 * must be equal.
 */
export function jsonContains(container: unknown, pattern: unknown): boolean {
  if (isPlainObject(pattern)) {
    if (!isPlainObject(container)) return false;
    return Object.entries(pattern).every(
      ([key, value]) => Object.hasOwn(container, key) && jsonContains(container[key], value),
    );
  }
  if (Array.isArray(pattern)) {
    if (!Array.isArray(container)) return false;
    return pattern.every((wanted) => container.some((item) => jsonContains(item, wanted)));
  }
  return isDeepStrictEqual(container, pattern);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
