import { type OptionSpec, hcl, wholeNumberIn } from "../option-spec";
import { Fn, Token } from "../../cdktf";
import { DEFAULTS } from "../../construct/props";
import { CRON_SWEEP_RULE } from "../../construct/crons";
import {
  API_KEY_CACHE_SECONDS,
  ASYNC_EVENT_AGE_SECONDS,
  ASYNC_RETRY_ATTEMPTS,
  CORS_ORIGIN_PATTERN,
  MAX_RUN_LEGS,
  MEMORY_SIZE_MB,
  SCHEDULE_EXPRESSION_PATTERN,
  SCHEDULE_EXPRESSION_RULE,
  STREAM_TIMEOUT_SECONDS,
  WEBHOOK_HOST_PATTERN,
  WORKER_END_MARGIN_SECONDS,
  WORKER_TIMEOUT_SECONDS,
} from "../../construct/rules";

/** The entries of var.webhook_allowed_hosts the runtime would refuse. */
const REFUSED_WEBHOOK_HOSTS = `[for host in var.webhook_allowed_hosts : host if !can(regex(${hcl(WEBHOOK_HOST_PATTERN)}, host))]`;

/** Background runs, crons, API keys and streaming: the worker, the sweep, the authorizer and the stream function. */
export const RUN_OPTIONS = {
  worker_timeout: {
    prop: "workerTimeout",
    type: "number",
    description: `Timeout of the background-run worker in seconds: one leg of a run, which hands over to a next invocation when it needs more (${WORKER_TIMEOUT_SECONDS.min} to ${WORKER_TIMEOUT_SECONDS.max}; a leg keeps its last ${WORKER_END_MARGIN_SECONDS} s to record how it ended)`,
    default: DEFAULTS.workerTimeout,
    validation: [
      {
        condition: wholeNumberIn("var.worker_timeout", WORKER_TIMEOUT_SECONDS),
        message: `Invalid worker_timeout: expected a whole number from ${WORKER_TIMEOUT_SECONDS.min} to ${WORKER_TIMEOUT_SECONDS.max} seconds.`,
      },
    ],
  },
  worker_memory_size: {
    prop: "workerMemorySize",
    // null: the API function's memory.
    value: (v) => Token.asNumber(Fn.coalesce([v.worker_memory_size!.value, v.memory_size!.value])),
    type: "number",
    description: "Memory of the worker in MB (null: memory_size)",
    default: null,
    validation: [
      {
        condition: `var.worker_memory_size == null ? true : ${wholeNumberIn("var.worker_memory_size", MEMORY_SIZE_MB)}`,
        message: `Invalid worker_memory_size: expected a whole number from ${MEMORY_SIZE_MB.min} to ${MEMORY_SIZE_MB.max} MB.`,
      },
    ],
  },
  worker_reserved_concurrent_executions: {
    prop: "workerReservedConcurrentExecutions",
    type: "number",
    description:
      "Reserved concurrency of the worker: background runs running at once (each holds one invocation for a leg); more wait, queued by Lambda up to worker_maximum_event_age_in_seconds",
    default: DEFAULTS.workerReservedConcurrentExecutions,
    validation: [
      {
        condition: wholeNumberIn("var.worker_reserved_concurrent_executions", { min: 1 }),
        message:
          "Invalid worker_reserved_concurrent_executions: expected a whole number, 1 or more.",
      },
    ],
  },
  worker_maximum_retry_attempts: {
    prop: "workerMaximumRetryAttempts",
    type: "number",
    description:
      "Retries of a failed worker invocation (a crash or timeout of a leg) before Lambda sends its job to the worker's failure queue, which records the run as failed",
    default: DEFAULTS.workerMaximumRetryAttempts,
    validation: [
      {
        condition: wholeNumberIn("var.worker_maximum_retry_attempts", ASYNC_RETRY_ATTEMPTS),
        message: `Invalid worker_maximum_retry_attempts: expected a whole number from ${ASYNC_RETRY_ATTEMPTS.min} to ${ASYNC_RETRY_ATTEMPTS.max}.`,
      },
    ],
  },
  worker_maximum_event_age_in_seconds: {
    prop: "workerMaximumEventAgeInSeconds",
    type: "number",
    description:
      "Seconds a worker invocation may wait (throttled by worker_reserved_concurrent_executions, or between retries) before Lambda sends its job to the failure queue",
    default: DEFAULTS.workerMaximumEventAgeInSeconds,
    validation: [
      {
        condition: wholeNumberIn(
          "var.worker_maximum_event_age_in_seconds",
          ASYNC_EVENT_AGE_SECONDS,
        ),
        message: `Invalid worker_maximum_event_age_in_seconds: expected a whole number from ${ASYNC_EVENT_AGE_SECONDS.min} to ${ASYNC_EVENT_AGE_SECONDS.max} seconds.`,
      },
    ],
  },
  max_run_legs: {
    prop: "maxRunLegs",
    type: "number",
    description:
      "Most legs of one background run (each at most worker_timeout): a run that needs more stops in status timeout (MAX_RUN_LEGS of the functions that run graphs)",
    default: DEFAULTS.maxRunLegs,
    validation: [
      {
        condition: wholeNumberIn("var.max_run_legs", MAX_RUN_LEGS),
        message: `Invalid max_run_legs: expected a whole number from ${MAX_RUN_LEGS.min} to ${MAX_RUN_LEGS.max}.`,
      },
    ],
  },
  recovery_sweep_schedule: {
    prop: "recoverySweepSchedule",
    type: "string",
    description:
      'How often the worker sweeps the table for runs whose process died and takes them over, even when no client reads their thread: an EventBridge rate(...) or cron(...) expression (each sweep is one worker invocation, about 10 Queries and one GetItem per thread with a run in progress). null or "": no schedule (a stalled run is then taken over only when a client reads its thread)',
    default: DEFAULTS.recoverySweepSchedule,
    validation: [
      {
        condition: `var.recovery_sweep_schedule == null || var.recovery_sweep_schedule == "" || can(regex(${hcl(SCHEDULE_EXPRESSION_PATTERN)}, var.recovery_sweep_schedule))`,
        message: `Invalid recovery_sweep_schedule: expected ${SCHEDULE_EXPRESSION_RULE}.`,
      },
      {
        condition: `!var.create_crons || (var.recovery_sweep_schedule != null && var.recovery_sweep_schedule != "")`,
        message: `Invalid recovery_sweep_schedule: expected ${CRON_SWEEP_RULE}.`,
      },
    ],
  },
  create_crons: {
    prop: "createCrons",
    type: "bool",
    description:
      "Fire crons (the SDK's client.crons): they need no AWS resource of their own (they live in the table, and the worker fires the due ones on each recovery sweep, so at recovery_sweep_schedule's precision, every minute by default; one sweep invocation serves both). false sets CRONS_ENABLED=false on the functions that run graphs, so no cron fires, and lets recovery_sweep_schedule be null",
    default: DEFAULTS.createCrons,
  },
  enable_api_keys: {
    prop: "enableApiKeys",
    type: "bool",
    description:
      "Accept API keys (X-Api-Key, created with `npm run api-key -- create`) at API Gateway next to JWTs: every route goes behind a Lambda REQUEST authorizer (the image's authorizer.handler, role limited to GetItem of API key items) that checks either credential, instead of the JWT authorizer. API Gateway cannot cache it (either header may carry the credential, and a REQUEST authorizer's identity sources must all be present): one authorizer invocation per API request, one GetItem per key per authorizer container per api_key_cache_seconds. A refused credential is answered 403. The stream function checks API keys itself whatever this says",
    default: DEFAULTS.enableApiKeys,
  },
  api_key_cache_seconds: {
    prop: "apiKeyCacheSeconds",
    type: "number",
    description:
      "Seconds a container of the authorizer or the stream function reuses an API key's verdict before reading its record again: how long a revocation may take to reach a warm container (API_KEY_CACHE_SECONDS)",
    default: DEFAULTS.apiKeyCacheSeconds,
    validation: [
      {
        condition: wholeNumberIn("var.api_key_cache_seconds", API_KEY_CACHE_SECONDS),
        message: `Invalid api_key_cache_seconds: expected a whole number from ${API_KEY_CACHE_SECONDS.min} to ${API_KEY_CACHE_SECONDS.max}.`,
      },
    ],
  },
  create_stream_function: {
    prop: "createStreamFunction",
    type: "bool",
    description:
      "Create the stream function: the whole API (the streaming routes with Server-Sent Events, and the buffered ones) from a Lambda function URL in RESPONSE_STREAM mode, output as stream_url, for the LangGraph SDK's apiUrl. API Gateway's HTTP APIs buffer responses and stop at 30 s, so streaming clients (useStream, runs.stream) need it. The URL's auth type is NONE: the function verifies the bearer JWT itself, against the authorizer's issuer and audiences. The image must contain stream.handler",
    default: DEFAULTS.createStreamFunction,
  },
  create_stream_url_invoke_permission: {
    prop: "createStreamUrlInvokePermission",
    type: "bool",
    description:
      "With create_stream_function: declare the URL's second resource-policy statement, lambda:InvokeFunction for principal * only when invoked through a function URL (condition lambda:InvokedViaFunctionUrl), which Lambda requires of URLs created since October 2025. Provider 5.x's aws_lambda_permission cannot set that condition, so the module declares it with aws_cloudcontrolapi_resource (AWS::Lambda::Permission; the deploying principal needs cloudformation:CreateResource, GetResource, GetResourceRequestStatus and DeleteResource). false: add the statement yourself (stream_url_invoke_permission_command), or the URL answers 403",
    default: DEFAULTS.createStreamUrlInvokePermission,
  },
  stream_timeout: {
    prop: "streamTimeout",
    type: "number",
    description: `Timeout of the stream function in seconds: the longest a request, and so a streamed run, may take (${STREAM_TIMEOUT_SECONDS.min} to ${STREAM_TIMEOUT_SECONDS.max})`,
    default: DEFAULTS.streamTimeout,
    validation: [
      {
        condition: wholeNumberIn("var.stream_timeout", STREAM_TIMEOUT_SECONDS),
        message: `Invalid stream_timeout: expected a whole number from ${STREAM_TIMEOUT_SECONDS.min} to ${STREAM_TIMEOUT_SECONDS.max} seconds.`,
      },
    ],
  },
  stream_memory_size: {
    prop: "streamMemorySize",
    // null: the API function's memory.
    value: (v) => Token.asNumber(Fn.coalesce([v.stream_memory_size!.value, v.memory_size!.value])),
    type: "number",
    description: "Memory of the stream function in MB (null: memory_size)",
    default: null,
    validation: [
      {
        condition: `var.stream_memory_size == null ? true : ${wholeNumberIn("var.stream_memory_size", MEMORY_SIZE_MB)}`,
        message: `Invalid stream_memory_size: expected a whole number from ${MEMORY_SIZE_MB.min} to ${MEMORY_SIZE_MB.max} MB.`,
      },
    ],
  },
  stream_reserved_concurrent_executions: {
    prop: "streamReservedConcurrentExecutions",
    type: "number",
    description:
      "Reserved concurrency of the stream function: requests it serves at once, each open stream holding one for as long as it lasts (caps cost and DynamoDB load; a function URL has no throttling of its own)",
    default: DEFAULTS.streamReservedConcurrentExecutions,
    validation: [
      {
        condition: wholeNumberIn("var.stream_reserved_concurrent_executions", { min: 1 }),
        message:
          "Invalid stream_reserved_concurrent_executions: expected a whole number, 1 or more.",
      },
    ],
  },
  stream_cors_allow_origins: {
    prop: "streamCorsAllowOrigins",
    // null: the API's CORS origins.
    value: (v) =>
      Token.asList(Fn.coalesce([v.stream_cors_allow_origins!.value, v.cors_allow_origins!.value])),
    type: "list(string)",
    description:
      "Origins allowed by the stream URL's CORS, like https://app.example.com (null: cors_allow_origins, so none by default; [] for none; http only for localhost and 127.0.0.1; never *)",
    default: null,
    validation: [
      {
        condition: `var.stream_cors_allow_origins == null ? true : alltrue([for origin in var.stream_cors_allow_origins : can(regex(${hcl(CORS_ORIGIN_PATTERN)}, origin))])`,
        message:
          "Invalid stream_cors_allow_origins: expected https origins like https://app.example.com (http only for localhost or 127.0.0.1), never *.",
      },
    ],
  },
  webhook_allowed_hosts: {
    prop: "webhookAllowedHosts",
    type: "list(string)",
    description:
      "Hosts run webhooks may be posted to (over https), each a lowercase host or host:port like hooks.example.com; a webhook to any other host is refused (default none: no webhooks)",
    default: [],
    validation: [
      {
        condition: `length(${REFUSED_WEBHOOK_HOSTS}) == 0`,
        message: `Invalid webhook_allowed_hosts: expected lowercase host names, or host:port, like hooks.example.com (no scheme: webhooks are posted over https), got \${jsonencode(${REFUSED_WEBHOOK_HOSTS})}.`,
      },
    ],
  },
} satisfies Record<string, OptionSpec>;
