import { Construct } from "constructs";
import { CloudwatchLogGroup } from "@cdktf/provider-aws/lib/cloudwatch-log-group";
import { LambdaFunction } from "@cdktf/provider-aws/lib/lambda-function";
import { LambdaFunctionUrl } from "@cdktf/provider-aws/lib/lambda-function-url";
import { LambdaPermission } from "@cdktf/provider-aws/lib/lambda-permission";
import { CloudcontrolapiResource } from "@cdktf/provider-aws/lib/cloudcontrolapi-resource";
import { Fn } from "../cdktf";
import type { ITerraformDependable } from "../cdktf";
import { DYNAMODB_ITEM_ACTIONS } from "../../src/table/iam-actions";
import { IMAGE_HANDLERS } from "../../src/runtime/environment";
import { ROUTES } from "../../src/runtime/http/routes";
import { addBlockIfAny, attributeOf, both, countIf, type Flag } from "./expressions";
import { createImageFunction, PublishedVersion } from "./function";
import type { Context } from "./props";
import { FunctionRole, type RoleProps } from "./role";
import type { ImageSettings, Release } from "./worker";

/** `CMD` of the streaming entry (image/stream.ts). */
export const STREAM_HANDLER = IMAGE_HANDLERS.stream;

/**
 * What browsers may send and read across origins: the bearer token, JSON bodies, `Last-Event-ID` (a client that
 * reconnects to a stream resumes after it), `X-Api-Key` (the same JWT as browser UIs send it, the SDK's
 * `apiKey`) and `MCP-Protocol-Version` (an MCP client's, to `/mcp`); `Content-Location` names the run a stream
 * belongs to.
 */
export const STREAM_CORS = {
  allowHeaders: [
    "authorization",
    "content-type",
    "last-event-id",
    "mcp-protocol-version",
    "x-api-key",
  ],
  exposeHeaders: ["content-location"],
  maxAge: 3600,
} as const;

export interface StreamFunctionProps {
  context: Context;
  /** Create the function and its URL (a toggle: everything here has `count`). */
  create: Flag;
  /**
   * Declare Lambda's second statement for the URL (lambda:InvokeFunction, only through a function URL) through
   * the Cloud Control API (with `create`); false: the consumer adds it (see the module README).
   */
  createInvokeViaUrlPermission: Flag;
  functionName: string;
  image: ImageSettings;
  role: RoleProps;
  /** Where its graphs read and write: the table and its indexes. */
  itemResources: string[];
  /** Its log group (created with the same `count`). */
  logGroup: CloudwatchLogGroup;
  /** The worker it hands background runs to, by ARN (its role may invoke exactly that function). */
  workerFunctionArn: string;
  /** What must exist before the function runs (the worker's alias, which WORKER_FUNCTION_NAME names). */
  dependsOn?: ITerraformDependable[];
  timeout: number;
  memorySize: number;
  reservedConcurrentExecutions: number;
  logLevel: string;
  /** The API function's, with JWT_ISSUER and JWT_AUDIENCE: the function verifies tokens itself. */
  environment: Record<string, string>;
  /** Origins allowed by CORS (none: no CORS configuration, so browsers of other origins are refused). */
  corsAllowOrigins: string[];
  /** With `publish`, the URL serves the alias (a URL of its own: a qualifier cannot be changed in place). */
  release: Release;
  tags: Record<string, string>;
}

/**
 * Streaming: a function from the same image (`stream.handler`) serving the whole API from a Lambda function URL in
 * RESPONSE_STREAM mode, so Server-Sent Events reach the client as they are written and runs may take up to the
 * function's timeout (API Gateway's HTTP APIs buffer responses and stop waiting at 30 s). A function URL has no
 * JWT authorizer: its auth type is NONE and the function verifies every request's token against the issuer's keys
 * before it reads anything else (a documented scanner exception, see scanner-exceptions.ts). No statement of its
 * resource policy admits a direct Invoke from another account: both are conditioned on the function URL. Its role is the API
 * function's least privilege: the table's item actions, its own log group, invoking the worker only.
 */
export class StreamFunction extends Construct {
  readonly role: FunctionRole;
  readonly function: LambdaFunction;
  readonly url: LambdaFunctionUrl;
  /** Anyone may call the URL (lambda:InvokeFunctionUrl, auth type NONE): the function authenticates. */
  readonly urlPermission: LambdaPermission;
  /**
   * Lambda's second check for URLs created since October 2025: lambda:InvokeFunction for principal `*` only when
   * invoked through a function URL (condition lambda:InvokedViaFunctionUrl), declared through Cloud Control.
   */
  readonly invokeViaUrlPermission: CloudcontrolapiResource;
  /** Its published version and the alias its URL serves (`publish`, with the function). */
  readonly version: PublishedVersion;
  /** Attributes valid whether it is created or not (null when it is not). */
  readonly functionName: string;
  readonly functionArn: string;
  readonly functionUrl: string;

