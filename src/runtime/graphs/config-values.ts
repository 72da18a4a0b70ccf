/**
 * Duck-typed reading and describing of what a LangGraph project hands over (its JSON, its modules' exports, their
 * errors), for langgraph.json's messages.
 */

export function property(value: unknown, key: string): unknown {
  return (typeof value === "object" || typeof value === "function") && value !== null
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function errorCode(error: unknown): unknown {
  return property(error, "code");
}

export function describeError(error: unknown): string {
  // Duck-typed: an error thrown by a graph module may come from another realm.
  const name = property(error, "name");
  const message = property(error, "message");
  if (typeof name === "string" && typeof message === "string") return `${name}: ${message}`;
  return describeConfigValue(error);
}

export function describeConfigValue(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean") return `${typeof value} ${value}`;
  if (typeof value === "function") return "a function";
  if (isRecord(value)) {
    const keys = Object.keys(value).slice(0, 8);
    return keys.length === 0 ? "an empty object" : `an object with keys ${keys.join(", ")}`;
  }
  return typeof value;
}
