/**
 * Names of the environment variables the Lambda handler and the container entry read, in one place so the
 * Terraform module sets exactly what the code reads.
 */
export const ENVIRONMENT = {
  /** DynamoDB table of checkpoints, thread records and leases. */
  tableName: "TABLE_NAME",
  /** Module exporting a GraphFactory or an `assistants` map (container image only). */
  graphModule: "GRAPH_MODULE",
  /** JWT claim that carries the tenant id (default `custom:tenant_id`). */
  tenantClaim: "TENANT_CLAIM",
  /** pino level (default `info`). */
  logLevel: "LOG_LEVEL",
  /** Milliseconds before the Lambda deadline at which a run is stopped (default 3000). */
  deadlineMarginMs: "DEADLINE_MARGIN_MS",
  /** Optional DynamoDB endpoint (DynamoDB Local in development). */
  dynamodbEndpoint: "DYNAMODB_ENDPOINT",
  /**
   * JSON object of variable name to the ARN of a Secrets Manager secret or an SSM SecureString parameter
   * (container image only): each is read once at cold start, before the graph module loads, into that variable.
   * Only ARNs travel through the function's configuration and Terraform state, never the values.
   */
  environmentArns: "ENVIRONMENT_ARNS",
  /** Name (or ARN) of the worker function background runs are sent to; unset: they run in this process. */
  workerFunctionName: "WORKER_FUNCTION_NAME",
  /** Most legs (each at most one function timeout) a background run may take (default 8). */
  maxRunLegs: "MAX_RUN_LEGS",
  /** Comma-separated hosts run webhooks may be posted to (https only); unset: no webhooks. */
  webhookAllowedHosts: "WEBHOOK_ALLOWED_HOSTS",
  /**
   * Issuer of accepted JWTs, verified inside the function where no API Gateway authorizer does it (the streaming
   * function URL): the Cognito user pool's issuer URL or any OIDC issuer's.
   */
  jwtIssuer: "JWT_ISSUER",
  /** Comma-separated audiences (`aud`, or Cognito's `client_id`) accepted with JWT_ISSUER. */
  jwtAudience: "JWT_AUDIENCE",
  /**
   * Seconds a container reuses an API key's verdict before reading its record again (default 60): how long a
   * revocation may take to reach a warm container, against one GetItem per key per container per period.
   */
  apiKeyCacheSeconds: "API_KEY_CACHE_SECONDS",
  /**
   * `false` turns crons off (the module's `create_crons`): due crons are not fired and no cron can be created,
   * since it would never fire; existing ones can still be listed, updated and deleted. Default `true`.
   */
  cronsEnabled: "CRONS_ENABLED",
} as const;

/**
 * Variables of LangGraph Server's own that the runtime reads as that server does. The Terraform module sets none
 * of them (give them in its `environment`), so they stay out of {@link ENVIRONMENT}, the names it owns.
 */
export const LANGGRAPH_ENVIRONMENT = {
  /**
   * JSON object of graph id to the default config of that graph's system assistant: its `configurable`, `tags`,
   * `recursion_limit` and `context` (e.g. `{"agent": {"configurable": {"model_name": "openai"}}}`).
   */
  graphConfig: "LANGGRAPH_CONFIG",
} as const;

/**
 * Settings of the runtime that the Terraform module does not set itself: a consumer gives them in its
 * `environment` input (or with `ENV` in an image built on Memory Table's).
 */
export const OPTIONAL_ENVIRONMENT = {
  /**
   * A ready-made LangGraph auth policy for every tenant: `owner-only` (each user sees only their own threads, runs,
   * crons and store namespace; see ownerOnly). Unset: the project's own `auth`, if any.
   */
  authPolicy: "AUTH_POLICY",
} as const;

/**
 * Secrets the runtime reads that the Terraform module never sets: a consumer gives each from Secrets Manager in
 * the module's `secrets` (read at cold start through ENVIRONMENT_ARNS), so they stay out of {@link ENVIRONMENT}.
 */
export const SECRET_ENVIRONMENT = {
  /**
   * Signs every webhook delivery (Standard Webhooks: `whsec_` and 24 to 64 base64 key bytes); unset: deliveries
   * go unsigned.
   */
  webhookSigningSecret: "WEBHOOK_SIGNING_SECRET",
} as const;

/** Handlers of the container image, as `CMD` values (`<file>.<export>` under the task root). */
export const IMAGE_HANDLERS = {
  /** The HTTP API handler (API Gateway payload 2.0). */
  api: "index.handler",
  /** Removes every item of threads whose record DynamoDB TTL deleted (table stream, TTL removals only). */
  cleaner: "cleaner.handler",
  /** Runs background runs, one leg per invocation (asynchronous invocations, and its failure queue). */
  worker: "worker.handler",
  /** The whole API from a function URL in RESPONSE_STREAM mode: streamed runs, up to the function's timeout. */
  stream: "stream.handler",
  /** API Gateway's Lambda REQUEST authorizer: a JWT or an API key (`X-Api-Key`) to the caller's tenant. */
  authorizer: "authorizer.handler",
} as const;
