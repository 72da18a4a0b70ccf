import { Fn, IResolvable, Op, propertyAccess, Token } from "../cdktf";
import type { TerraformResource } from "../cdktf";
import { isLiteral } from "./rules";

/**
 * A switch that is either known now (CDKTF users pass `true`/`false`) or a Terraform expression (the HCL module
 * passes its variables): every optional resource is rendered with `count`, so both work the same way.
 */
export type Flag = boolean | IResolvable;

/** `count` for an optional resource. */
export function countIf(flag: Flag): number {
  if (typeof flag === "boolean") return flag ? 1 : 0;
  return Token.asNumber(Fn.conditional(flag, 1, 0));
}

/** `flag ? whenTrue : whenFalse`, folded when the flag is known now. */
export function choose<T>(flag: Flag, whenTrue: T, whenFalse: T): T {
  if (typeof flag === "boolean") return flag ? whenTrue : whenFalse;
  return Fn.conditional(flag, whenTrue, whenFalse) as T;
}

/** An attribute of a resource that has `count` (a plain reference would be invalid): `one(r[*].attr)`. */
export function attributeOf(resource: { fqn: string }, attribute: string): string {
  return Token.asString(Fn.one(propertyAccess(resource.fqn, ["*", attribute])));
}

/** `a && b`, folded when either is known now. */
export function both(a: Flag, b: Flag): Flag {
  if (a === false || b === false) return false;
  if (a === true) return b;
  if (b === true) return a;
  return Op.and(a, b);
}

/**
 * A nested block present only when `items` is not empty (a CORS block for listed origins): the provider bindings
 * cannot render an optional block themselves, so it is written as an override, `dynamic` for a reference.
 */
export function addBlockIfAny(
  resource: TerraformResource,
  block: string,
  items: unknown[],
  content: Record<string, unknown>,
): void {
  if (isLiteral(items)) {
    if (items.length > 0) resource.addOverride(block, content);
    return;
  }
  resource.addOverride(`dynamic.${block}`, {
    // `> 0` would render as `> undefined` (CDKTF drops a literal 0 operand).
    for_each: Fn.conditional(Op.gte(Fn.lengthOf(items), 1), [1], []),
    content,
  });
}

/** A number as an environment variable's string, known now or at plan. */
export function numberAsString(value: number): string {
  return isLiteral(value) ? String(value) : Token.asString(value);
}

/** The list as one comma-separated string ("" for none, which the runtime reads as unset). */
export function commaJoined(values: string[]): string {
  return isLiteral(values) ? values.join(",") : Fn.join(",", values);
}

/** `percent` % of `value`, folded when both are known now. */
export function percentOf(value: number, percent: number): number {
  if (isLiteral(value) && isLiteral(percent)) return (value * percent) / 100;
  return Token.asNumber(Op.div(Op.mul(value, percent), 100));
}

/** Seconds as milliseconds, folded when known now. */
export function milliseconds(seconds: number): number {
  return isLiteral(seconds) ? seconds * 1000 : Token.asNumber(Op.mul(seconds, 1000));
}
