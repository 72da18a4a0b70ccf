/**
 * Renders the module README from the synthesized module (requirements, resources, variables, outputs) and the
 * construct's own rules and data (examples, the environment guard, alarms, scanner exceptions), so the document
 * can never disagree with the module (the file is generated, never edited by hand).
 */
import { ALARM_THRESHOLDS } from "./construct/alarms";
import { customDomains } from "./readme-domains";
import { logGroupNames } from "./construct/logs";
import { SCANNER_EXCEPTIONS } from "./construct/scanner-exceptions";
import { secretLikeNames } from "./construct/rules";
import { RECOVERY_SWEEP_EVENT } from "./construct/recovery-sweep";
import { CRONS_ENABLED } from "./construct/crons";
import { STREAM_HANDLER } from "./construct/stream";
import { MODULE_USAGE, README_EXAMPLES, type ReadmeExample } from "./readme-examples";
import { MODULE_TAG, MODULE_VERSION } from "./version";

interface VariableBlock {
  type?: string;
  description?: string;
  default?: unknown;
}

interface OutputBlock {
  description?: string;
}

type Blocks = Record<string, Record<string, unknown>>;

/** The synthesized module, as the README needs it. */
export interface ModuleDocument {
  terraform: {
    required_version?: string;
    required_providers?: Record<string, { source: string; version: string }>;
  };
  variables: Record<string, VariableBlock>;
  outputs: Record<string, OutputBlock>;
  resources: Blocks;
  data: Blocks;
}

function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\n/g, " ");
}

/** A Markdown table aligned the way Prettier prints it, so the generated file passes `prettier --check`. */
export function renderTable(header: string[], rows: string[][]): string[] {
  const widths = header.map((title, column) =>
    Math.max(3, title.length, ...rows.map((row) => row[column]!.length)),
  );
  const line = (cells: string[]) =>
    `| ${cells.map((text, column) => text.padEnd(widths[column]!)).join(" | ")} |`;
  return [line(header), line(widths.map((width) => "-".repeat(width))), ...rows.map(line)];
}

function code(value: unknown): string {
  return `\`${JSON.stringify(value)}\``;
}

const registry = (kind: "resources" | "data-sources", type: string) =>
  `https://registry.terraform.io/providers/hashicorp/aws/latest/docs/${kind}/${type.replace(/^aws_/, "")}`;

function example({ title, text, hcl }: ReadmeExample, level: string): string[] {
  return [`${level} ${title}`, "", text, "", "```hcl", hcl.trim(), "```", ""];
}

/** Names the environment guard refuses and lets through, run through the guard itself. */
const GUARD_SAMPLES = [
  "OPENAI_API_KEY",
  "DB_PASSWORD",
  "GITHUB_TOKEN",
  "JWT_SECRET",
  "STRIPE_SECRET_KEY",
  "AWS_SECRET_ACCESS_KEY",
  "GOOGLE_CREDENTIALS",
  "openaiApiKey",
  "MAX_TOKENS",
  "TOKEN_BUDGET",
  "SECRET_ARN",
  "PASSWORD_MIN_LENGTH",
  "CACHE_KEY",
  "PUBLIC_KEY",
];

function environmentGuard(): string[] {
  const refused = secretLikeNames(GUARD_SAMPLES);
  const allowed = GUARD_SAMPLES.filter((name) => !refused.includes(name));
  const list = (names: string[]) => names.map((name) => `\`${name}\``).join(", ");
  return [
    "## Secrets, and what `environment` refuses",
    "",
    "`environment` is plain configuration: its values are visible in the Lambda console, the Terraform plan and",
    "the state. So it refuses a variable whose name says it holds a secret (its last word is SECRET, PASSWORD,",
    "TOKEN or CREDENTIALS, or it ends in an API, private, access, signing, encryption or client KEY), and a value",
    "that is a credential whatever its name (a PEM private key, a URL with a password, an AWS access key id).",
    "Other words anywhere else in a name are ordinary: a variable about tokens is not a token.",
    "",
    `- refused: ${list(refused)}`,
    `- accepted: ${list(allowed)}`,
    "",
    "The error names the variables and points to `secrets`: give the ARN of a Secrets Manager secret or of an SSM",
    "SecureString parameter there. The functions that run graphs get `secretsmanager:GetSecretValue` or",
    "`ssm:GetParameter` on exactly those ARNs and, for keys listed in `secrets_kms_key_arns`, `kms:Decrypt` only",
    "through that service and only for those secrets (`kms:EncryptionContext:SecretARN` / `PARAMETER_ARN`). The",
    "image reads them once at cold start, before the graph module loads, and sets each variable; a secret that",
    "cannot be read, or a parameter that is not a SecureString, fails the function's init with",
    "`Invalid <NAME>: ...` naming the ARN, never a value. Only ARNs reach Terraform state. A value changed in",
    "Secrets Manager reaches new execution environments (cold starts), not running ones.",
    "",
  ];
}

