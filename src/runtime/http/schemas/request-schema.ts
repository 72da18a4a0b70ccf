import { z } from "zod";
import { InvalidRequestError } from "../../../shared/errors";
import { describe, describeValue } from "../http";

/**
 * The building blocks of the request schemas (one per body or query, in this folder) and the one parser that
 * reads a request with them. A refusal is an InvalidRequestError naming the field by its path, with the words
 * the field's schema gives: `Invalid <field>: expected <what>, got <the value, described>`. Values are described
 * by type (`a string`), or for scalars whose type was right but not their value, verbatim (`"sideways"`); a value
 * is never echoed whole, it may be private.
 */

/** How a refused value is named: by its type, or verbatim when a scalar. */
export type Describer = (value: unknown) => string;

/** Schema params whose refusal reads `expected <expected>, got <described value>`, whatever check failed. */
export function expecting(expected: string, got: Describer = describe) {
  return { error: (issue: { input?: unknown }) => `expected ${expected}, got ${got(issue.input)}` };
}

/** A field that may be absent or null (LangGraph Server's `Optional`): both read as undefined. */
export function optional<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((value): z.output<T> | undefined => value ?? undefined);
}

/**
 * A JSON object of the client's own (metadata, config values, context), kept exactly as sent: the value itself,
 * not a copy, so keys such as `__proto__` stay the data they were in the JSON.
 */
export function jsonObject(expected = "an object") {
  return z.custom<Record<string, unknown>>(isPlainObject, expecting(expected));
}

/**
 * A JSON object kept as sent (as {@link jsonObject}) whose named fields must read with `fields` (a loose object
 * schema): checked, not copied, since an object schema's output is a copy without keys such as `__proto__`.
 */
export function jsonObjectWith(fields: z.ZodType, expected = "an object") {
  return jsonObject(expected).superRefine((value, context) => {
    const result = fields.safeParse(value, { reportInput: true });
    // Read with reportInput, the issues carry their input, as raw issues do.
    if (!result.success) context.issues.push(...(result.error.issues as z.core.$ZodRawIssue[]));
  });
}

/** A list of some of `allowed` (the fields a search's `select` may name); a refused list names its first stranger. */
export function fieldList<const T extends readonly string[]>(allowed: T) {
  const isAllowed = (field: unknown): field is T[number] => allowed.includes(field as string);
  return z
    .array(z.unknown(), expecting("a list of fields"))
    .refine((fields) => fields.every(isAllowed), {
      error: (issue) =>
        `expected fields among ${allowed.join(", ")}, got ${describeValue(
          (issue.input as unknown[]).find((field) => !isAllowed(field)),
        )}`,
    })
    .transform((fields) => fields.filter(isAllowed));
}

/** One of `allowed` (compared as own values: a client string never reaches an object's prototype). */
export function oneOf<const T extends readonly [string, ...string[]]>(
  allowed: T,
  expected = `one of ${allowed.map((item) => JSON.stringify(item)).join(", ")}`,
) {
  return z.enum(allowed, expecting(expected, describeValue));
}

/** An integer from `min` to `max`. */
export function integer(min: number, max: number) {
  return z
    .number(expecting(`an integer from ${min} to ${max}`, describeValue))
    .int()
    .min(min)
    .max(max);
}

/** An integer query parameter: digits (a sign allowed), read as a number and then checked as one. */
export function integerQuery(min: number, max: number) {
  return z.preprocess(
    (value) => (typeof value === "string" && /^-?\d+$/.test(value) ? Number(value) : value),
    integer(min, max),
  );
}

/** A boolean query parameter written as the SDK writes it: `true` or `false`. */
export function trueOrFalseQuery() {
  return oneOf(["true", "false"], "true or false").transform((value) => value === "true");
}

/**
 * Reads `value` (a body or a query) with `schema`: its parsed output, or an InvalidRequestError for the first
 * refusal. Fields the schema does not name are accepted and ignored, as LangGraph Server ignores them.
 */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw new InvalidRequestError(fieldPath(issue.path), refusalOf(issue));
}

/** `config.tags`, `supersteps[0].updates[1]`; the body itself when the path is empty. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let text = "";
  for (const key of path) {
    text += typeof key === "number" ? `[${key}]` : `${text === "" ? "" : "."}${String(key)}`;
  }
  return text === "" ? "body" : text;
}

const TYPE_NAMES: Readonly<Record<string, string>> = {
  array: "an array",
  object: "an object",
  record: "an object",
  int: "an integer",
};

/** The issue's own words when its schema gave them; zod's defaults reworded as `expected X, got Y`. */
function refusalOf(issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_type" && issue.message.startsWith("Invalid input")) {
    return `expected ${TYPE_NAMES[issue.expected] ?? `a ${issue.expected}`}, got ${describe(issue.input)}`;
  }
  return issue.message;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
