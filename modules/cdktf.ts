/**
 * The one door to CDKTF's core for the module code. CDKTF was archived upstream (December 2025) and its maintained
 * fork, CDK Terrain (`cdktn`), is a drop-in rename: switching is an edit of this file (and the provider imports).
 */
export {
  App,
  Fn,
  Op,
  TerraformElement,
  TerraformIterator,
  TerraformLocal,
  TerraformOutput,
  TerraformStack,
  TerraformVariable,
  Testing,
  Token,
} from "cdktf";
export type { IResolvable, ITerraformDependable, TerraformResource } from "cdktf";
export { propertyAccess } from "cdktf/lib/tfExpression";
