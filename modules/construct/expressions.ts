import { Fn, IResolvable, propertyAccess, Token } from "../cdktf";

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
