import { Construct } from "constructs";
import { TerraformOutput, TerraformStack } from "./cdktf";
import { AwsProvider } from "@cdktf/provider-aws/lib/provider";
import { MemoryTable } from "./construct/memory-table";

/** A placeholder digest: replace with the digest `docker buildx` printed for your push. */
export const EXAMPLE_IMAGE_URI =
  "123456789012.dkr.ecr.eu-west-1.amazonaws.com/memory-table@sha256:0000000000000000000000000000000000000000000000000000000000000000";

/** How a CDKTF user composes the construct directly (`cdktf deploy memory-table-example`). */
export class ExampleStack extends TerraformStack {
  constructor(scope: Construct, id: string) {
    super(scope, id);
    new AwsProvider(this, "aws", { region: "eu-west-1" });
    const agents = new MemoryTable(this, "agents", {
      name: "agents",
      imageUri: EXAMPLE_IMAGE_URI,
      corsAllowOrigins: ["https://app.example.com"],
      createTenantRole: true,
      tags: { project: "memory-table" },
    });
    new TerraformOutput(this, "api_endpoint", { value: agents.httpApi.api.apiEndpoint });
  }
}
