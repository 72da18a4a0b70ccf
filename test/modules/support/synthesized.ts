import { TerraformStack, Testing } from "../../../modules/cdktf";

/** A synthesized stack as data (CDKTF's `//` metadata removed by `Testing.synth`). */
export interface Synthesized {
  text: string;
  resource: Record<string, Record<string, Record<string, unknown>>>;
  data?: Record<string, Record<string, Record<string, unknown>>>;
  variable?: Record<string, Record<string, unknown>>;
  output?: Record<string, Record<string, unknown>>;
  terraform?: Record<string, unknown>;
  provider?: unknown;
}

/** The module stack as the construct renders it, before the module's own switches (module-toggles.ts). */
export function synthesizeWithoutToggles(stack: {
  toTerraformWithoutToggles(): Record<string, unknown>;
}): Synthesized {
  const text = JSON.stringify(stack.toTerraformWithoutToggles(), (key, value: unknown) =>
    key === "//" ? undefined : value,
  );
  return { text, ...(JSON.parse(text) as Omit<Synthesized, "text">) };
}

export function synthesize(stack: TerraformStack): Synthesized {
  const text = Testing.synth(stack);
  return { text, ...(JSON.parse(text) as Omit<Synthesized, "text">) };
}

/** `[logical id, config]` of every resource of a type. */
export function resourcesOf(
  synthesized: Synthesized,
  type: string,
): [string, Record<string, unknown>][] {
  return Object.entries(synthesized.resource[type] ?? {});
}

/** The only resource of a type matching `predicate`. */
export function onlyResource(
  synthesized: Synthesized,
  type: string,
  predicate: (config: Record<string, unknown>) => boolean = () => true,
): [string, Record<string, unknown>] {
  const found = resourcesOf(synthesized, type).filter(([, config]) => predicate(config));
  if (found.length !== 1) throw new Error(`Expected one ${type}, found ${found.length}`);
  return found[0]!;
}

/** `${<type>.<name>.<attribute>}`: how a plain reference is rendered. */
export const ref = (type: string, name: string, attribute: string): string =>
  `\${${type}.${name}.${attribute}}`;
