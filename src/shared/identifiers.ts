import { InvalidIdentifierError } from "./errors";

/** Longest identifier (in UTF-16 code units, as JavaScript counts) accepted anywhere a key is formed. */
export const MAX_IDENTIFIER_LENGTH = 256;

// C0 and C1 control characters: invisible in logs and consoles, never meaningful in an id.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;
// A surrogate without its pair cannot be encoded as UTF-8: DynamoDB, JSON peers and logs would each mangle it.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export interface IdentifierRules {
  /** Longest accepted value (default 256). */
  maxLength?: number;
  /** Accept the empty string (checkpoint namespaces: `""` is the root graph). */
  allowEmpty?: boolean;
  /** Characters that may not appear at all (e.g. `#` in a tenant id, which prefixes keys). */
  forbidden?: string;
}

/**
 * Checks that `value` can be used as an identifier in a key and returns it typed as a string: a well-formed
 * Unicode string, within the length, without control characters. Throws {@link InvalidIdentifierError} naming
 * the field and what was wrong, never echoing the value (it may be private).
 */
export function assertIdentifier(
  field: string,
  value: unknown,
  rules: IdentifierRules = {},
): string {
  const maxLength = rules.maxLength ?? MAX_IDENTIFIER_LENGTH;
  if (typeof value !== "string") {
    throw new InvalidIdentifierError(field, `expected a string, got ${describeType(value)}`);
  }
  if (value.length === 0 && !rules.allowEmpty) {
    throw new InvalidIdentifierError(field, "expected a non-empty string, got an empty string");
  }
  if (value.length > maxLength) {
    throw new InvalidIdentifierError(
      field,
      `expected at most ${maxLength} characters, got ${value.length}`,
    );
  }
  if (CONTROL_CHARACTERS.test(value)) {
    throw new InvalidIdentifierError(field, "expected no control characters");
  }
  if (LONE_SURROGATE.test(value)) {
    throw new InvalidIdentifierError(field, "expected well-formed Unicode, got a lone surrogate");
  }
  for (const character of rules.forbidden ?? "") {
    if (value.includes(character)) {
      throw new InvalidIdentifierError(field, `expected no "${character}" character`);
    }
  }
  return value;
}

/** A tenant id: an identifier without `#` (it prefixes keys, and IAM `dynamodb:LeadingKeys` matches `<tenant>#*`). */
export function assertTenantId(tenantId: unknown): string {
  return assertIdentifier("tenant id", tenantId, { forbidden: "#" });
}

/**
 * An identifier that becomes one segment of a URL path (thread and assistant ids). `.` and `..` are refused:
 * HTTP clients resolve them as dot segments before sending, so no route could ever address such a thread.
 */
export function assertPathIdentifier(field: string, value: unknown): string {
  const id = assertIdentifier(field, value);
  if (id === "." || id === "..") {
    throw new InvalidIdentifierError(field, `expected an id usable in a URL path, got "${id}"`);
  }
  return id;
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}
