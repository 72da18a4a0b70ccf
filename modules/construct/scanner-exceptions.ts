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
} as const satisfies Record<string, ScannerException>;
