/**
 * The scanner rules (checkov, trivy, KICS) the module deliberately does not meet, each with the reason. The
 * module README lists them, and the security-bar test checks that the synthesized module fails exactly these
 * and meets every other rule it encodes.
 */
export interface ScannerException {
  /** Rule ids, scanner first. */
  rules: string[];
  resource: string;
  what: string;
  why: string;
}

export const SCANNER_EXCEPTIONS = {
  lambdaInVpc: {
    rules: ["checkov CKV_AWS_117"],
    resource: "aws_lambda_function",
    what: "the functions are not attached to a VPC by default (vpc_subnet_ids and vpc_security_group_ids attach every one)",
    why: "they reach only AWS APIs (DynamoDB, KMS, Lambda, Secrets Manager, SSM, X-Ray, CloudWatch Logs), over TLS with IAM; a VPC adds NAT or VPC endpoints and protects nothing they talk to, so it is the choice of an organisation that requires it",
  },
  lambdaCodeSigning: {
    rules: ["checkov CKV_AWS_272"],
    resource: "aws_lambda_function",
    what: "no code signing configuration",
    why: "Lambda code signing applies to .zip packages only; the image is pinned by digest (image_uri) instead",
  },
  lambdaDeadLetterQueue: {
    rules: ["checkov CKV_AWS_116", "KICS 720f44cf-285e-4b69-8f72-835e6bc1dceb"],
    resource: "aws_lambda_function",
    what: "no dead-letter queue (dead_letter_config) on the functions",
    why: "a dead-letter queue receives failed asynchronous invocations only: API Gateway invokes the API function synchronously, its function URL the stream function, and the stream's event source mapping invokes the cleaner synchronously and sends the batches it gives up on to its on-failure destination (a KMS-encrypted SQS queue). The worker, invoked asynchronously, has an on-failure destination instead (aws_lambda_function_event_invoke_config, its own KMS-encrypted SQS queue): its destination record carries the job and the error, and the worker reads it back to record the run as failed; a dead-letter queue as well would deliver every failure twice",
  },
  lambdaFunctionUrlAuth: {
    rules: ["checkov CKV_AWS_258"],
    resource: "aws_lambda_function_url",
    what: "the stream function's URL has authorization_type NONE (with create_stream_function)",
    why: "a function URL has no JWT authorizer, and AWS_IAM would need SigV4-signed requests, which browsers and the LangGraph SDK do not send. The function verifies the bearer JWT itself before it reads the request: signature against the issuer's published keys (asymmetric algorithms only), iss, exp, nbf and the audience, with the issuer and audiences of the HTTP API's authorizer (the created user pool or jwt_issuer and jwt_audience); a request without a valid token gets the authorizer's 401 and never reaches a route. Streaming needs the URL: HTTP APIs buffer responses and stop at 30 s",
  },
  lambdaPublicPermission: {
    rules: ["checkov CKV_AWS_301", "KICS e08ed7eb-f3ef-494d-9d22-2e3db756a347"],
    resource: "aws_lambda_permission",
    what: "the stream function's resource policy allows principal * to call lambda:InvokeFunctionUrl, with the condition lambda:FunctionUrlAuthType = NONE (function_url_auth_type)",
    why: "what authorization_type NONE means: anyone may reach the URL, and the function authenticates (see CKV_AWS_258). No statement admits a direct Invoke from another account: Lambda's second statement for URLs created since October 2025 (lambda:InvokeFunction) carries the condition lambda:InvokedViaFunctionUrl and is declared through Cloud Control (aws_cloudcontrolapi_resource), which the scanners do not read. Turn the stream function off (create_stream_function = false) where no public endpoint may exist",
  },
  cloudfrontWaf: {
    rules: [
      "checkov CKV_AWS_68",
      "checkov CKV2_AWS_47",
      "trivy AVD-AWS-0011",
      "KICS 1419b4c6-6d5c-4534-9cf6-6a5266085333",
    ],
    resource: "aws_cloudfront_distribution",
    what: "the stream domain's distribution (with stream_domain_name) has no AWS WAF web ACL unless stream_web_acl_arn gives one",
    why: "a web ACL is billed per ACL, rule and request, and its rules (rate limits per client, managed rule groups) follow the deployment's traffic, so it is the consumer's and attached by ARN. It would not cover the function URL, which keeps answering directly and authenticates every request itself; stream_reserved_concurrent_executions caps the function either way. CKV2_AWS_47 reads the rules of an aws_wafv2_web_acl of the same configuration, which a web ACL given by ARN never is",
  },
  cloudfrontAccessLogs: {
    rules: [
      "checkov CKV_AWS_86",
      "trivy AVD-AWS-0010",
      "KICS 94690d79-b3b0-43de-b656-84ebef5753e5",
    ],
    resource: "aws_cloudfront_distribution",
    what: "no CloudFront access logs on the stream domain's distribution (with stream_domain_name)",
    why: "standard logs need an S3 bucket with ACLs enabled, or a CloudWatch Logs delivery source created in us-east-1, which a module of any region with no provider of its own cannot create. The stream function writes a line per authenticated request (route, status, tenant, duration) to its KMS-encrypted log group, and CloudFront's metrics are in CloudWatch without logs",
  },
  cloudfrontGeoRestriction: {
    rules: ["checkov CKV_AWS_374"],
    resource: "aws_cloudfront_distribution",
    what: "no geo restriction on the stream domain's distribution (with stream_domain_name)",
    why: "who may call is decided by the JWT or API key the function verifies, not by country; a deployment that must refuse countries does it in its web ACL (stream_web_acl_arn, a geo match rule)",
  },
  cloudfrontDefaultRootObject: {
    rules: ["checkov CKV_AWS_305"],
    resource: "aws_cloudfront_distribution",
    what: "no default root object on the stream domain's distribution (with stream_domain_name)",
    why: "a default root object rewrites a request for / to a file, and the origin is an API, not a bucket: every path is a route of the function, which answers an unknown one with 404",
  },
  cloudfrontOriginFailover: {
    rules: ["checkov CKV_AWS_310"],
    resource: "aws_cloudfront_distribution",
    what: "one origin and no origin group on the stream domain's distribution (with stream_domain_name)",
    why: "the one origin is the stream function's URL in the module's region, and there is no replica to fail over to (another region would be another deployment with its own table); CloudFront fails over GET, HEAD and OPTIONS only, never the POST that starts a stream",
  },
  cloudfrontResponseHeadersPolicy: {
    rules: ["checkov CKV2_AWS_32"],
    resource: "aws_cloudfront_distribution",
    what: "no response headers policy on the stream domain's distribution (with stream_domain_name)",
    why: "responses pass through as the function writes them: JSON and Server-Sent Events, no page to frame or sniff, and CORS headers of its own (stream_cors_allow_origins), which a policy at the edge could add to or override behind the function's back",
  },
} as const satisfies Record<string, ScannerException>;
