/**
 * Two switches of the HCL module that no construct prop can express, applied to the synthesized configuration:
 *
 * - `create = false` plans nothing: every resource gets `count` (its own count when it has one, guarded by
 *   `var.create`), references to a resource that had no count read instance 0, and every output and local that
 *   reads a resource is null. Adding `count` to a resource moves its state from `x` to `x[0]` by itself
 *   (Terraform's implied move for count), so no consumer address changes.
 * - `image_uri_managed_externally`: a lifecycle setting cannot depend on a variable, so every function has a
 *   second variant (`<name>_external_image`) that ignores changes of `image_uri`, and exactly one of the two is
 *   created; references read whichever exists.
 *
 * The construct itself needs neither: a CDKTF user does not instantiate it, or sets
 * `imageUriManagedExternally` (a literal) on it.
 */

export const CREATE_VARIABLE = "create";
export const EXTERNAL_IMAGE_VARIABLE = "image_uri_managed_externally";
/** Suffix of the variant of a function whose image a pipeline owns. */
export const EXTERNAL_IMAGE_SUFFIX = "_external_image";

type Json = Record<string, unknown>;
type Blocks = Record<string, Record<string, Json>>;

const FUNCTION_TYPE = "aws_lambda_function";
/** Data sources that read no account state and stay uncounted (the ARNs of the locals are built from them). */
const ALWAYS_READ_DATA = new Set(["aws_partition", "aws_region"]);

/** The configuration with both switches applied (a copy). */
export function applyModuleToggles(config: Json): Json {
  const result = structuredClone(config);
  const resources = (result.resource ?? {}) as Blocks;
  const data = (result.data ?? {}) as Blocks;
  addExternalImageVariants(result, resources);
  guardEverythingWithCreate(result, resources, data);
  return result;
}

/** `${cond ? (count) : 0}`, or `${cond ? 1 : 0}` for a resource without a count. */
function guardedCount(count: unknown, condition: string): string {
  if (count === undefined) return `\${${condition} ? 1 : 0}`;
  const expression = expressionOf(count);
  return `\${${condition} ? (${expression}) : 0}`;
}

/** The expression of a value that is a number or a single interpolation. */
function expressionOf(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (typeof value === "string" && isSingleInterpolation(value)) return value.slice(2, -1);
  throw new Error(`Cannot guard a count that is not one expression: ${JSON.stringify(value)}`);
}

function addExternalImageVariants(config: Json, resources: Blocks): void {
  const functions = resources[FUNCTION_TYPE];
  if (functions === undefined) return;
  const external = `var.${EXTERNAL_IMAGE_VARIABLE}`;
  const counted = new Set<string>();
  for (const [name, body] of Object.entries(functions)) {
    if (body.count !== undefined) counted.add(name);
    const variant = structuredClone(body);
    const lifecycle = (variant.lifecycle ?? {}) as { ignore_changes?: string[] };
    variant.lifecycle = {
      ...lifecycle,
      ignore_changes: [...(lifecycle.ignore_changes ?? []), "image_uri"],
    };
    variant.count = guardedCount(body.count, external);
    body.count = guardedCount(body.count, `!${external}`);
    functions[`${name}${EXTERNAL_IMAGE_SUFFIX}`] = variant;
  }
  const names = Object.keys(functions).filter((name) => !name.endsWith(EXTERNAL_IMAGE_SUFFIX));
  const alternation = names.join("|");
  const plain = new RegExp(
    `(?<![\\w.])${FUNCTION_TYPE}\\.(${alternation})\\.([a-z_]+)(?![\\w\\[])`,
    "g",
  );
  const splat = new RegExp(
    `(?<![\\w.])${FUNCTION_TYPE}\\.(${alternation})\\[\\*\\]\\.([a-z_]+)(?![\\w\\[])`,
    "g",
  );
  rewriteStrings(config, (text) =>
    text
      .replace(plain, (_, name: string, attribute: string) =>
        counted.has(name)
          ? _
          : `(${external} ? ${FUNCTION_TYPE}.${name}${EXTERNAL_IMAGE_SUFFIX}[0].${attribute} : ${FUNCTION_TYPE}.${name}[0].${attribute})`,
      )
      .replace(
        splat,
        (_, name: string, attribute: string) =>
          `concat(${FUNCTION_TYPE}.${name}[*].${attribute}, ${FUNCTION_TYPE}.${name}${EXTERNAL_IMAGE_SUFFIX}[*].${attribute})`,
      ),
  );
  // Whatever waited for a function waits for both variants (one of them exists).
  forEachBody(config, (body) => {
    const dependsOn = body.depends_on;
    if (!Array.isArray(dependsOn)) return;
    body.depends_on = dependsOn.flatMap((entry: unknown) =>
      typeof entry === "string" &&
      entry.startsWith(`${FUNCTION_TYPE}.`) &&
      !entry.endsWith(EXTERNAL_IMAGE_SUFFIX)
        ? [entry, `${entry}${EXTERNAL_IMAGE_SUFFIX}`]
        : [entry],
    );
  });
}