function streaming(): string[] {
  const rules = [
    SCANNER_EXCEPTIONS.lambdaFunctionUrlAuth,
    SCANNER_EXCEPTIONS.lambdaPublicPermission,
  ]
    .flatMap((exception) => exception.rules)
    .join(" and ");
  return [
    "## Streaming: the stream function and its URL",
    "",
    "API Gateway's HTTP APIs buffer a response until it is complete and stop waiting after 30 seconds, so",
    "Server-Sent Events (`POST /threads/{thread_id}/runs/stream`, `GET /threads/{thread_id}/runs/{run_id}/stream`,",
    "`POST /runs/stream`) cannot stream through them. With `create_stream_function = true` (the default) the module",
    `adds the stream function (\`<name>-stream\`, the same image with \`CMD ${STREAM_HANDLER}\`) behind a Lambda`,
    "function URL in `RESPONSE_STREAM` mode, output as `stream_url`. It serves the whole API, buffered routes",
    "included, so one `apiUrl` works for the LangGraph SDK, and a request may last up to `stream_timeout` (900 s by",
    "default). The HTTP API keeps serving every route, buffered, for clients that want API Gateway in front.",
    "",
    "A function URL has no JWT authorizer, so its auth type is `NONE` and the function verifies the bearer token",
    "itself before it reads the request: the signature against the issuer's published keys (asymmetric algorithms",
    "only), `iss`, `exp`, `nbf` and the audience (`aud`, or a Cognito access token's `client_id`). The issuer and",
    "audiences are the authorizer's, the created user pool's or `jwt_issuer` and `jwt_audience`, passed as",
    "`JWT_ISSUER` and `JWT_AUDIENCE`; `environment` may not set either. A request without a valid token gets the",
    "authorizer's 401 and reaches no route. Its role is the API function's least privilege (the table's item",
    "actions on the table and its indexes, its own log group, `lambda:InvokeFunction` on the worker only, so its",
    "background runs go to the worker); the graph inputs (`environment`, `secrets`, `graph_policy_*`), the tenant",
    "role and the alarms apply to it as to the other functions that run graphs.",
    "",
    "Its resource policy has two statements for principal `*`, and neither admits a direct `Invoke` from another",
    "account: `lambda:InvokeFunctionUrl` with the condition `lambda:FunctionUrlAuthType = NONE`",
    "(`aws_lambda_permission.stream_url_permission`), and `lambda:InvokeFunction` with the condition",
    "`lambda:InvokedViaFunctionUrl = true`, which Lambda requires of function URLs created since October 2025 (and",
    "of every URL since November 2026): without it the URL answers 403. Provider 5.x's `aws_lambda_permission` cannot",
    "set that condition (`invoked_via_function_url` arrived in provider 6.28.0), so the module declares the statement",
    "with `aws_cloudcontrolapi_resource.stream_invoke_via_url_permission`: Cloud Control makes the same",
    "`AddPermission` call from CloudFormation's `AWS::Lambda::Permission` and its `InvokedViaFunctionUrl` property.",
    "The principal that applies the module then needs `cloudformation:CreateResource`, `GetResource`,",
    "`GetResourceRequestStatus` and `DeleteResource` besides the Lambda actions. Where Cloud Control is not allowed,",
    "set `create_stream_url_invoke_permission = false` and run the command of the output",
    "`stream_url_invoke_permission_command` once after the first apply (AWS CLI 2.31 or later,",
    "`--invoked-via-function-url`); Terraform's plan stays empty, as the module's permissions manage their own",
    `statement ids only. The URL's auth type and the first statement are the scanner exceptions ${rules} below.`,
    "",
    "On provider 6.x: the module's range (`< 6.0.0`) admits only the provider its tests plan. From 6.28.0,",
    "`aws_lambda_function_url` adds the conditioned `lambda:InvokeFunction` statement itself when it creates a URL of",
    "auth type `NONE`, and `aws_lambda_permission` takes `invoked_via_function_url = true`; a release planned against",
    "6.x will declare the statement that way and drop the Cloud Control resource (a `removed` block that keeps the",
    "statement, so the URL never loses it). Until then a configuration on 6.x stays on provider 5.x for this module.",
    "",
    "It is on by default because every LangGraph client streams (`useStream`, Agent Chat UI, `runs.stream`) and",
    "nothing else in the module serves them. Turn it off with `create_stream_function = false` where no endpoint",
    "may exist that API Gateway does not authorize, or before your image contains `stream.handler`. A function URL",
    "has no throttling of its own: `stream_reserved_concurrent_executions` caps concurrent requests, each open",
    "stream holding one for as long as it lasts; `stream_domain_name` puts a CloudFront distribution in front",
    "(Custom domains, below) and `stream_web_acl_arn` AWS WAF on it, for rate limits per client.",
    "CORS: the URL answers browsers of `cors_allow_origins` unless `stream_cors_allow_origins` is given (`[]`:",
    "none), never `*` and never with credentials; it allows the `authorization`, `content-type`,",
    "`last-event-id` (a client that reconnects resumes after the last event it saw), `mcp-protocol-version` (an MCP",
    "client's, to `/mcp`) and `x-api-key` headers (the JWT as browser UIs such as Agent Chat UI send it, verified",
    "as the bearer token) and exposes",
    "`content-location` (the run a stream belongs to).",
    "",
  ];
}

