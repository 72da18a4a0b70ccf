import { Construct } from "constructs";
import { CloudwatchLogGroup } from "@cdktf/provider-aws/lib/cloudwatch-log-group";
import { countIf, type Flag } from "./expressions";
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

/** The module's log groups: one per function, and the API's access log. */
export interface LogGroups {
  api: CloudwatchLogGroup;
  cleaner: CloudwatchLogGroup;
  access: CloudwatchLogGroup;
  worker: CloudwatchLogGroup;
  /** With the stream function only (`count`). */
  stream: CloudwatchLogGroup;
  /** With API keys only (`count`). */
  authorizer: CloudwatchLogGroup;
}

/** Every log group, in the scope given (their ids are part of the module's addresses). */
export function createLogGroups(
  scope: Construct,
  context: Context,
  props: {
    names: ReturnType<typeof logGroupNames>;
    retentionInDays: number;
    functionTags: Record<string, string>;
    accessTags: Record<string, string>;
    createStream: Flag;
    enableApiKeys: Flag;
  },
): LogGroups {
  const { names, retentionInDays: retention, functionTags } = props;
  return {
    api: createLogGroup(scope, "api_log_group", context, names.api, retention, functionTags),
    cleaner: createLogGroup(
      scope,
      "cleaner_log_group",
      context,
      names.cleaner,
      retention,
      functionTags,
    ),
    access: createLogGroup(
      scope,
      "access_log_group",
      context,
      names.access,
      retention,
      props.accessTags,
    ),
    worker: createLogGroup(
      scope,
      "worker_log_group",
      context,
      names.worker,
      retention,
      functionTags,
    ),
    stream: createLogGroup(
      scope,
      "stream_log_group",
      context,
      names.stream,
      retention,
      functionTags,
      countIf(props.createStream),
    ),
    authorizer: createLogGroup(
      scope,
      "authorizer_log_group",
      context,
      names.authorizer,
      retention,
      functionTags,
      countIf(props.enableApiKeys),
    ),
  };
}