function guardEverythingWithCreate(config: Json, resources: Blocks, data: Blocks): void {
  const create = `var.${CREATE_VARIABLE}`;
  const uncounted: string[] = [];
  const addresses: string[] = [];
  for (const [type, blocks] of Object.entries(resources)) {
    for (const [name, body] of Object.entries(blocks)) {
      addresses.push(`${type}\\.${name}`);
      if (body.for_each !== undefined) {
        // Only maps here (graph_policy_arns): none without create.
        body.for_each = `\${${create} ? ${asExpression(body.for_each as string)} : {}}`;
        continue;
      }
      if (body.count === undefined) uncounted.push(`${type}\\.${name}`);
      body.count = guardedCount(body.count, create);
    }
  }
  for (const [type, blocks] of Object.entries(data)) {
    if (ALWAYS_READ_DATA.has(type)) continue;
    for (const [name, body] of Object.entries(blocks)) {
      if (body.count === undefined) uncounted.push(`data\\.${type}\\.${name}`);
      addresses.push(`data\\.${type}\\.${name}`);
      body.count = guardedCount(body.count, create);
    }
  }
  if (uncounted.length > 0) {
    const plain = new RegExp(`(?<![\\w.])(${uncounted.join("|")})\\.(?=[a-z_])`, "g");
    rewriteStrings(config, (text) => text.replace(plain, (_, address: string) => `${address}[0].`));
  }
  // Locals and outputs are evaluated whatever the counts. Without resources, an output is null; a local is ""
  // (locals are strings interpolated into other locals' templates, where null is an error).
  const readsResource = new RegExp(`(?<![\\w.])(${addresses.join("|")})\\b`);
  const guard = (value: unknown, otherwise: string): unknown => {
    if (typeof value !== "string" || !readsResource.test(value)) return value;
    return `\${${create} ? ${asExpression(value)} : ${otherwise}}`;
  };
  const locals = config.locals as Json | undefined;
  const guardedLocals: string[] = [];
  if (locals !== undefined) {
    for (const [name, value] of Object.entries(locals)) {
      locals[name] = guard(value, '""');
      if (locals[name] !== value) guardedLocals.push(name);
    }
  }
  // An output of a guarded local (the table's name, created or existing) is null too.
  const readsGuardedLocal = new RegExp(`(?<![\\w.])local\\.(${guardedLocals.join("|")})\\b`);
  const outputs = config.output as Record<string, Json> | undefined;
  if (outputs !== undefined) {
    for (const output of Object.values(outputs)) {
      const value = output.value;
      output.value =
        typeof value === "string" && guardedLocals.length > 0 && readsGuardedLocal.test(value)
          ? `\${${create} ? ${asExpression(value)} : null}`
          : guard(value, "null");
    }
  }
}

/** A template string as one expression: its interpolation, or the template quoted. */
function asExpression(template: string): string {
  if (isSingleInterpolation(template)) return `(${template.slice(2, -1)})`;
  throw new Error(`Cannot guard a value that is not one expression: ${template}`);
}

/**
 * Whether a template is exactly one `${...}` interpolation: the brace that closes the first `${` is its last
 * character (strings inside the expression, and templates inside those strings, are skipped over).
 */
export function isSingleInterpolation(template: string): boolean {
  if (!template.startsWith("${") || !template.endsWith("}")) return false;
  // A stack of contexts: "expr" (inside ${...} or {...}) and "string" (inside "...").
  const stack: ("expr" | "brace" | "string")[] = ["expr"];
  for (let index = 2; index < template.length; index++) {
    const char = template[index]!;
    const top = stack[stack.length - 1];
    if (top === "string") {
      if (char === "\\") index++;
      else if (char === '"') stack.pop();
      else if (char === "$" && template[index + 1] === "{") {
        stack.push("expr");
        index++;
      }
      continue;
    }
    if (char === '"') stack.push("string");
    else if (char === "{") stack.push("brace");
    else if (char === "}") {
      stack.pop();
      if (stack.length === 0) return index === template.length - 1;
    }
  }
  return false;
}

/** Rewrites every string of the resources, data sources, locals and output values. */
function rewriteStrings(config: Json, rewrite: (text: string) => string): void {
  const visit = (value: unknown): unknown => {
    if (typeof value === "string") return rewrite(value);
    if (Array.isArray(value)) return value.map(visit);
    if (value !== null && typeof value === "object") {
      const object = value as Json;
      for (const [key, child] of Object.entries(object)) {
        // depends_on names resources, never reads them.
        if (key !== "depends_on") object[key] = visit(child);
      }
    }
    return value;
  };
  for (const section of ["resource", "data", "locals"]) {
    if (config[section] !== undefined) config[section] = visit(config[section]);
  }
  const outputs = config.output as Record<string, Json> | undefined;
  for (const output of Object.values(outputs ?? {})) output.value = visit(output.value);
}

/** Calls `visit` with the body of every resource and data source. */
function forEachBody(config: Json, visit: (body: Json) => void): void {
  for (const section of ["resource", "data"]) {
    for (const blocks of Object.values((config[section] ?? {}) as Blocks)) {
      for (const body of Object.values(blocks)) visit(body);
    }
  }
}
