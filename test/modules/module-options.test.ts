import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Testing, TerraformStack } from "../../modules/cdktf";
import { MODULE_DIR } from "../../modules/synth";
import { OPTIONS } from "../../modules/module/options";
import type { OptionSpec } from "../../modules/module/option-spec";
import { declareVariables, propsFrom } from "../../modules/module/variables";
import { MAX_RUN_LEGS, WORKER_END_MARGIN_SECONDS } from "../../modules/construct/rules";
import { WORKER_END_MARGIN_MS } from "../../src/shared/limits";
import { readRuntimeConfig } from "../../src/runtime/config";
import { ENVIRONMENT } from "../../src/runtime/environment";
import { useScratchOutdir } from "./support/outdir";

const outdir = useScratchOutdir();
const specs = Object.entries(OPTIONS) as [string, OptionSpec][];

describe("module options (one spec per option)", () => {
  it("maps every option to exactly one construct prop, or says why it sets none", () => {
    for (const [name, spec] of specs) {
      expect({
        name,
        mapped: (spec.prop === undefined) !== (spec.moduleOnly === undefined),
      }).toEqual({ name, mapped: true });
    }
    const props = specs.flatMap(([, spec]) => (spec.prop === undefined ? [] : [spec.prop]));
    expect(new Set(props).size).toBe(props.length);
    // The module-only switches are exactly the two that module-toggles.ts applies.
    expect(specs.filter(([, spec]) => spec.moduleOnly !== undefined).map(([name]) => name)).toEqual(
      ["create", "image_uri_managed_externally"],
    );
  });

  it("declares one variable per option, in the tables' order, and builds a prop from each mapped one", () => {
    const committed = JSON.parse(readFileSync(join(MODULE_DIR, "variables.tf.json"), "utf8")) as {
      variable: Record<string, unknown>;
    };
    expect(Object.keys(committed.variable)).toEqual(Object.keys(OPTIONS));
    const stack = new TerraformStack(Testing.app({ outdir: outdir() }), "options");
    const props = propsFrom(declareVariables(stack));
    expect(Object.keys(props).sort()).toEqual(
      specs.flatMap(([, spec]) => (spec.prop === undefined ? [] : [spec.prop])).sort(),
    );
    for (const [prop, value] of Object.entries(props)) {
      expect({ prop, set: value !== undefined && value !== null }).toEqual({ prop, set: true });
    }
  });

  it("limits run legs as the runtime does (MAX_RUN_LEGS)", () => {
    const legs = (value: number) => () =>
      readRuntimeConfig({ [ENVIRONMENT.maxRunLegs]: String(value) }).maxRunLegs;
    expect(legs(MAX_RUN_LEGS.min)()).toBe(MAX_RUN_LEGS.min);
    expect(legs(MAX_RUN_LEGS.max)()).toBe(MAX_RUN_LEGS.max);
    expect(legs(MAX_RUN_LEGS.min - 1)).toThrow(/Invalid MAX_RUN_LEGS/);
    expect(legs(MAX_RUN_LEGS.max + 1)).toThrow(/Invalid MAX_RUN_LEGS/);
  });

  it("documents the worker's end margin the runtime keeps (src/shared/limits.ts), in worker_timeout's description", () => {
    expect(WORKER_END_MARGIN_SECONDS * 1000).toBe(WORKER_END_MARGIN_MS);
    const variables = JSON.parse(
      readFileSync(join(__dirname, "../../modules/memory-table/variables.tf.json"), "utf8"),
    ) as { variable: Record<string, { description: string }> };
    expect(variables.variable.worker_timeout!.description).toContain(
      `keeps its last ${WORKER_END_MARGIN_MS / 1000} s`,
    );
  });
});
