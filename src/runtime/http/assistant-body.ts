import type { AssistantFilter } from "../../shared/assistants";
import { InvalidRequestError } from "../../shared/errors";
import { describe, describeValue } from "./http";
import { objectField, optionalString, type RouteContext } from "./route-context";

/** What the assistants routes (assistants-face.ts) read of a request: its path, body and query fields, checked. */

/** Every field of an assistant's JSON: what `select` may name. */
const ASSISTANT_FIELDS = [
  "assistant_id",
  "graph_id",
  "name",
  "description",
  "config",
  "context",
  "metadata",
  "version",
  "created_at",
  "updated_at",
] as const;

export function assistantParam(context: RouteContext): string {
  return context.params.assistant_id ?? "";
}

/** An assistant's config: an object whose `tags`, `recursion_limit` and `configurable` have their types. */
export function configField(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const config = objectField(body, "config");
  if (config === undefined) return undefined;
  const { tags, recursion_limit: recursionLimit, configurable } = config;
  if (tags !== undefined && (!Array.isArray(tags) || tags.some((tag) => typeof tag !== "string"))) {
    throw new InvalidRequestError(
      "config.tags",
      `expected an array of strings, got ${describe(tags)}`,
    );
  }
  if (
    recursionLimit !== undefined &&
    (typeof recursionLimit !== "number" || !Number.isInteger(recursionLimit))
  ) {
    throw new InvalidRequestError(
      "config.recursion_limit",
      `expected an integer, got ${describeValue(recursionLimit)}`,
    );
  }
  if (
    configurable !== undefined &&
    (typeof configurable !== "object" || configurable === null || Array.isArray(configurable))
  ) {
    throw new InvalidRequestError(
      "config.configurable",
      `expected an object, got ${describe(configurable)}`,
    );
  }
  return config;
}

export function filterFields(body: Record<string, unknown>): AssistantFilter {
  const graphId = optionalString(body, "graph_id");
  const name = optionalString(body, "name");
  const metadata = objectField(body, "metadata");
  return {
    ...(graphId !== undefined ? { graphId } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
  };
}

export function enumField<T extends string>(
  body: Record<string, unknown>,
  field: string,
  allowed: readonly T[],
): T | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value)) {
    throw new InvalidRequestError(
      field,
      `expected one of ${allowed.join(", ")}, got ${describeValue(value)}`,
    );
  }
  return value as T;
}

export function selectField(body: Record<string, unknown>): readonly string[] | undefined {
  const value = body.select;
  if (value === undefined || value === null) return undefined;
  const fields: readonly string[] = ASSISTANT_FIELDS;
  if (!Array.isArray(value) || value.some((field) => !fields.includes(field as string))) {
    throw new InvalidRequestError(
      "select",
      `expected an array of ${ASSISTANT_FIELDS.join(", ")}, got ${describe(value)}`,
    );
  }
  return value as string[];
}

/** `xray`: a boolean, or a depth (a non-negative integer: 0 is none). */
export function xrayQuery(value: string | undefined): boolean | number | undefined {
  if (value === undefined) return undefined;
  if (/^\d{1,4}$/.test(value)) return Number(value) === 0 ? false : Number(value);
  return booleanQuery("xray", value, "a boolean or a depth");
}

export function booleanQuery(
  field: string,
  value: string | undefined,
  expected = "a boolean",
): boolean | undefined {
  if (value === undefined) return undefined;
  const lower = value.toLowerCase();
  if (lower === "true" || lower === "yes" || lower === "1") return true;
  if (lower === "false" || lower === "no" || lower === "0") return false;
  throw new InvalidRequestError(field, `expected ${expected}, got ${describeValue(value)}`);
}
