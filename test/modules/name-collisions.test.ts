import { readFileSync } from "node:fs";
import { join } from "node:path";
import { TerraformStack, Testing } from "../../modules/cdktf";
import { MemoryTable } from "../../modules/construct/memory-table";
import {
  NAME_PATTERN,
  RESERVED_NAME_ENDING_PATTERN,
  RESERVED_NAME_ENDINGS,
} from "../../modules/construct/rules";
import { MODULE_DIR } from "../../modules/synth";
import { InvalidConfigurationError } from "../../src/shared/errors";
import { useScratchOutdir } from "./support/outdir";

type Resources = Record<string, Record<string, Record<string, unknown>>>;

/**
 * Every name the module gives a resource, as `<prefix>${var.name}<suffix>` per resource type (names are unique per
 * type and account; the functions' alarms name the function, resolved here), with data sources' values opaque.
 */
function namesByType(): Map<string, Set<string>> {
  const main = JSON.parse(readFileSync(join(MODULE_DIR, "main.tf.json"), "utf8")) as {
    resource: Resources;
  };
  const functionNames = Object.fromEntries(
    Object.entries(main.resource.aws_lambda_function!).map(([id, fn]): [string, string] => [
      id,
      String(fn.function_name),
    ]),
  );
  const resolve = (value: string) =>
    value
      // Either variant of a function (module-toggles.ts): both have the same name.
      .replace(
        /\(var\.image_uri_managed_externally \? (aws_lambda_function\.[a-z_]+)_external_image\[0\]\.function_name : \1\[0\]\.function_name\)/g,
        "$1.function_name",
      )
      .replace(
        /concat\((aws_lambda_function\.[a-z_]+)\[\*\]\.function_name, \1_external_image\[\*\]\.function_name\)/g,
        "$1[*].function_name",
      )
      .replace(
        /\$\{(?:one\()?aws_lambda_function\.([a-z_]+)(?:\[\*\])?\.function_name\)?\}/g,
        (_, id: string) => functionNames[id]!,
      )
      .replace(/\$\{data\.[^}]*\}/g, "<data>");
  const groups = new Map<string, Set<string>>();
  for (const [type, resources] of Object.entries(main.resource)) {
    for (const config of Object.values(resources)) {
      for (const key of ["name", "function_name", "alarm_name"]) {
        const value = config[key];
        if (typeof value !== "string") continue;
        const resolved = resolve(value);
        if (!resolved.includes("${var.name}")) continue;
        const [prefix, suffix] = resolved.split("${var.name}") as [string, string];
        const group = `${type} ${prefix}`;
        if (!groups.has(group)) groups.set(group, new Set());
        groups.get(group)!.add(suffix);
      }
    }
  }
  return groups;
}

/** The endings t for which instance `x` + t would name a resource like one of instance `x`'s. */
function collidingEndings(): Set<string> {
  const endings = new Set<string>();
  for (const suffixes of namesByType().values()) {
    for (const longer of suffixes) {
      for (const shorter of suffixes) {
        if (longer === shorter || !longer.endsWith(shorter)) continue;
        const ending = longer.slice(0, longer.length - shorter.length);
        // Only endings a valid name can have.
        if (new RegExp(NAME_PATTERN).test(`agents${ending}`)) endings.add(ending);
      }
    }
  }
  return endings;
}

const outdir = useScratchOutdir();

describe("instance names that cannot collide (synth)", () => {
  it("refuses exactly the endings under which one instance's names would be another's", () => {
    expect([...collidingEndings()].sort()).toEqual([...RESERVED_NAME_ENDINGS].sort());
  });

  it("leaves no collision between any two valid names", () => {
    const reserved = new RegExp(RESERVED_NAME_ENDING_PATTERN);
    for (const ending of collidingEndings()) {
      // The name that would collide is refused; the name it would collide with is not.
      expect(reserved.test(`agents${ending}`)).toBe(true);
      expect(reserved.test("agents")).toBe(false);
    }
    for (const fine of ["agents", "agents-workers", "worker-agents", "stream1", "x-workerpool"]) {
      expect({ fine, refused: reserved.test(fine) }).toEqual({ fine, refused: false });
    }
  });

  it.each(RESERVED_NAME_ENDINGS.map((ending) => `agents${ending}`))(
    "refuses the construct name %s before creating anything",
    (name) => {
      const stack = new TerraformStack(Testing.app({ outdir: outdir() }), "test");
      const create = () =>
        new MemoryTable(stack, "agents", {
          name,
          imageUri: `123456789012.dkr.ecr.eu-west-1.amazonaws.com/memory-table@sha256:${"0".repeat(64)}`,
        });
      expect(create).toThrow(InvalidConfigurationError);
      expect(create).toThrow(
        /^Invalid name: expected a name not ending in -authorizer, -cleaner, -dynamodb/,
      );
    },
  );
});
