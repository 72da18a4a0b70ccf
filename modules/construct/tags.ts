import { Fn, Token } from "../cdktf";
import { isLiteral } from "./rules";

/** Module-wide tags plus one resource's own, merged by Terraform when either is a reference. */
export function mergeTags(
  base: Record<string, string> | undefined,
  extra: Record<string, string> | undefined,
): Record<string, string> {
  const parts = [base ?? {}, extra ?? {}];
  if (parts.every((part) => isLiteral(part) || Object.keys(part).length === 0)) {
    return Object.assign({}, ...parts) as Record<string, string>;
  }
  return Token.asStringMap(Fn.merge(parts));
}
