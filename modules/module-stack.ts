import { Construct, Node } from "constructs";
import { TerraformElement, TerraformStack } from "./cdktf";
import { AwsProvider } from "@cdktf/provider-aws/lib/provider";
import { MemoryTable } from "./construct/memory-table";
import { applyModuleToggles } from "./module-toggles";
import { declareOutputs } from "./module/outputs";
import { declareVariables, propsFrom } from "./module/variables";

/**
 * Providers the module accepts: exactly the major version its tests plan (5.100.0, the bindings' version and the
 * local mirror's). 6.x is not admitted until a test plans it: 6.28.0 changes the stream URL's permissions (its
 * aws_lambda_function_url adds the conditioned lambda:InvokeFunction statement itself), see the module README.
 */
export const AWS_PROVIDER_CONSTRAINT = ">= 5.100.0, < 6.0.0";
/** Cross-variable validations need Terraform 1.9. */
export const TERRAFORM_CONSTRAINT = ">= 1.9.0";

/**
 * The CDKTF stack behind the HCL module `modules/memory-table`: terraform-aws-modules style variables mapped to
 * the construct's props, outputs for what it created, and none of what stops a stack from being a module
 * (backend, provider block, exact provider pin).
 */
export class ModuleStack extends TerraformStack {
  readonly memoryTable: MemoryTable;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    // Kept for CDKTF's synth validation only; removed below so consumers can use for_each/count.
    new AwsProvider(this, "aws");
    const variables = declareVariables(this);
    this.memoryTable = new MemoryTable(this, MEMORY_TABLE_ID, propsFrom(variables));
    declareOutputs(this, this.memoryTable, variables);

    this.addOverride("terraform.backend", undefined);
    this.addOverride("provider", undefined);
    this.addOverride("terraform.required_providers.aws", {
      source: "hashicorp/aws",
      version: AWS_PROVIDER_CONSTRAINT,
    });
    this.addOverride("terraform.required_version", TERRAFORM_CONSTRAINT);
  }

  /** The configuration with the switches only the HCL module has: `create`, `image_uri_managed_externally`. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- CDKTF's own signature
  override toTerraform(): any {
    return applyModuleToggles(this.toTerraformWithoutToggles());
  }

  /** What the construct renders through the variables, before `create` and the image variants are applied. */
  toTerraformWithoutToggles(): Record<string, unknown> {
    return super.toTerraform() as Record<string, unknown>;
  }

  /**
   * Readable, stable addresses (`aws_dynamodb_table.table`, not `memory_table_table_3F2A1B`) for what the
   * construct creates: consumers' state keys on them, so construct ids must never be renamed.
   */
  protected override allocateLogicalId(element: TerraformElement | Node): string {
    const node = element instanceof TerraformElement ? element.node : element;
    const segments = node.path.split("/").slice(1);
    if (segments[0] !== MEMORY_TABLE_ID || segments.length < 2)
      return super.allocateLogicalId(element);
    segments.shift();
    const last = segments.length - 1;
    if (last > 0 && segments[last - 1]!.endsWith(segments[last]!)) segments.pop();
    return segments.join("_");
  }
}

/** Construct id of the module's MemoryTable: a prefix of no address (see allocateLogicalId). */
const MEMORY_TABLE_ID = "memory_table";
