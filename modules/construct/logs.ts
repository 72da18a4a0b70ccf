import { Construct } from "constructs";
import { CloudwatchLogGroup } from "@cdktf/provider-aws/lib/cloudwatch-log-group";
import type { Context } from "./props";

/** The module's log groups, named up front so the key policy can name them before they exist. */
export function logGroupNames(name: string): {
  api: string;
  cleaner: string;
  access: string;
  worker: string;
  stream: string;
  authorizer: string;
} {
  return {
    api: `/aws/lambda/${name}`,
    cleaner: `/aws/lambda/${name}-cleaner`,
    access: `/aws/apigateway/${name}-access`,
    worker: `/aws/lambda/${name}-worker`,
    stream: `/aws/lambda/${name}-stream`,
    authorizer: `/aws/lambda/${name}-authorizer`,
  };
}

/** A log group with retention, encrypted with the module's key (the function must not create its own). */
export function createLogGroup(
  scope: Construct,
  id: string,
  context: Context,
  logGroupName: string,
  retentionInDays: number,
  tags: Record<string, string>,
  /** For the group of an optional function (default: always created). */
  count?: number,
): CloudwatchLogGroup {
  return new CloudwatchLogGroup(scope, id, {
    count,
    name: logGroupName,
    retentionInDays,
    kmsKeyId: context.kmsKeyArn,
    tags,
  });
}
