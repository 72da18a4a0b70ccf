import { Construct } from "constructs";
import { Apigatewayv2Api } from "@cdktf/provider-aws/lib/apigatewayv2-api";
import { Apigatewayv2Authorizer } from "@cdktf/provider-aws/lib/apigatewayv2-authorizer";
import { Apigatewayv2Integration } from "@cdktf/provider-aws/lib/apigatewayv2-integration";
import { Apigatewayv2Route } from "@cdktf/provider-aws/lib/apigatewayv2-route";
import { Apigatewayv2Stage } from "@cdktf/provider-aws/lib/apigatewayv2-stage";
import { CloudwatchLogGroup } from "@cdktf/provider-aws/lib/cloudwatch-log-group";
import { LambdaPermission } from "@cdktf/provider-aws/lib/lambda-permission";
import { ROUTES, RouteDefinition } from "../../src/runtime/http/routes";
import { addBlockIfAny, attributeOf, choose, countIf, type Flag } from "./expressions";

/** Stable construct id of a route (`POST /threads/{thread_id}/runs/wait` -> `route_post_threads_thread_id_runs_wait`). */
export function routeId(route: RouteDefinition): string {
  const path = route.path
    .replace(/[{}]/g, "")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .replace(/^_|_$/g, "");
  return `route_${route.method.toLowerCase()}_${path}`;
}

/** What the stage writes per request: enough to trace a call, never a token or a body. */
export const ACCESS_LOG_FORMAT = {
  requestId: "$context.requestId",
  ip: "$context.identity.sourceIp",
  requestTime: "$context.requestTime",
  httpMethod: "$context.httpMethod",
  routeKey: "$context.routeKey",
  status: "$context.status",
  protocol: "$context.protocol",
  responseLength: "$context.responseLength",
  integrationStatus: "$context.integrationStatus",
  integrationLatency: "$context.integrationLatency",
  authorizerError: "$context.authorizer.error",
  subject: "$context.authorizer.claims.sub",
};

/** What the API invokes: the function, or its alias (`qualifier`) when versions are published. */
export interface ApiTarget {
  functionName: string;
  invokeArn: string;
  qualifier?: string;
}

export interface HttpApiProps {
  name: string;
  target: ApiTarget;
  issuer: string;
  audience: string[];
  corsAllowOrigins: string[];
  throttlingBurstLimit: number;
  throttlingRateLimit: number;
  accessLogGroup: CloudwatchLogGroup;
  tags: Record<string, string>;
  /** Turn off the default `execute-api` endpoint (a custom domain is then the one way in). Default false. */
  disableExecuteApiEndpoint?: Flag;
  /**
   * With `create`: every route behind this Lambda REQUEST authorizer (a JWT or an API key) instead of the JWT
   * authorizer. An HTTP API route has one authorizer, and a REQUEST authorizer's identity sources must all be
   * present or API Gateway answers 401 without calling it: with two headers either of which may carry the
   * credential there is no identity source to cache on, so its results are not cached by API Gateway (TTL 0);
   * the function caches API key verdicts itself (API_KEY_CACHE_SECONDS).
   */
  lambdaAuthorizer?: LambdaAuthorizerTarget;
}

/** The authorizer function API Gateway invokes: its alias (`qualifier`) when versions are published. */
export interface LambdaAuthorizerTarget {
  create: Flag;
  functionName: string;
  invokeArn: string;
  qualifier?: string;
}

/**
 * Headers browsers may send cross-origin: the SDK's bearer token, or an API key (what browser UIs send), and the
 * protocol version an MCP client sends to `/mcp` after `initialize`.
 */
export const API_CORS_ALLOW_HEADERS = [
  "authorization",
  "content-type",
  "mcp-protocol-version",
  "x-api-key",
];

/**
 * Headers browsers may read: the run a created run is (`content-location`, the SDK's `onRunCreated`), where a
 * created resource is, and the searches' pagination.
 */
export const API_CORS_EXPOSE_HEADERS = [
  "content-location",
  "location",
  "x-pagination-next",
  "x-pagination-total",
];

/** The HTTP API's `cors_configuration` for `origins` (API Gateway answers preflights with it, before any authorizer). */
export interface ApiCorsConfiguration {
  allow_origins: string[];
  allow_methods: string[];
  allow_headers: string[];
  expose_headers: string[];
  max_age: number;
}

export function apiCorsConfiguration(origins: string[]): ApiCorsConfiguration {
  return {
    allow_origins: origins,
    allow_methods: [...new Set(ROUTES.map((route) => route.method))].sort(),
    allow_headers: API_CORS_ALLOW_HEADERS,
    expose_headers: API_CORS_EXPOSE_HEADERS,
    max_age: 3600,
  };
}

