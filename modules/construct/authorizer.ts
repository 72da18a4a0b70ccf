import { Construct } from "constructs";
import { CloudwatchLogGroup } from "@cdktf/provider-aws/lib/cloudwatch-log-group";
import { LambdaFunction } from "@cdktf/provider-aws/lib/lambda-function";
import { IMAGE_HANDLERS } from "../../src/runtime/environment";
import { DYNAMODB_AUTHORIZER_ACTIONS } from "../../src/table/iam-actions";
import { API_KEY_LOOKUP_PREFIX } from "../../src/table/keys";
import { attributeOf, countIf, type Flag } from "./expressions";
import { createImageFunction, PublishedVersion } from "./function";
import type { Context } from "./props";
import { FunctionRole, type RoleProps } from "./role";
import type { ImageSettings, Release } from "./worker";

export interface RequestAuthorizerFunctionProps {
  context: Context;
  /** Create it (`enable_api_keys`): everything here has `count`. */
  create: Flag;
  functionName: string;
  image: ImageSettings;
  role: RoleProps;
  tableArn: string;
  /** Its log group (created with the same `count`). */
  logGroup: CloudwatchLogGroup;
  logLevel: string;
  reservedConcurrentExecutions: number;
  /** TABLE_NAME, TENANT_CLAIM, JWT_ISSUER, JWT_AUDIENCE, API_KEY_CACHE_SECONDS, LOG_LEVEL. */
  environment: Record<string, string>;
  /** Released as every other function: a version per change, behind the alias API Gateway invokes. */
  release: Release;
  tags: Record<string, string>;
}

/**
 * API Gateway's Lambda authorizer (`authorizer.handler` of the same image): a JWT or an API key (`X-Api-Key`) to
 * the caller's tenant (src/runtime/auth/authorizer.ts). Small and fast: no graph, 256 MB, 10 s. Its role reads
 * API key lookup items and nothing else: GetItem on the table, only for partition keys `#api-key#*`
 * (`dynamodb:LeadingKeys`), so it can read no tenant's data and no listing.
 */
export class RequestAuthorizerFunction extends Construct {
  readonly role: FunctionRole;
  readonly function: LambdaFunction;
  /** Attributes valid whether it is created or not (null when it is not). */
  readonly functionName: string;
  /** What API Gateway invokes: the alias with `publish`, the function's $LATEST otherwise. */
  readonly invokeArn: string;
  /** The permission's qualifier: the alias name with `publish`. */
  readonly qualifier: string | undefined;
  /** Its published version and the alias the API's authorizer invokes (`publish`, with `enable_api_keys`). */
  readonly version: PublishedVersion;

  constructor(scope: Construct, id: string, props: RequestAuthorizerFunctionProps) {
    super(scope, id);
    const { context } = props;
    this.role = new FunctionRole(
      this,
      "role",
      props.role,
      {
        kmsKeyArn: context.kmsKeyArn,
        region: context.region,
        itemActions: DYNAMODB_AUTHORIZER_ACTIONS,
        itemResources: [props.tableArn],
        itemLeadingKeys: [`${API_KEY_LOOKUP_PREFIX}*`],
        logGroupArn: attributeOf(props.logGroup, "arn"),
      },
      props.create,
    );
    this.function = createImageFunction(this, "function", {
      ...props.image,
      count: countIf(props.create),
      functionName: props.functionName,
      roleArn: this.role.roleArn,
      command: [IMAGE_HANDLERS.authorizer],
      memorySize: 256,
      timeout: 10,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      logGroupName: attributeOf(props.logGroup, "name"),
      logLevel: props.logLevel,
      environment: props.environment,
      publish: props.release.publish,
      dependsOn: [props.logGroup, ...this.role.policies],
    });
    this.functionName = attributeOf(this.function, "function_name");
    this.version = new PublishedVersion(this, "alias", {
      function: this.function,
      create: props.create,
      publish: props.release.publish,
      aliasName: props.release.aliasName,
      invokedBy: "the HTTP API's Lambda authorizer",
    });
    this.invokeArn = this.version.invokeArn;
    this.qualifier = this.version.qualifier;
  }
}
