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
      // What the graph needs: its model, and its secrets (resolved by the image at cold start).
      graphPolicyStatements: {
        InvokeModel: {
          actions: ["bedrock:InvokeModel"],
          resources: [
            "arn:aws:bedrock:eu-west-1::foundation-model/anthropic.claude-3-5-sonnet-20240620-v1:0",
          ],
        },
      },
      secrets: {
        OPENAI_API_KEY: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:agents/openai-AbCdEf",
      },
      // Background runs may post their webhooks to this host only.
      webhookAllowedHosts: ["hooks.example.com"],
      // Production: no cold start in front of users, and alarms on what breaks.
      publish: true,
      provisionedConcurrentExecutions: 2,
      createAlarms: true,
      createAlarmTopic: true,
      tags: { project: "memory-table" },
    });
    new TerraformOutput(this, "api_endpoint", { value: agents.httpApi.api.apiEndpoint });
    // The same API, streamed (Server-Sent Events): the LangGraph SDK's apiUrl.
    new TerraformOutput(this, "stream_url", { value: agents.stream.functionUrl });
  }
}
