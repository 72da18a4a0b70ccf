import type { TerraformVariable } from "../cdktf";
import type { MemoryTableProps } from "../construct/props";

/** The module's variables by name, as the option specs' `value` functions read them. */
export type Variables = Readonly<Record<string, TerraformVariable>>;

/**
 * One option of the HCL module, in one place: its variable (type, default, description, validations, which the
 * README's inputs table shows) and how it reaches the construct (`prop`). Adding an option is one entry in one of
 * the tables of options/; nothing else maps it.
 */
export interface OptionSpec {
  type: string;
  description: string;
  /** `null` makes the variable optional with no value; absent makes it required. */
  default?: unknown;
  validation?: { condition: string; message: string }[];
  /** The construct prop it sets: the variable read as its type says (see `readVariable`), unless `value`. */
  prop?: keyof MemoryTableProps;
  /** The prop's value when it is not the variable itself (a fallback to another variable, an object of numbers). */
  value?: (variables: Variables) => unknown;
  /** Why it sets no prop: a switch only the HCL module has, applied to the rendered configuration. */
  moduleOnly?: string;
}

/** An HCL string literal (the patterns are shared with the construct's TypeScript checks). */
export const hcl = (value: string): string => JSON.stringify(value);

/** `var` is a whole number within `range`. */
export const wholeNumberIn = (variable: string, range: { min: number; max?: number }): string =>
  [
    `${variable} >= ${range.min}`,
    ...(range.max === undefined ? [] : [`${variable} <= ${range.max}`]),
    `floor(${variable}) == ${variable}`,
  ].join(" && ");

/** A per-resource tag map, merged over `tags`. */
export const tagsOf = (what: string, prop: keyof MemoryTableProps): OptionSpec => ({
  type: "map(string)",
  description: `Tags of ${what}, merged over tags`,
  default: {},
  prop,
});