function vpc(): string[] {
  return [
    "## Functions in a VPC",
    "",
    "`vpc_subnet_ids` with `vpc_security_group_ids` (both or neither, ids validated) attach every function: the API",
    "function, the worker, the stream function and the cleaner. Each role then gets a policy of its own,",
    "`memory-table-vpc`, with what Lambda needs to manage the functions' network interfaces (the EC2 actions of",
    "AWSLambdaVPCAccessExecutionRole, scoped): `ec2:CreateNetworkInterface` on this account's network interfaces",
    "in the region and on the given subnets and security groups (any owner, so a shared VPC's subnets work);",
    "`ec2:DeleteNetworkInterface`, `ec2:AssignPrivateIpAddresses` and `ec2:UnassignPrivateIpAddresses` on this",
    "account's network interfaces; `ec2:DescribeNetworkInterfaces` and `ec2:DescribeSubnets` on `*`, as they",
    "support no resource ARN. The functions wait for that policy, as Lambda checks it when it creates them.",
    "",
    "In private subnets without NAT, the functions reach AWS through VPC endpoints (private DNS on, the security",
    "groups allowing egress to 443):",
    "",
    ...renderTable(
      ["Endpoint", "Type", "Needed by"],
      [
        [
          "`com.amazonaws.<region>.dynamodb`",
          "gateway",
          "every function (on the subnets' route tables)",
        ],
        [
          "`com.amazonaws.<region>.lambda`",
          "interface",
          "the API and stream functions (they invoke the worker) and the worker (its next legs)",
        ],
        [
          "`com.amazonaws.<region>.secretsmanager`",
          "interface",
          "`secrets` with Secrets Manager ARNs",
        ],
        ["`com.amazonaws.<region>.ssm`", "interface", "`secrets` with SSM parameter ARNs"],
        ["`com.amazonaws.<region>.sts`", "interface", "code that assumes the tenant role"],
        [
          "`com.amazonaws.<region>.xray`",
          "interface",
          "graph code that sends its own trace segments",
        ],
      ],
    ),
    "",
    "Not needed: KMS and CloudWatch Logs. The functions never call KMS (DynamoDB, Lambda, SQS, Secrets Manager and",
    "SSM use the key on their behalf, which is why the roles' KMS grant is scoped with `kms:ViaService`), and Lambda",
    "delivers their logs outside the VPC. Webhooks (`webhook_allowed_hosts`) and model providers outside AWS need a",
    "NAT gateway or a proxy. Lambda creates the network interfaces when it creates or updates a function, not per",
    "invocation, so cold starts stay as they are.",
    "",
  ];
}

function broughtKey(): string[] {
  const groups = Object.values(logGroupNames("<name>"))
    .map((group) => `\`${group}\``)
    .join(", ");
  return [
    "## Bringing your own KMS key",
    "",
    "With `create_kms_key = false` and `kms_key_arn`, the key's policy must:",
    "",
    "- delegate to IAM: a statement allowing `kms:*` to `arn:<partition>:iam::<account>:root` (AWS's default key",
    "  policy). The module grants its roles the key through IAM policies, scoped with `kms:ViaService` to DynamoDB,",
    "  Lambda and SQS; without that statement the key policy ignores them and every encrypted call fails;",
    `- let \`logs.<region>.amazonaws.com\` use the key for the module's log groups (${groups}), with the condition`,
    "  `kms:EncryptionContext:aws:logs:arn` on their ARNs, as the created key's policy does.",
    "",
    "The alarm topic (`create_alarm_topic`) always gets a key of its own, whose policy lets CloudWatch publish.",
    "",
  ];
}

