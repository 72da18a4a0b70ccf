import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { describeWithTerraform, TerraformWorkspace } from "./support/terraform";
import { CRONS_ENABLED } from "../../modules/construct/crons";

const CONSUMER = "test/modules/fixtures/crons-consumer";

interface ResourceChange {
  address: string;
  module_address?: string;
  type: string;
  change: { actions: string[]; after: unknown; after_unknown: unknown };
}

/** One difference between two planned values: where, and the value on each side. */
interface Difference {
  path: string;
  on: unknown;
  off: unknown;
}

/** Every leaf where `a` and `b` differ, as `a.b[0].c` paths. */
function differences(a: unknown, b: unknown, path = ""): Difference[] {
  if (
    a !== null &&
    b !== null &&
    typeof a === "object" &&
    typeof b === "object" &&
    Array.isArray(a) === Array.isArray(b)
  ) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((key) =>
      differences(
        (a as Record<string, unknown>)[key],
        (b as Record<string, unknown>)[key],
        Array.isArray(a) ? `${path}[${key}]` : path === "" ? key : `${path}.${key}`,
      ),
    );
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [{ path, on: a, off: b }];
}

/**
 * What `create_crons` changes in a consumer's plan: two instances of the committed module that differ in that
 * switch only, planned offline, compared resource by resource (their names made equal first).
 */
describeWithTerraform("create_crons in a consumer plan (terraform integration)", () => {
  let workspace: TerraformWorkspace;
  let changes: ResourceChange[];
  /** An instance's changes by address inside the module, its name replaced by a placeholder. */
  const instance = (moduleAddress: string, name: string) =>
    new Map(
      changes
        .filter((change) => change.module_address === moduleAddress)
        .map((change) => {
          const normalized = JSON.parse(
            JSON.stringify(change).split(name).join("agents-crons-KEY"),
          ) as ResourceChange;
          return [normalized.address.slice(moduleAddress.length + 1), normalized] as const;
        }),
    );

  beforeAll(async () => {
    workspace = new TerraformWorkspace(["modules/memory-table", CONSUMER]);
    await workspace.expectSuccess(CONSUMER, ["init", "-backend=false", "-no-color"]);
    await workspace.expectSuccess(CONSUMER, ["plan", "-no-color", "-out=plan.tfplan"]);
    const shown = await workspace.expectSuccess(CONSUMER, ["show", "-json", "plan.tfplan"]);
    changes = (JSON.parse(shown) as { resource_changes: ResourceChange[] }).resource_changes;
  }, 170_000);

  afterAll(() => workspace?.dispose());

  it("changes only CRONS_ENABLED of the functions that run graphs: the same resources, the sweep kept", () => {
    const on = instance('module.crons["on"]', "agents-crons-on");
    const off = instance('module.crons["off"]', "agents-crons-off");
    expect(on.size).toBeGreaterThan(50);
    expect([...off.keys()].sort()).toEqual([...on.keys()].sort());
    const changed = [...on].flatMap(([address, change]) =>
      differences(
        { after: change.change.after, after_unknown: change.change.after_unknown },
        {
          after: off.get(address)!.change.after,
          after_unknown: off.get(address)!.change.after_unknown,
        },
      ).map((difference) => ({ address, ...difference })),
    );
    const variable = `after.environment[0].variables.${CRONS_ENABLED}`;
    expect(changed).toEqual(
      [
        "aws_lambda_function.function[0]",
        "aws_lambda_function.stream_function[0]",
        "aws_lambda_function.worker_function[0]",
      ].map((address) => ({ address, path: variable, on: "true", off: "false" })),
    );
    // The recovery sweep still runs with crons off (it takes over stalled runs): one rule in each.
    for (const instanceChanges of [on, off]) {
      expect(
        instanceChanges.get("aws_cloudwatch_event_rule.recovery_sweep_rule[0]")?.change.after,
      ).toMatchObject({
        schedule_expression: "rate(1 minute)",
      });
    }
  });

  it("plans no schedule at all with crons off and recovery_sweep_schedule = null", () => {
    const noSweep = instance("module.no_sweep", "agents-no-sweep");
    const types = [...noSweep.values()].map((change) => change.type);
    expect(types).not.toContain("aws_cloudwatch_event_rule");
    expect(types).not.toContain("aws_cloudwatch_event_target");
    const principals = [...noSweep.values()]
      .filter((change) => change.type === "aws_lambda_permission")
      .map((change) => (change.change.after as { principal: string }).principal);
    expect(principals).not.toContain("events.amazonaws.com");
    const worker = noSweep.get("aws_lambda_function.worker_function[0]")!.change.after as {
      environment: { variables: Record<string, string> }[];
    };
    expect(worker.environment[0]!.variables[CRONS_ENABLED]).toBe("false");
  });

  it("refuses crons without the sweep that fires them", async () => {
    const refused = workspace.path(CONSUMER, "refused");
    mkdirSync(refused);
    // The provider block of the fixture, then an instance with crons on (the default) and no sweep.
    const fixture = readFileSync(workspace.path(CONSUMER, "main.tf"), "utf8");
    writeFileSync(
      `${refused}/main.tf`,
      `${fixture.slice(0, fixture.indexOf('module "crons"'))}
module "agents" {
  source                  = "../../../../../modules/memory-table"
  name                    = "agents"
  image_uri               = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/memory-table@sha256:${"0".repeat(64)}"
  lookup_account_id       = false
  account_id              = "123456789012"
  recovery_sweep_schedule = null
}
`,
    );
    const dir = `${CONSUMER}/refused`;
    await workspace.expectSuccess(dir, ["init", "-backend=false", "-no-color"]);
    // plan, not validate: the rule reads two variables, which validate does not evaluate together.
    const result = await workspace.run(dir, ["plan", "-no-color"]);
    expect(result.code).not.toBe(0);
    expect(result.stderr.replace(/\s+/g, " ")).toContain(
      "Invalid recovery_sweep_schedule: expected a schedule with create_crons = true",
    );
  }, 120_000);
});
