import { Construct } from "constructs";
import { CloudwatchLogGroup } from "@cdktf/provider-aws/lib/cloudwatch-log-group";
import { LambdaFunction } from "@cdktf/provider-aws/lib/lambda-function";
import { LambdaFunctionUrl } from "@cdktf/provider-aws/lib/lambda-function-url";
import { LambdaPermission } from "@cdktf/provider-aws/lib/lambda-permission";
import { DYNAMODB_ITEM_ACTIONS } from "../../src/table/iam-actions";
import { IMAGE_HANDLERS } from "../../src/runtime/environment";
import { ROUTES } from "../../src/runtime/http/routes";
import { addBlockIfAny, attributeOf, countIf, type Flag } from "./expressions";
import { createImageFunction } from "./function";
import type { Context } from "./props";
import { FunctionRole, type RoleProps } from "./role";
import type { ImageSettings } from "./worker";

/** `CMD` of the streaming entry (image/stream.ts). */
export const STREAM_HANDLER = IMAGE_HANDLERS.stream;

/**
 * What browsers may send and read across origins: the bearer token, JSON bodies, `Last-Event-ID` (a client that
 * reconnects to a stream resumes after it) and `X-Api-Key` (the same JWT as browser UIs send it, the SDK's
 * `apiKey`); `Content-Location` names the run a stream belongs to.
 */
export const STREAM_CORS = {
  allowHeaders: ["authorization", "content-type", "last-event-id", "x-api-key"],
  exposeHeaders: ["content-location"],
  maxAge: 3600,
} as const;

export interface StreamFunctionProps {
  context: Context;
  /** Create the function and its URL (a toggle: everything here has `count`). */
  create: Flag;
  functionName: string;
  image: ImageSettings;
  role: RoleProps;
  /** Where its graphs read and write: the table and its indexes. */
  itemResources: string[];
  /** Its log group (created with the same `count`). */
  logGroup: CloudwatchLogGroup;
  /** The worker it hands background runs to, by ARN (its role may invoke exactly that function). */
  workerFunctionArn: string;
  timeout: number;
  memorySize: number;
  reservedConcurrentExecutions: number;
  logLevel: string;
  /** The API function's, with JWT_ISSUER and JWT_AUDIENCE: the function verifies tokens itself. */
  environment: Record<string, string>;
  /** Origins allowed by CORS (none: no CORS configuration, so browsers of other origins are refused). */
  corsAllowOrigins: string[];
  tags: Record<string, string>;
}

/**
 * Streaming: a function from the same image (`stream.handler`) serving the whole API from a Lambda function URL in
 * RESPONSE_STREAM mode, so Server-Sent Events reach the client as they are written and runs may take up to the
 * function's timeout (API Gateway's HTTP APIs buffer responses and stop waiting at 30 s). A function URL has no
 * JWT authorizer: its auth type is NONE and the function verifies every request's token against the issuer's keys
 * before it reads anything else (a documented scanner exception, see scanner-exceptions.ts). Its role is the API
 * function's least privilege: the table's item actions, its own log group, invoking the worker only.
 */
export class StreamFunction extends Construct {
  readonly role: FunctionRole;
  readonly function: LambdaFunction;
  readonly url: LambdaFunctionUrl;
  /** Anyone may call the URL (lambda:InvokeFunctionUrl, auth type NONE): the function authenticates. */
  readonly urlPermission: LambdaPermission;
  /** Lambda's second check for URLs created since October 2025 (lambda:InvokeFunction). */
  readonly invokePermission: LambdaPermission;
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
      dependsOn: [props.logGroup, this.role.policy],
    });
    this.functionName = attributeOf(this.function, "function_name");
    this.functionArn = attributeOf(this.function, "arn");
    this.url = new LambdaFunctionUrl(this, "url", {
      count,
      functionName: this.functionName,
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
      principal: "*",
      functionUrlAuthType: "NONE",
      dependsOn: [this.url],
    });
    // Function URLs created since October 2025 also need lambda:InvokeFunction. Its condition
    // `lambda:InvokedViaFunctionUrl` (the argument invoked_via_function_url) exists in 6.x releases of the
    // provider only, and this module supports 5.100: unconditioned, the statement also lets any AWS principal
    // call Invoke directly, which reaches the same handler and the same JWT verification as the URL (a
    // documented scanner exception).
    this.invokePermission = new LambdaPermission(this, "invoke_permission", {
      count,
      statementId: "AllowInvokeThroughFunctionUrl",
      action: "lambda:InvokeFunction",
      functionName: this.functionName,
      principal: "*",
      dependsOn: [this.urlPermission],
    });
  }
}

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