function backgroundRuns(): string[] {
  return [
    "## Background runs",
    "",
    "The API function hands every background run to the worker function (`<name>-worker`, the same image with",
    "`CMD worker.handler`) with an asynchronous invocation, naming it in `WORKER_FUNCTION_NAME`. One worker",
    "invocation runs one leg of a run, up to `worker_timeout` less a 10-second margin, and invokes the worker again",
    "when the run needs more, for at most `max_run_legs` legs. A leg that crashes or times out is retried by Lambda",
    "(`worker_maximum_retry_attempts`) for up to `worker_maximum_event_age_in_seconds`, which also bounds how long",
    "a job may wait while `worker_reserved_concurrent_executions` is reached. Then Lambda sends the job to the",
    "worker's failure queue (`<name>-worker-failures`, encrypted with the key, kept 14 days), which feeds the",
    "worker back: it records the run as failed, so no run stays `running`, and leaves in the queue only what it",
    "could not record (retried each visibility timeout, six worker timeouts, and alarmed on by age).",
    "",
    "The worker is always created: without it the API function would run background runs itself, and Lambda",
    "freezes a function once it has answered. The API function may invoke exactly the worker; the worker may",
    "invoke exactly itself, and send to, receive from and delete from its own failure queue only. Run webhooks go",
    "over https to the hosts of `webhook_allowed_hosts` only (none by default).",
    "",
    "### Recovery sweep",
    "",
    "A run whose process died (its lease lapsed while it ran, or its next leg never came) is taken over from its",
    "last checkpoint when the run or its thread is read. So that it is taken over even when no client reads it, an",
    "EventBridge rule (`<name>-recovery-sweep`) invokes the worker on `recovery_sweep_schedule` (default",
    `\`rate(1 minute)\`) with the event \`${JSON.stringify(RECOVERY_SWEEP_EVENT)}\`: the worker finds the threads`,
    "with a run in progress on the table's `threads-unsettled` index and takes over the runs whose process died.",
    "What it costs, per sweep: one worker invocation (about 44,000 a month at one a minute), about 10 Queries, and",
    "one GetItem per thread that has a run in progress.",
    '`recovery_sweep_schedule` takes a `rate(...)` or `cron(...)` expression; `null` or `""` creates no rule, and a',
    "stalled run is then taken over only when a client reads its thread. Only EventBridge, from this rule only",
    "(`source_arn`), may invoke the worker this way; the sweep uses the worker's own role, which already reads the",
    "table and each of its indexes by name.",
    "",
    "### Crons",
    "",
    "Crons (the SDK's `client.crons`) need no AWS resource of their own: they are items of the table, and the same",
    "sweep event fires the due ones (one run each, made exactly once; a missed span runs once), so crons fire at",
    "`recovery_sweep_schedule`'s precision, every minute by default, at no cost beyond the sweep's. `create_crons`",
    `(default \`true\`) is therefore a setting of the functions, not a resource: it sets \`${CRONS_ENABLED}\` (\`"true"\` or`,
    '`"false"`) on the functions that run graphs (the API, worker and stream functions), and nothing else in the',
    'plan changes. With crons on, `recovery_sweep_schedule` may not be `null` or `""` (no cron would ever fire);',
    "with `create_crons = false` it may, and then no EventBridge rule is created at all. With crons off, no cron",
    "fires and the API refuses to create or enable one (400): see docs/terraform-module.md, Crons.",
    "",
  ];
}

