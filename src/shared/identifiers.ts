import { InvalidIdentifierError } from "./errors";

/** Longest identifier accepted anywhere a key is formed. */
export const MAX_IDENTIFIER_LENGTH = 256;

// C0 and C1 control characters: invisible in logs and consoles, never meaningful in an id.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

export interface IdentifierRules {
  /** Longest accepted value (default 256). */
  maxLength?: number;
  /** Accept the empty string (checkpoint namespaces: `""` is the root graph). */
  allowEmpty?: boolean;
  /** Characters that may not appear at all (e.g. `#` in a tenant id, which prefixes keys). */
  forbidden?: string;
}

/**
 * Checks that `value` can be used as an identifier in a key and returns it typed as a string.
 * Throws {@link InvalidIdentifierError} naming the field and what was wrong.
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
  for (const character of rules.forbidden ?? "") {
    if (value.includes(character)) {
      throw new InvalidIdentifierError(field, `expected no "${character}" character`);
    }
  }
  return value;
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}
