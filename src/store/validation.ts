import { InvalidIdentifierError, InvalidStoreOperationError } from "../shared/errors";
import { assertIdentifier, MAX_IDENTIFIER_LENGTH } from "../shared/identifiers";
import { MAX_SORT_KEY_BYTES, storeItemSortKey } from "../table/keys";

/**
 * The store's input rules, one function per kind of input, shared by every store so that what one accepts the
 * others accept too. Each throws {@link InvalidStoreOperationError} naming the field and what was wrong, never
 * echoing the value (it may be private).
 *
 * Namespace labels follow LangGraph's rules (non-empty strings without `.` or `:`; the root label `langgraph` is
 * reserved for `put`) and the identifier rules of the whole project (at most 256 characters, well-formed
 * Unicode, no control characters). Labels and keys may contain `#` and any other character: keys.ts encodes
 * them, so no input can forge a key separator.
 */

/** Matches any one label in a `listNamespaces` prefix or suffix. */
export const NAMESPACE_WILDCARD = "*";
/** LangGraph reserves this root label for itself: `put` refuses it (`batch` does not, as LangGraph's stores). */
export const RESERVED_ROOT_LABEL = "langgraph";
/** Most results one search or namespace listing returns. */
export const MAX_PAGE_LIMIT = 1000;
/** Most results a search or listing skips: a store reads what it skips, so the offset is bounded too. */
export const MAX_PAGE_OFFSET = 10_000;
/** Longest accepted TTL: 100 years, in minutes. */
export const MAX_TTL_MINUTES = 100 * 365 * 24 * 60;

export interface NamespaceRules {
  /** Accept `[]` (a search prefix: every namespace). */
  allowEmpty?: boolean;
  /** Accept the root label `langgraph` (everything but `put`). */
  allowReservedRoot?: boolean;
  /** Accept `*` as a label (listNamespaces' prefix and suffix). */
  allowWildcard?: boolean;
}

/** A namespace (or prefix, or suffix): an array of labels. Returns a copy the caller can keep. */
export function assertStoreNamespace(
  field: string,
  value: unknown,
  rules: NamespaceRules = {},
): string[] {
  if (!Array.isArray(value)) {
    fail(field, `expected an array of strings, got ${describeStoreInput(value)}`);
  }
  if (value.length === 0 && !rules.allowEmpty) {
    fail(field, "expected at least one label, got an empty array");
  }
  const labels = value.map((label: unknown, index) => {
    const labelField = `${field}[${index}]`;
    if (rules.allowWildcard && label === NAMESPACE_WILDCARD) return label;
    const text = asStoreInput(() => assertIdentifier(labelField, label));
    if (text.includes(".")) fail(labelField, 'expected no "." (LangGraph joins labels with it)');
    if (text.includes(":")) fail(labelField, 'expected no ":" (LangGraph reserves it)');
    return text;
  });
  if (!rules.allowReservedRoot && labels[0] === RESERVED_ROOT_LABEL) {
    fail(
      field,
      `expected a root label other than "${RESERVED_ROOT_LABEL}" (reserved by LangGraph)`,
    );
  }
  return labels;
}

/** An item key: a non-empty identifier (its length in bytes is checked with the namespace). */
export function assertStoreKey(value: unknown): string {
  return asStoreInput(() => assertIdentifier("key", value, { maxLength: MAX_SORT_KEY_BYTES }));
}

/**
 * Refuses a namespace and key whose item key would pass DynamoDB's 1,024-byte sort-key limit. Every store
 * applies it, so an item any store accepts fits the table.
 */
export function assertItemKeyFits(namespace: readonly string[], key: string): void {
  const bytes = Buffer.byteLength(storeItemSortKey(namespace, key));
  if (bytes > MAX_SORT_KEY_BYTES) {
    fail(
      "namespace and key",
      `expected an item key of at most ${MAX_SORT_KEY_BYTES} bytes, got ${bytes} (shorten the namespace or the key)`,
    );
  }
}

/** `limit` or `offset` of a page: an integer from 0 to `max`, `fallback` when absent. */
export function assertPageNumber(
  field: string,
  value: unknown,
  fallback: number,
  max: number,
): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > max) {
    fail(field, `expected an integer from 0 to ${max}, got ${describeStoreInput(value)}`);
  }
  return value;
}

/** `maxDepth` of a namespace listing: a positive integer, or absent. */
export function assertMaxDepth(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    fail("maxDepth", `expected a positive integer, got ${describeStoreInput(value)}`);
  }
  return value;
}

/**
 * A TTL in minutes (LangGraph's unit): a positive number up to 100 years, `null` for "never expires", or
 * `undefined` for the store's default.
 */
export function assertTtlMinutes(field: string, value: unknown): number | null | undefined {
  if (value === undefined || value === null) return value;
  if (
    typeof value !== "number" ||
    !Number.isFinite(value) ||
    value <= 0 ||
    value > MAX_TTL_MINUTES
  ) {
    fail(
      field,
      `expected a number of minutes above 0 and at most ${MAX_TTL_MINUTES}, or null, got ${describeStoreInput(value)}`,
    );
  }
  return value;
}

/** An optional boolean switch (`refreshTtl`). */
export function assertOptionalBoolean(field: string, value: unknown): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean")
    fail(field, `expected a boolean, got ${describeStoreInput(value)}`);
  return value;
}

/** A semantic search query: a string; the empty string means no query, as in LangGraph's stores. */
export function assertQuery(value: unknown): string | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string")
    fail("query", `expected a string, got ${describeStoreInput(value)}`);
  return value;
}

/** A put's `index`: `false` (do not embed), a list of field paths, or absent (the store's fields). */
export function assertIndexFields(field: string, value: unknown): false | string[] | undefined {
  if (value === undefined || value === null || value === false) return value ?? undefined;
  if (!Array.isArray(value)) {
    fail(field, `expected false or an array of field paths, got ${describeStoreInput(value)}`);
  }
  return value.map((path: unknown, index) => {
    if (typeof path !== "string" || path.length === 0 || path.length > MAX_IDENTIFIER_LENGTH) {
      fail(
        `${field}[${index}]`,
        `expected a field path of 1 to ${MAX_IDENTIFIER_LENGTH} characters, got ${describeStoreInput(path)}`,
      );
    }
    return path;
  });
}

export function fail(field: string, reason: string): never {
  throw new InvalidStoreOperationError(field, reason);
}

/** The type of a value, for messages (never the value itself, except numbers and booleans). */
export function describeStoreInput(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (typeof value === "string") return "a string";
  if (typeof value === "object") {
    const name = (value as object).constructor?.name;
    return name && name !== "Object" ? `a ${name}` : "an object";
  }
  return `a ${typeof value}`;
}

/** Runs an identifier check, reporting its refusal as the store's own error (same field, same reason). */
function asStoreInput<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof InvalidIdentifierError) fail(error.field, error.reason);
    throw error;
  }
}