function alarms(): string[] {
  const rows = Object.values(ALARM_THRESHOLDS).map((spec) => [
    `\`${spec.variable}\``,
    cell(spec.description),
    String(spec.default),
  ]);
  return [
    "## Alarms",
    "",
    "With `create_alarms = true`, which requires a topic to notify (`create_alarm_topic = true` or",
    "`alarm_sns_topic_arn`: alarms without actions would notify nobody, so the plan refuses them): the HTTP API's",
    "5xx rate and p99 latency; errors, throttles and concurrency near the reserved limit of every function; the",
    "duration of the API function and the cleaner near their timeout (the worker and the stream function run to",
    "their deadline by design); the 5xx rate of the stream function's URL; with provisioned concurrency, invocations",
    "of the alias that spill over to on-demand environments; failed and",
    "timed-out graph runs of every function that runs graphs, the API, worker and stream functions (metric filters on",
    "its log group count the runtime's metric lines, so each deployment and function has its own metric,",
    "`MemoryTable/<function name>`; in the worker a leg that reaches its deadline hands over to a next one and",
    "counts as timed out); background-run jobs Lambda gave up on after its retries (messages sent to the worker's",
    "failure queue, whose runs the worker records as failed) and the age of the oldest message there (one the",
    "worker could not record); the cleaner's iterator age (records leave the table's stream after 24 hours, and",
    "their threads' items are then never removed); messages in the cleaner's on-failure queue; throttled requests",
    "on the table and its indexes. Every alarm is named `<name>-...`, evaluates 5-minute periods, treats missing",
    "data as fine, and notifies the topic on ALARM and on OK. Thresholds (`alarm_thresholds`):",
    "",
    ...renderTable(["Threshold", "Measures", "Default"], rows),
    "",
  ];
}

/** What a production deployment turns on beyond the defaults (the defaults are already secure). */
export const PRODUCTION_CHECKLIST = [
  "`create_alarms = true`, with `create_alarm_topic = true` (subscribe your on-call to `alarm_sns_topic_arn`) or your own `alarm_sns_topic_arn`; adjust `alarm_thresholds` to your traffic.",
  "`provisioned_concurrent_executions` at your steady concurrency, on the API function's alias (`publish`, on by default): users then do not wait for cold starts.",
  "Rollouts: a new image as a canary of the API function (`stable_version` = the version serving now, `canary_weight`), then promoted; or `image_uri_managed_externally = true` when your pipeline deploys the image (`aws lambda update-function-code --publish`, then `update-alias`): see docs/terraform-module.md, Rollout.",
  "`reserved_concurrent_executions` above your peak concurrency (and above the provisioned one), `worker_reserved_concurrent_executions` above your peak of background runs running at once, `cleaner_reserved_concurrent_executions` at least the table's stream shard count.",
  "`webhook_allowed_hosts` listing exactly the hosts your run webhooks call (none by default: every webhook is refused); `max_run_legs` times `worker_timeout` above your longest background run.",
  "Secrets in `secrets` as ARNs (with their customer-managed keys in `secrets_kms_key_arns`), never in `environment`; the tools' permissions in `graph_policy_statements` on exact resource ARNs.",
  "`cors_allow_origins` listing your app's origins only; your issuer (`jwt_issuer`, `jwt_audience`) or the created user pool, whose users an administrator creates.",
  "Streaming: `stream_url` (or `stream_domain_url`, with `stream_domain_name`) as your clients' `apiUrl`, `stream_timeout` above your longest streamed run, `stream_reserved_concurrent_executions` above your peak of open streams, and an image that contains `stream.handler`; or `create_stream_function = false` if no endpoint may bypass API Gateway.",
  "`deletion_protection` and `log_retention_in_days` left at their defaults (on, 365 days) unless your retention policy says longer.",
  "CI: `terraform plan` with `lookup_account_id = false` and `account_id`, and a scanner (checkov, trivy, KICS) expecting exactly the exceptions below.",
];

function productionChecklist(): string[] {
  return [
    "## Production checklist",
    "",
    "The defaults are secure, not complete: alarms and provisioned concurrency cost money and need your",
    "decisions, so they are off until you turn them on.",
    "",
    ...PRODUCTION_CHECKLIST.map((item) => `- ${item}`),
    "",
  ];
}

function securityDefaults(): string[] {
  const rows = Object.values(SCANNER_EXCEPTIONS).map((exception) => [
    exception.rules.map((rule) => `\`${rule}\``).join(", "),
    `\`${exception.resource}\``,
    cell(exception.what),
    cell(exception.why),
  ]);
  return [
    "## Security defaults",
    "",
    "Customer-managed KMS key with rotation; PITR, deletion protection and SSE with the key on the table; X-Ray",
    "active, reserved concurrency and JSON logs on the functions, their environment encrypted with the key; log",
    "groups with 365 days retention encrypted with the key; an HTTP API whose every route has the JWT authorizer,",
    "with access logs and throttling and no wildcard CORS origin; the stream function's URL verifying the same JWT",
    "in the function, with no wildcard CORS origin and no credentials; IAM limited to the DynamoDB item actions the",
    "code sends, on the table and each index by name, KMS only through the services that use it,",
    "`lambda:InvokeFunction` on the worker function only (for the API and stream functions and the worker's own",
    "next legs), no `sts:AssumeRole` unless",
    "`attach_tenant_role_assume_policy`; the worker's failures in a KMS-encrypted queue; every taggable resource",
    "tagged. Deliberately not met:",
    "",
    ...renderTable(["Rules", "Resource", "What", "Why"], rows),
    "",
    "The same exceptions ship in this folder as the files the scanners read, each rule id with its resource and",
    "reason: `.checkov.yaml` (`skip-check`; `checkov -d .` from here, or `--config-file`), `kics.config`",
    "(`exclude-queries`; read from the scanned path's root, or `--config`) and `.trivyignore` (`--ignorefile`). A",
    "test keeps them, this table and the module in step.",
    "",
  ];
}

