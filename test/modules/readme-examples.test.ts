import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MODULE_DIR } from "../../modules/synth";
import {
  MODULE_SOURCE,
  MODULE_USAGE,
  README_EXAMPLES,
  type ReadmeExample,
} from "../../modules/readme-examples";
import { describeWithTerraform, TerraformWorkspace } from "./support/terraform";

const MODULE = "modules/memory-table";
const EXAMPLES = [MODULE_USAGE, ...README_EXAMPLES];
const slug = (example: ReadmeExample) => example.title.toLowerCase().replace(/[^a-z0-9]+/g, "-");

describe("module README examples (synth)", () => {
  it("shows every example, verbatim, in the committed README", () => {
    const readme = readFileSync(join(MODULE_DIR, "README.md"), "utf8");
    for (const example of EXAMPLES) {
      expect(readme).toContain(["```hcl", example.hcl.trim(), "```"].join("\n"));
    }
    expect(EXAMPLES.filter((example) => example.plannedOffline)).toHaveLength(1);
  });
});

/** Each README example against the committed module: validated, and the offline one planned with no AWS access. */
describeWithTerraform("module README examples (terraform integration)", () => {
  let workspace: TerraformWorkspace;

  beforeAll(async () => {
    workspace = new TerraformWorkspace([MODULE]);
    for (const example of EXAMPLES) {
      mkdirSync(workspace.path("examples", slug(example)), { recursive: true });
      writeFileSync(
        workspace.path("examples", slug(example), "main.tf"),
        example.hcl.replace(MODULE_SOURCE, `../../${MODULE}`),
      );
    }
    for (const example of EXAMPLES) {
      await workspace.expectSuccess(join("examples", slug(example)), [
        "init",
        "-backend=false",
        "-no-color",
      ]);
    }
  }, 120_000);

  afterAll(() => workspace?.dispose());

  // The offline example is planned below, which validates it too.
  it.each(
    EXAMPLES.filter((example) => !example.plannedOffline).map(
      (example) => [example.title, example] as const,
    ),
  )(
    "validates %s",
    async (_, example) => {
      const output = await workspace.expectSuccess(join("examples", slug(example)), [
        "validate",
        "-no-color",
      ]);
      expect(output).toContain("Success! The configuration is valid.");
    },
    60_000,
  );

  it("formats every example the way terraform fmt does", async () => {
    const result = await workspace.run("examples", ["fmt", "-recursive", "-check", "-diff"]);
    expect({ code: result.code, diff: result.stdout }).toEqual({ code: 0, diff: "" });
  });

  it("plans the offline example without AWS access, with no account lookup", async () => {
    const example = EXAMPLES.find((candidate) => candidate.plannedOffline)!;
    const dir = join("examples", slug(example));
    await workspace.expectSuccess(dir, ["plan", "-no-color", "-out=plan.tfplan"]);
    const plan = JSON.parse(
      await workspace.expectSuccess(dir, ["show", "-json", "plan.tfplan"]),
    ) as {
      resource_changes: { address: string; change: { actions: string[] } }[];
    };
    const created = plan.resource_changes.filter((change) => change.change.actions[0] === "create");
    expect(created.map((change) => change.address)).toEqual(
      expect.arrayContaining([
        // Every resource has count (the module's create switch).
        "module.agents.aws_dynamodb_table.table[0]",
        "module.agents.aws_lambda_function.function[0]",
      ]),
    );
    expect(
      plan.resource_changes.filter((change) => change.address.includes("aws_caller_identity")),
    ).toEqual([]);
  }, 120_000);
});
