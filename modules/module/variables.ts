import type { Construct } from "constructs";
import { TerraformVariable, Token } from "../cdktf";
import type { MemoryTableProps } from "../construct/props";
import type { OptionSpec, Variables } from "./option-spec";
import { OPTIONS, type OptionName } from "./options";

/** Declares one variable per option, in the tables' order, named exactly as the option. */
export function declareVariables(scope: Construct): Record<OptionName, TerraformVariable> {
  const variables = {} as Record<OptionName, TerraformVariable>;
  for (const [name, spec] of Object.entries(OPTIONS) as [OptionName, OptionSpec][]) {
    // Variables and outputs share the stack's construct namespace (`kms_key_arn` is both): prefix the id.
    const variable = new TerraformVariable(scope, `var_${name}`, {
      type: spec.type,
      description: spec.description,
      default: spec.default === null ? undefined : spec.default,
      nullable: spec.default === null ? true : undefined,
      validation: spec.validation?.map((rule) => ({
        condition: `\${${rule.condition}}`,
        errorMessage: rule.message,
      })),
    });
    // A `default: null` crashes CDKTF's synth; the override writes it after the fact.
    if (spec.default === null) variable.addOverride("default", null);
    variable.overrideLogicalId(name);
    variables[name] = variable;
  }
  return variables;
}

/** The construct's props, each from the option that names it. */
export function propsFrom(variables: Variables): MemoryTableProps {
  const props: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(OPTIONS) as [OptionName, OptionSpec][]) {
    if (spec.prop === undefined) continue;
    props[spec.prop] = spec.value
      ? spec.value(variables)
      : readVariable(variables[name]!, spec.type);
  }
  return props as unknown as MemoryTableProps;
}

/** A variable as a prop of its type: a string, a number, a list or a map token; anything else as is. */
function readVariable(variable: TerraformVariable, type: string): unknown {
  switch (type) {
    case "string":
      return variable.stringValue;
    case "number":
      return variable.numberValue;
    case "list(string)":
      return variable.listValue;
    case "map(string)":
      return Token.asStringMap(variable.value);
    default:
      return variable.value;
  }
}