export function renderReadme(document: ModuleDocument): string {
  const providers = document.terraform.required_providers ?? {};
  const requirementRows = [
    ["terraform", `\`${document.terraform.required_version ?? "any"}\``],
    ...Object.entries(providers).map(([name, { version }]) => [name, `\`${version}\``]),
  ];
  const providerRows = Object.entries(providers).map(([name, { source, version }]) => [
    name,
    `\`${source}\``,
    `\`${version}\``,
  ]);
  const resourceRows = [
    ...Object.entries(document.resources).flatMap(([type, blocks]) =>
      Object.keys(blocks).map((name) => [
        `[${type}.${name}](${registry("resources", type)})`,
        "resource",
      ]),
    ),
    ...Object.entries(document.data).flatMap(([type, blocks]) =>
      Object.keys(blocks).map((name) => [
        `[data.${type}.${name}](${registry("data-sources", type)})`,
        "data source",
      ]),
    ),
  ].sort(([a], [b]) => (a! < b! ? -1 : 1));
  const inputRows = Object.entries(document.variables).map(([name, block]) => {
    const required = !("default" in block);
    return [
      `\`${name}\``,
      cell(block.description ?? ""),
      `\`${block.type ?? "any"}\``,
      required ? "n/a" : code(block.default),
      required ? "yes" : "no",
    ];
  });
  const outputRows = Object.entries(document.outputs).map(([name, block]) => [
    `\`${name}\``,
    cell(block.description ?? ""),
  ]);
  return [
    "# Memory Table Terraform module",
    "",
    "<!-- Generated by `npm run synth` from modules/module-stack.ts: do not edit by hand. -->",
    "",
    "Memory Table on AWS: a KMS-encrypted DynamoDB table with TTL and point-in-time recovery, a least-privilege",
    "Lambda function from a digest-pinned container image behind an HTTP API with a JWT authorizer on every route,",
    "the background-run worker from the same image (invoked asynchronously, one leg of up to 15 minutes per",
    "invocation, its failures recorded through a KMS-encrypted queue), the stream function serving the same API with",
    "streamed Server-Sent Events from a Lambda function URL, the expired-thread cleaner on the table's",
    "stream, and optionally a tenant-scoped role, an ECR repository, a published alias with provisioned concurrency,",
    "and CloudWatch alarms.",
    "",
    `Version \`${MODULE_VERSION}\` (git tag \`${MODULE_TAG}\`, output \`module_version\`). What changed in each release, and`,
    "what to do when upgrading, is in [CHANGELOG.md](../../CHANGELOG.md).",
    "",
    ...example(MODULE_USAGE, "##"),
    "## Examples",
    "",
    ...README_EXAMPLES.flatMap((item) => example(item, "###")),
    ...productionChecklist(),
    ...environmentGuard(),
    ...backgroundRuns(),
    ...streaming(),
    ...customDomains(),
    ...vpc(),
    ...broughtKey(),
    ...alarms(),
    ...securityDefaults(),
    "## Requirements",
    "",
    ...renderTable(["Name", "Version"], requirementRows),
    "",
    "The module plans and is tested on provider 5.100.0, and its range names only that major version: see",
    "Streaming for what changes with 6.28.0.",
    "",
    "## Providers",
    "",
    ...renderTable(["Name", "Source", "Version"], providerRows),
    "",
    "## Resources",
    "",
    ...renderTable(["Name", "Type"], resourceRows),
    "",
    "## Inputs",
    "",
    ...renderTable(["Name", "Description", "Type", "Default", "Required"], inputRows),
    "",
    "## Outputs",
    "",
    ...renderTable(["Name", "Description"], outputRows),
    "",
  ].join("\n");
}