/**
 * The HTTP API: one explicit route per handler route, every one behind the JWT authorizer (no `$default` route,
 * and HTTP APIs answer CORS preflight themselves), access logs, throttling, CORS only for listed origins.
 */
export class HttpApi extends Construct {
  readonly api: Apigatewayv2Api;
  readonly authorizer: Apigatewayv2Authorizer;
  /** The Lambda REQUEST authorizer and API Gateway's permission to invoke it (`count`: with API keys). */
  readonly lambdaAuthorizer: Apigatewayv2Authorizer;
  readonly lambdaAuthorizerPermission: LambdaPermission;
  readonly integration: Apigatewayv2Integration;
  readonly routes: Apigatewayv2Route[];
  readonly stage: Apigatewayv2Stage;
  readonly permission: LambdaPermission;

  constructor(scope: Construct, id: string, props: HttpApiProps) {
    super(scope, id);
    this.api = new Apigatewayv2Api(this, "api", {
      name: props.name,
      protocolType: "HTTP",
      disableExecuteApiEndpoint: props.disableExecuteApiEndpoint,
      tags: props.tags,
    });
    this.addCors(props.corsAllowOrigins);
    this.authorizer = new Apigatewayv2Authorizer(this, "authorizer", {
      apiId: this.api.id,
      name: "jwt",
      authorizerType: "JWT",
      identitySources: ["$request.header.Authorization"],
      jwtConfiguration: { issuer: props.issuer, audience: props.audience },
    });
    const lambda = props.lambdaAuthorizer ?? { create: false, functionName: "", invokeArn: "" };
    this.lambdaAuthorizer = new Apigatewayv2Authorizer(this, "lambda_authorizer", {
      count: countIf(lambda.create),
      apiId: this.api.id,
      name: "jwt-or-api-key",
      authorizerType: "REQUEST",
      authorizerUri: lambda.invokeArn,
      authorizerPayloadFormatVersion: "2.0",
      enableSimpleResponses: true,
      // No identity source (either header may carry the credential), so no API Gateway cache: see props.
      authorizerResultTtlInSeconds: 0,
    });
    this.lambdaAuthorizerPermission = new LambdaPermission(this, "lambda_authorizer_permission", {
      count: countIf(lambda.create),
      statementId: "AllowThisHttpApiAuthorizer",
      action: "lambda:InvokeFunction",
      functionName: lambda.functionName,
      qualifier: lambda.qualifier,
      principal: "apigateway.amazonaws.com",
      sourceArn: `${this.api.executionArn}/authorizers/*`,
    });
    this.integration = new Apigatewayv2Integration(this, "integration", {
      apiId: this.api.id,
      integrationType: "AWS_PROXY",
      integrationUri: props.target.invokeArn,
      payloadFormatVersion: "2.0",
      timeoutMilliseconds: 30000,
    });
    this.routes = ROUTES.map(
      (route) =>
        new Apigatewayv2Route(this, routeId(route), {
          apiId: this.api.id,
          routeKey: `${route.method} ${route.path}`,
          target: `integrations/${this.integration.id}`,
          authorizationType: choose(lambda.create, "CUSTOM", "JWT"),
          authorizerId: choose(
            lambda.create,
            attributeOf(this.lambdaAuthorizer, "id"),
            this.authorizer.id,
          ),
        }),
    );
    this.stage = new Apigatewayv2Stage(this, "stage", {
      apiId: this.api.id,
      name: "$default",
      autoDeploy: true,
      accessLogSettings: {
        destinationArn: props.accessLogGroup.arn,
        format: JSON.stringify(ACCESS_LOG_FORMAT),
      },
      defaultRouteSettings: {
        throttlingBurstLimit: props.throttlingBurstLimit,
        throttlingRateLimit: props.throttlingRateLimit,
        detailedMetricsEnabled: true,
      },
      tags: props.tags,
    });
    this.permission = new LambdaPermission(this, "permission", {
      statementId: "AllowThisHttpApi",
      action: "lambda:InvokeFunction",
      functionName: props.target.functionName,
      qualifier: props.target.qualifier,
      principal: "apigateway.amazonaws.com",
      sourceArn: `${this.api.executionArn}/*/*`,
    });
  }

  /** A CORS block only when origins are listed. */
  private addCors(origins: string[]): void {
    addBlockIfAny(this.api, "cors_configuration", origins, { ...apiCorsConfiguration(origins) });
  }
}