  constructor(scope: Construct, id: string, props: StreamFunctionProps) {
    super(scope, id);
    const { context } = props;
    const count = countIf(props.create);
    this.role = new FunctionRole(
      this,
      "role",
      props.role,
      {
        kmsKeyArn: context.kmsKeyArn,
        region: context.region,
        itemActions: DYNAMODB_ITEM_ACTIONS,
        itemResources: props.itemResources,
        logGroupArn: attributeOf(props.logGroup, "arn"),
        // Background runs started from a stream go to the worker, and nowhere else.
        workerFunctionArn: props.workerFunctionArn,
      },
      props.create,
    );
    this.function = createImageFunction(this, "function", {
      ...props.image,
      count,
      functionName: props.functionName,
      roleArn: this.role.roleArn,
      command: [STREAM_HANDLER],
      memorySize: props.memorySize,
      timeout: props.timeout,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      logGroupName: attributeOf(props.logGroup, "name"),
      logLevel: props.logLevel,
      environment: props.environment,
      publish: props.release.publish,
      dependsOn: [props.logGroup, ...this.role.policies, ...(props.dependsOn ?? [])],
    });
    this.functionName = attributeOf(this.function, "function_name");
    this.functionArn = attributeOf(this.function, "arn");
    this.version = new PublishedVersion(this, "alias", {
      function: this.function,
      create: props.create,
      publish: props.release.publish,
      aliasName: props.release.aliasName,
      invokedBy: "the function URL",
    });
    const qualifier = this.version.qualifier;
    this.url = new LambdaFunctionUrl(this, "url", {
      count,
      functionName: this.functionName,
      qualifier,
      // The function verifies the JWT itself (src/runtime/function-url.ts): a function URL has no JWT
      // authorizer, and AWS_IAM would ask browsers for SigV4-signed requests.
      authorizationType: "NONE",
      invokeMode: "RESPONSE_STREAM",
    });
    addCors(this.url, props.corsAllowOrigins);
    this.functionUrl = attributeOf(this.url, "function_url");
    // Declared, so they are in state, planned and scanned (the provider also adds the first one on its own when
    // it creates a URL with auth type NONE, under the statement id FunctionURLAllowPublicAccess). After the URL:
    // Lambda refuses concurrent changes to one function's policy.
    this.urlPermission = new LambdaPermission(this, "url_permission", {
      count,
      statementId: "AllowPublicFunctionUrl",
      action: "lambda:InvokeFunctionUrl",
      functionName: this.functionName,
      qualifier,
      principal: "*",
      functionUrlAuthType: "NONE",
      dependsOn: [this.url],
    });
    // Function URLs created since October 2025 also need lambda:InvokeFunction, with the condition
    // lambda:InvokedViaFunctionUrl so that it admits calls through the URL and no direct Invoke. The argument
    // that sets it (invoked_via_function_url) exists in provider 6.28.0 and later only; on 5.100 the same
    // AddPermission call is made by Cloud Control (CloudFormation's AWS::Lambda::Permission has the property).
    // The schema is given so that planning needs no CloudFormation DescribeType call.
    this.invokeViaUrlPermission = new CloudcontrolapiResource(this, "invoke_via_url_permission", {
      count: countIf(both(props.create, props.createInvokeViaUrlPermission)),
      typeName: LAMBDA_PERMISSION_TYPE,
      schema: JSON.stringify(LAMBDA_PERMISSION_SCHEMA),
      desiredState: Fn.jsonencode({
        // `<name>:<alias>` with `publish`: the statement is on the URL's qualifier.
        FunctionName: this.version.qualifiedName,
        Action: "lambda:InvokeFunction",
        Principal: "*",
        InvokedViaFunctionUrl: true,
      }),
      dependsOn: [this.urlPermission],
    });
  }
}

/** The statement id a consumer gives the second statement when they add it themselves. */
export const STREAM_URL_INVOKE_STATEMENT_ID = "AllowInvokeViaFunctionUrl";

/** The CloudFormation resource type behind the second statement. */
export const LAMBDA_PERMISSION_TYPE = "AWS::Lambda::Permission";

/**
 * The properties of AWS::Lambda::Permission the provider validates `desired_state` against at plan time (from
 * CloudFormation's template reference); Cloud Control applies with the registry's own schema.
 */
export const LAMBDA_PERMISSION_SCHEMA = {
  typeName: LAMBDA_PERMISSION_TYPE,
  description:
    "The AWS::Lambda::Permission resource grants an AWS service or another account permission to use a function.",
  additionalProperties: false,
  properties: {
    Id: { type: "string" },
    Action: { type: "string" },
    EventSourceToken: { type: "string" },
    FunctionName: { type: "string" },
    FunctionUrlAuthType: { type: "string", enum: ["AWS_IAM", "NONE"] },
    InvokedViaFunctionUrl: { type: "boolean" },
    Principal: { type: "string" },
    PrincipalOrgID: { type: "string" },
    SourceAccount: { type: "string" },
    SourceArn: { type: "string" },
  },
  required: ["FunctionName", "Action", "Principal"],
  createOnlyProperties: [
    "/properties/Action",
    "/properties/EventSourceToken",
    "/properties/FunctionName",
    "/properties/FunctionUrlAuthType",
    "/properties/InvokedViaFunctionUrl",
    "/properties/Principal",
    "/properties/PrincipalOrgID",
    "/properties/SourceAccount",
    "/properties/SourceArn",
  ],
  readOnlyProperties: ["/properties/Id"],
  primaryIdentifier: ["/properties/FunctionName", "/properties/Id"],
} as const;

/** CORS only for listed origins (none: no CORS configuration, so browsers of other origins are refused). */
function addCors(url: LambdaFunctionUrl, origins: string[]): void {
  addBlockIfAny(url, "cors", origins, {
    allow_origins: origins,
    allow_methods: [...new Set(ROUTES.map((route) => route.method))].sort(),
    allow_headers: [...STREAM_CORS.allowHeaders],
    expose_headers: [...STREAM_CORS.exposeHeaders],
    // Bearer tokens, never cookies.
    allow_credentials: false,
    max_age: STREAM_CORS.maxAge,
  });
}
