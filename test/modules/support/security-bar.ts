import {
  DYNAMODB_AUTHORIZER_ACTIONS,
  DYNAMODB_CLEANER_ACTIONS,
  DYNAMODB_ITEM_ACTIONS,
  DYNAMODB_STREAM_ACTIONS,
} from "../../../src/table/iam-actions";
import { TABLE_DEFINITION } from "../../../src/table/definition";
import { ENVIRONMENT, IMAGE_HANDLERS } from "../../../src/runtime/environment";
import { ROUTES } from "../../../src/runtime/http/routes";
import { SECRET_VALUE_PATTERN, secretLikeNames } from "../../../modules/construct/rules";
import { SCANNER_EXCEPTIONS } from "../../../modules/construct/scanner-exceptions";
import { STREAM_HANDLER } from "../../../modules/construct/stream";
import { parseJsonencode } from "./hcl-expression";
import { onlyResource, ref, resourcesOf, Synthesized } from "./synthesized";

/**
 * The security bar of notes/terraform-module.md (the checkov / trivy / KICS rules that apply), asserted on a
 * synthesized stack: the construct used directly and the module stack must both pass it, failing exactly the
 * rules of SCANNER_EXCEPTIONS (each documented in the module README with its rule ids).
 */

interface Statement {
  Sid: string;
  Effect: string;
  Action: string | string[];
  Resource: string | string[];
  Principal?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

const actionsOf = (statement: Statement): string[] =>
  Array.isArray(statement.Action) ? statement.Action : [statement.Action];
const resourcesOfStatement = (statement: Statement): string[] =>
  Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];

export function policyStatements(policy: unknown): Statement[] {
  const document = parseJsonencode(policy as string) as { Statement: Statement[] };
  return document.Statement;
}

function bySid(statements: Statement[]): Record<string, Statement> {
  return Object.fromEntries(statements.map((statement) => [statement.Sid, statement]));
}

/**
 * Policies whose statements Terraform computes from the graph inputs (for-expressions over the given statements
 * and secrets): terraform test checks them on evaluated values; here, only which roles they attach to.
 */
export const COMPUTED_POLICIES = ["graph-statements", "graph-secrets"];

/** The resource types of the module that AWS lets carry tags (the provider schema's `tags` argument). */
export const TAGGABLE_TYPES = [
  "aws_apigatewayv2_api",
  "aws_apigatewayv2_domain_name",
  "aws_apigatewayv2_stage",
  "aws_cloudfront_distribution",
  "aws_cloudwatch_event_rule",
  "aws_cloudwatch_log_group",
  "aws_cloudwatch_metric_alarm",
  "aws_cognito_user_pool",
  "aws_dynamodb_table",
  "aws_ecr_repository",
  "aws_iam_role",
  "aws_kms_key",
  "aws_lambda_event_source_mapping",
  "aws_lambda_function",
  "aws_sns_topic",
  "aws_sqs_queue",
];

/** What each exception of SCANNER_EXCEPTIONS looks like: present, so the list cannot go stale. */
const EXCEPTION_CHECKS: Record<
  keyof typeof SCANNER_EXCEPTIONS,
  (synthesized: Synthesized) => boolean
> = {
  lambdaInVpc: (synthesized) =>
    resourcesOf(synthesized, "aws_lambda_function").every(([, fn]) => fn.vpc_config === undefined),
  lambdaCodeSigning: (synthesized) =>
    resourcesOf(synthesized, "aws_lambda_function").every(
      ([, fn]) => fn.code_signing_config_arn === undefined,
    ),
  lambdaDeadLetterQueue: (synthesized) =>
    resourcesOf(synthesized, "aws_lambda_function").every(
      ([, fn]) => fn.dead_letter_config === undefined,
    ),
  lambdaFunctionUrlAuth: (synthesized) =>
    resourcesOf(synthesized, "aws_lambda_function_url").some(
      ([, url]) => url.authorization_type === "NONE",
    ),
  lambdaPublicPermission: (synthesized) =>
    resourcesOf(synthesized, "aws_lambda_permission").some(
      ([, permission]) => permission.principal === "*",
    ),
  // The stream domain's distribution, when there is one (every: none without stream_domain_name).
  cloudfrontWaf: (synthesized) =>
    distributions(synthesized).every(
      (distribution) =>
        distribution.web_acl_id === undefined ||
        /^\$\{var\.[a-z_]+\}$/.test(String(distribution.web_acl_id)),
    ),
  cloudfrontAccessLogs: (synthesized) =>
    distributions(synthesized).every((distribution) => distribution.logging_config === undefined),
  cloudfrontGeoRestriction: (synthesized) =>
    distributions(synthesized).every(
      (distribution) =>
        (distribution.restrictions as { geo_restriction: { restriction_type: string } })
          .geo_restriction.restriction_type === "none",
    ),
  cloudfrontDefaultRootObject: (synthesized) =>
    distributions(synthesized).every(
      (distribution) => distribution.default_root_object === undefined,
    ),
  cloudfrontOriginFailover: (synthesized) =>
    distributions(synthesized).every((distribution) => distribution.origin_group === undefined),
  cloudfrontResponseHeadersPolicy: (synthesized) =>
    distributions(synthesized).every(
      (distribution) =>
        (distribution.default_cache_behavior as Record<string, unknown>)
          .response_headers_policy_id === undefined,
    ),
};

function distributions(synthesized: Synthesized): Record<string, unknown>[] {
  return resourcesOf(synthesized, "aws_cloudfront_distribution").map(([, config]) => config);
}

/**
 * `<name>` of a reference to a resource, plain (`${<type>.<name>.<attribute>}`) or of one with count
 * (`${one(<type>.<name>[*].<attribute>)}`).
 */
function nameIn(reference: unknown, type: string): string {
  const match = new RegExp(`${type}\\.([A-Za-z0-9_-]+)`).exec(String(reference));
  if (!match) throw new Error(`Expected a reference to a ${type}, got ${String(reference)}`);
  return match[1]!;
}

/** A reference to an attribute, plain, or through `one(...)` when the resource has count. */
function refTo(synthesized: Synthesized, type: string, name: string, attribute: string): string {
  const counted = synthesized.resource[type]?.[name]?.count !== undefined;
  return counted ? `\${one(${type}.${name}[*].${attribute})}` : ref(type, name, attribute);
}

/** `<name>` of a plain reference `${<type>.<name>.<attribute>}`. */
function referencedName(reference: string, type: string): string {
  const match = new RegExp(`^\\$\\{${type}\\.([^.]+)\\.[a-z_]+\\}$`).exec(reference);
  if (!match) throw new Error(`Expected a reference to a ${type}, got ${reference}`);
  return match[1]!;
}

/**
 * The log groups a key policy names: a list, or (the HCL module, whose stream function is a toggle) the locals
 * `concat(local.<always>, var.create_stream_function ? [local.<stream>] : [])`, read with the toggle on, as the
 * synthesized resources are listed.
 */
function logGroupArnsIn(value: unknown, synthesized: Synthesized): string[] {
  if (Array.isArray(value)) return value as string[];
  const match =
    /^\$\{concat\(local\.([A-Za-z0-9_]+), var\.create_stream_function \? \[local\.([A-Za-z0-9_]+)\] : \[\](?:, var\.enable_api_keys \? \[local\.([A-Za-z0-9_]+)\] : \[\])?\)\}$/.exec(
      String(value),
    );
  if (!match) throw new Error(`Unexpected log group ARNs in the key policy: ${String(value)}`);
  const locals = (synthesized as unknown as { locals: Record<string, unknown> }).locals;
  return [
    ...(locals[match[1]!] as string[]),
    locals[match[2]!] as string,
    ...(match[3] === undefined ? [] : [locals[match[3]] as string]),
  ];
}

/**
 * How a function is invoked: through its alias when versions are published (an `aws_lambda_alias` on it), its
 * $LATEST otherwise. `targets` are the values an invoker's function name, ARN or qualifier may take.
 */
function releaseOf(synthesized: Synthesized, functionName: string) {
  // An alias that is never created (count 0, as with the stream function off) is none.
  const alias = resourcesOf(synthesized, "aws_lambda_alias").find(
    ([, config]) =>
      config.count !== 0 &&
      String(config.function_name).includes(`aws_lambda_function.${functionName}`),
  );
  const aliasRef = (attribute: string) =>
    alias === undefined ? undefined : refTo(synthesized, "aws_lambda_alias", alias[0], attribute);
  return {
    alias,
    /** A qualifier: none without an alias, the alias's name with one (maybe behind the publish switch). */
    qualifiers: [
      undefined,
      aliasRef("name"),
      ...[
        "var.publish",
        "(var.create_stream_function && var.publish)",
        "(var.enable_api_keys && var.publish)",
      ].map((published) => `\${${published} ? ${aliasRef("name")?.slice(2, -1)} : null}`),
    ],
    /** What an event source mapping or a schedule invokes: the function's ARN, or its alias's. */
    arns: [
      refTo(synthesized, "aws_lambda_function", functionName, "arn"),
      aliasRef("arn"),
      `\${var.publish ? ${aliasRef("arn")?.slice(2, -1)} : ${refTo(synthesized, "aws_lambda_function", functionName, "arn").slice(2, -1)}}`,
    ],
  };
}

export function expectSecurityBar(synthesized: Synthesized): void {
  // DynamoDB: PITR, SSE with the customer-managed key, deletion protection, the shared definition.
  const [tableName, table] = onlyResource(synthesized, "aws_dynamodb_table");
  expect(table).toMatchObject({
    billing_mode: "PAY_PER_REQUEST",
    hash_key: TABLE_DEFINITION.partitionKey,
    range_key: TABLE_DEFINITION.sortKey,
    point_in_time_recovery: { enabled: true },
    server_side_encryption: { enabled: true },
    ttl: { attribute_name: TABLE_DEFINITION.ttlAttribute, enabled: true },
    stream_enabled: true,
    stream_view_type: TABLE_DEFINITION.streamViewType,
  });
  expect(table.deletion_protection_enabled).toBeDefined();
  expect(table.deletion_protection_enabled).not.toBe(false);
  const keyArn = (table.server_side_encryption as { kms_key_arn: string }).kms_key_arn;
  expect(keyArn).toMatch(/aws_kms_key\./);
  // The HCL module reads the table through locals (created, or an existing one: create_table).
  const tableAttribute = (attribute: string) => {
    const locals = (synthesized as unknown as { locals?: Record<string, unknown> }).locals ?? {};
    const local = Object.entries(locals).find(([, value]) =>
      String(value).includes(`one(aws_dynamodb_table.${tableName}[*].${attribute})`),
    );
    return local === undefined
      ? ref("aws_dynamodb_table", tableName, attribute)
      : `\${local.${local[0]}}`;
  };
  const tableArn = tableAttribute("arn");
  const streamArn = tableAttribute("stream_arn");
  const indexArns = TABLE_DEFINITION.globalSecondaryIndexes.map(
    (index) => `${tableArn}/index/${index.name}`,
  );

  // KMS: rotation, no `*` principal, policies written with jsonencode; the module's key serves CloudWatch Logs
  // for this module's log groups only.
  for (const [, someKey] of resourcesOf(synthesized, "aws_kms_key")) {
    expect(someKey.enable_key_rotation).toBe(true);
    expect(someKey.policy).toMatch(/^\$\{jsonencode\(/);
    for (const statement of policyStatements(someKey.policy)) {
      expect(JSON.stringify(statement.Principal)).not.toMatch(/"\*"/);
    }
  }
  const keyName = /aws_kms_key\.([A-Za-z0-9_]+)/.exec(keyArn)![1]!;
  const key = synthesized.resource.aws_kms_key![keyName]!;
  const keyStatements = bySid(policyStatements(key.policy));
  const logsStatement = keyStatements.CloudWatchLogsForThisModule!;
  expect(logsStatement.Principal).toEqual({
    Service: expect.stringMatching(/^logs\..+\.amazonaws\.com$/),
  });
  const logArns = logGroupArnsIn(
    logsStatement.Condition!.ArnEquals!["kms:EncryptionContext:aws:logs:arn"],
    synthesized,
  );
  // Log groups: retention and the key.
  const logGroups = resourcesOf(synthesized, "aws_cloudwatch_log_group");
  // The API function's, the worker's, the stream function's, the authorizer's, the cleaner's, the access logs'.
  expect(logGroups).toHaveLength(6);
  // The key serves exactly the groups the module creates: same names, in this partition, region and account.
  const [regionSource] = Object.keys(synthesized.data?.aws_region ?? {});
  const [partitionSource] = Object.keys(synthesized.data?.aws_partition ?? {});
  // The region by `id`: the same on provider 5.x and 6.x (6.0 deprecates `name`).
  const region = `\${data.aws_region.${regionSource}.id}`;
  const arnPrefix = `arn:\${data.aws_partition.${partitionSource}.partition}:logs:${region}:`;
  const accountOf = (arn: string) => arn.slice(arnPrefix.length, arn.indexOf(":log-group:"));
  const account = accountOf(logArns[0]!);
  expect(account).toMatch(/^(\d{12}|\$\{.+\})$/);
  // (A group turned off in TypeScript, `count: 0`, is not created, and not named.)
  expect([...logArns].sort()).toEqual(
    logGroups
      .filter(([, group]) => group.count !== 0)
      .map(([, group]) => `${arnPrefix}${account}:log-group:${String(group.name)}`)
      .sort(),
  );
  for (const [, group] of logGroups) {
    expect(group.retention_in_days).toBeDefined();
    expect(group.kms_key_id).toBe(keyArn);
  }
  const logGroupNamed = (pattern: RegExp) =>
    onlyResource(synthesized, "aws_cloudwatch_log_group", (group) =>
      pattern.test(String(group.name)),
    )[0];

  // SQS (the cleaner's on-failure destination, the worker's failure queue): encrypted with the key, kept 14 days.
  const queues = resourcesOf(synthesized, "aws_sqs_queue");
  expect(queues).toHaveLength(2);
  for (const [, someQueue] of queues) {
    expect(someQueue).toMatchObject({
      kms_master_key_id: keyArn,
      message_retention_seconds: 1209600,
    });
  }

  // Lambda: image by digest, X-Ray Active, reserved concurrency, key for the environment, JSON logs, no secrets;
  // exactly the documented exceptions (no VPC, no code signing, no dead-letter queue: the API function and the
  // cleaner are invoked synchronously, the worker has an on-failure destination instead).
  const functions = resourcesOf(synthesized, "aws_lambda_function");
  expect(functions).toHaveLength(5);
  for (const [exception, holds] of Object.entries(EXCEPTION_CHECKS)) {
    expect({ exception, holds: holds(synthesized) }).toEqual({ exception, holds: true });
  }
  for (const [, fn] of functions) {
    expect(fn).toMatchObject({
      package_type: "Image",
      tracing_config: { mode: "Active" },
      kms_key_arn: keyArn,
      logging_config: { log_format: "JSON", system_log_level: "INFO" },
    });
    expect(fn.reserved_concurrent_executions).toBeDefined();
    expect(fn.environment).toBeDefined();
    expectNoPlaintextSecrets((fn.environment as { variables: unknown }).variables);
  }
  const commandOf = (fn: Record<string, unknown>) =>
    (fn.image_config as { command: string[] }).command;
  const runs = (handler: string) => (fn: Record<string, unknown>) =>
    JSON.stringify(commandOf(fn)).includes(handler);
  const [apiFunctionName, apiFunction] = onlyResource(
    synthesized,
    "aws_lambda_function",
    (fn) =>
      !runs(IMAGE_HANDLERS.cleaner)(fn) &&
      !runs(IMAGE_HANDLERS.worker)(fn) &&
      !runs(STREAM_HANDLER)(fn) &&
      !runs(IMAGE_HANDLERS.authorizer)(fn),
  );
  const [authorizerFunctionName, authorizerFunction] = onlyResource(
    synthesized,
    "aws_lambda_function",
    runs(IMAGE_HANDLERS.authorizer),
  );
  expect(commandOf(authorizerFunction)).toEqual([IMAGE_HANDLERS.authorizer]);
  expect(authorizerFunction.image_uri).toBe(apiFunction.image_uri);
  const [streamName, stream] = onlyResource(
    synthesized,
    "aws_lambda_function",
    runs(STREAM_HANDLER),
  );
  const [cleanerName, cleaner] = onlyResource(
    synthesized,
    "aws_lambda_function",
    runs(IMAGE_HANDLERS.cleaner),
  );
  const [workerName, worker] = onlyResource(
    synthesized,
    "aws_lambda_function",
    runs(IMAGE_HANDLERS.worker),
  );
  expect(commandOf(cleaner)).toEqual([IMAGE_HANDLERS.cleaner]);
  expect(commandOf(worker)).toEqual([IMAGE_HANDLERS.worker]);
  expect(commandOf(stream)).toEqual([STREAM_HANDLER]);
  expect(cleaner.image_uri).toBe(apiFunction.image_uri);
  expect(worker.image_uri).toBe(apiFunction.image_uri);
  expect(stream.image_uri).toBe(apiFunction.image_uri);
  const variablesOf = (fn: Record<string, unknown>) =>
    JSON.stringify((fn.environment as { variables: unknown }).variables);
  const runtimeNames = [
    ENVIRONMENT.tableName,
    ENVIRONMENT.logLevel,
    ENVIRONMENT.deadlineMarginMs,
    ENVIRONMENT.maxRunLegs,
    ENVIRONMENT.webhookAllowedHosts,
    ENVIRONMENT.workerFunctionName,
  ];
  for (const name of [...runtimeNames, ENVIRONMENT.tenantClaim]) {
    expect(variablesOf(apiFunction)).toContain(name);
  }
  for (const name of runtimeNames) expect(variablesOf(worker)).toContain(name);
  // The stream function: the API function's environment, and who may call (it verifies the JWT itself).
  for (const name of [
    ...runtimeNames,
    ENVIRONMENT.tenantClaim,
    ENVIRONMENT.jwtIssuer,
    ENVIRONMENT.jwtAudience,
  ]) {
    expect(variablesOf(stream)).toContain(name);
  }
  for (const name of [ENVIRONMENT.jwtIssuer, ENVIRONMENT.jwtAudience]) {
    expect(variablesOf(apiFunction)).not.toContain(name);
    expect(variablesOf(worker)).not.toContain(name);
  }
  for (const fn of [apiFunction, worker, stream]) {
    expect(variablesOf(fn)).toContain(tableAttribute("name").slice(2, -1));
  }
  // The API and stream functions name the worker (or its alias) and are created once it can be invoked.
  const workerRelease = releaseOf(synthesized, workerName);
  for (const fn of [apiFunction, stream]) {
    if (workerRelease.alias === undefined) {
      expect(variablesOf(fn)).toContain(`aws_lambda_function.${workerName}.function_name`);
    } else {
      expect(fn.depends_on).toContain(`aws_lambda_alias.${workerRelease.alias[0]}`);
    }
  }
  // The authorizer: the table (API key records), who may call with a JWT, and nothing of the graphs.
  expect(
    Object.keys((authorizerFunction.environment as { variables: object }).variables).sort(),
  ).toEqual(
    [
      ENVIRONMENT.tableName,
      ENVIRONMENT.logLevel,
      ENVIRONMENT.tenantClaim,
      ENVIRONMENT.jwtIssuer,
      ENVIRONMENT.jwtAudience,
      ENVIRONMENT.apiKeyCacheSeconds,
    ].sort(),
  );
  // The cleaner runs no graph and hands nothing over.
  expect(variablesOf(cleaner)).not.toContain(ENVIRONMENT.workerFunctionName);

  // The stream's event source mapping: failures to the cleaner's queue.
  const [, mapping] = onlyResource(
    synthesized,
    "aws_lambda_event_source_mapping",
    (config) => config.event_source_arn === streamArn,
  );
  const queueArn = String(
    (mapping.destination_config as { on_failure: { destination_arn: string } }).on_failure
      .destination_arn,
  );
  const queueName = referencedName(queueArn, "aws_sqs_queue");
  expect(queueArn).toBe(ref("aws_sqs_queue", queueName, "arn"));

  // The worker, invoked asynchronously: Lambda retries, then sends the job to the worker's failure queue, which
  // feeds the worker (reporting the records it could not handle); no other function has either.
  const [, invokeConfig] = onlyResource(synthesized, "aws_lambda_function_event_invoke_config");
  expect(invokeConfig.function_name).toBe(ref("aws_lambda_function", workerName, "function_name"));
  expect(workerRelease.qualifiers).toContain(invokeConfig.qualifier);
  expect(invokeConfig.maximum_retry_attempts).toBeDefined();
  expect(invokeConfig.maximum_event_age_in_seconds).toBeDefined();
  const workerQueueArn = String(
    (invokeConfig.destination_config as { on_failure: { destination: string } }).on_failure
      .destination,
  );
  const workerQueueName = referencedName(workerQueueArn, "aws_sqs_queue");
  expect(workerQueueArn).toBe(ref("aws_sqs_queue", workerQueueName, "arn"));
  expect(workerQueueName).not.toBe(queueName);
  const [, workerTrigger] = onlyResource(
    synthesized,
    "aws_lambda_event_source_mapping",
    (config) => config.event_source_arn === workerQueueArn,
  );
  expect(workerRelease.arns).toContain(workerTrigger.function_name);
  expect(workerTrigger).toMatchObject({ function_response_types: ["ReportBatchItemFailures"] });
  expect(workerTrigger.batch_size).toBeLessThanOrEqual(10);
  expect(resourcesOf(synthesized, "aws_lambda_event_source_mapping")).toHaveLength(2);
  // The queue feeding the worker hides a record for longer than the worker may take on it.
  expect(
    String(synthesized.resource.aws_sqs_queue![workerQueueName]!.visibility_timeout_seconds),
  ).toMatch(/^(\d+|\$\{\(var\.worker_timeout \* 6\)\})$/);
  // The worker's own ARN, as the roles name it: unqualified, in this partition, region and account.
  // With an alias, that ARN with the alias as qualifier (literal, or behind the publish switch).
  const unqualifiedWorkerArn = `arn:\${data.aws_partition.${partitionSource}.partition}:lambda:${region}:${account}:function:${String(worker.function_name)}`;
  const workerArn =
    workerRelease.alias === undefined
      ? unqualifiedWorkerArn
      : expect.stringMatching(
          new RegExp(
            `^${escapeRegExp(unqualifiedWorkerArn)}(:live|\\$\\{var\\.publish \\? format\\(":%s", var\\.alias_name\\) : ""\\})$`,
          ),
        );

  // IAM: trust Lambda only; exactly the actions of each statement; no wildcards; X-Ray alone; no Scan.
  const referenced = nameIn;
  const roles = {
    api: {
      role: referenced(apiFunction.role, "aws_iam_role"),
      logGroup: referenced(
        (apiFunction.logging_config as { log_group: string }).log_group,
        "aws_cloudwatch_log_group",
      ),
    },
    cleaner: {
      role: referenced(cleaner.role, "aws_iam_role"),
      logGroup: referenced(
        (cleaner.logging_config as { log_group: string }).log_group,
        "aws_cloudwatch_log_group",
      ),
    },
    worker: {
      role: referenced(worker.role, "aws_iam_role"),
      logGroup: referenced(
        (worker.logging_config as { log_group: string }).log_group,
        "aws_cloudwatch_log_group",
      ),
    },
    stream: {
      role: referenced(stream.role, "aws_iam_role"),
      logGroup: referenced(
        (stream.logging_config as { log_group: string }).log_group,
        "aws_cloudwatch_log_group",
      ),
    },
    authorizer: {
      role: referenced(authorizerFunction.role, "aws_iam_role"),
      logGroup: referenced(
        (authorizerFunction.logging_config as { log_group: string }).log_group,
        "aws_cloudwatch_log_group",
      ),
    },
  };
  const roleId = (role: string) => refTo(synthesized, "aws_iam_role", role, "id");
  for (const [kind, { role, logGroup }] of Object.entries(roles)) {
    const roleConfig = synthesized.resource.aws_iam_role![role]!;
    expect(policyStatements(roleConfig.assume_role_policy)).toEqual([
      {
        Sid: "Assume",
        Effect: "Allow",
        Principal: { Service: "lambda.amazonaws.com" },
        Action: ["sts:AssumeRole"],
      },
    ]);
    const [, policy] = onlyResource(
      synthesized,
      "aws_iam_role_policy",
      (config) => config.role === roleId(role) && config.name === "memory-table",
    );
    const statements = bySid(policyStatements(policy.policy));
    const expected: Record<string, [string[], string[] | string]> = {
      // The functions that run graphs query the indexes (each by name) too; the cleaner only the base table.
      DynamoDBItems:
        kind === "cleaner"
          ? [[...DYNAMODB_CLEANER_ACTIONS], [tableArn]]
          : kind === "authorizer"
            ? [[...DYNAMODB_AUTHORIZER_ACTIONS], [tableArn]]
            : [[...DYNAMODB_ITEM_ACTIONS], [tableArn, ...indexArns]],
      KmsThroughServices: [["kms:Decrypt", "kms:GenerateDataKey"], [keyArn]],
      OwnLogGroup: [
        ["logs:CreateLogStream", "logs:PutLogEvents"],
        [`${refTo(synthesized, "aws_cloudwatch_log_group", logGroup, "arn")}:*`],
      ],
      XRay: [["xray:PutTelemetryRecords", "xray:PutTraceSegments"], "*"],
    };
    if (kind === "cleaner") {
      expected.DynamoDBStream = [[...DYNAMODB_STREAM_ACTIONS], [streamArn]];
      // The mapping sends the batches it gives up on with the cleaner's role; the API function sends nothing.
      expected.FailureDestination = [["sqs:SendMessage"], [queueArn]];
    } else if (kind === "authorizer") {
      // API key lookup items only: no tenant's partition, no listing, no index.
      expect(statements.DynamoDBItems!.Condition).toEqual({
        "ForAllValues:StringLike": { "dynamodb:LeadingKeys": ["#api-key#*"] },
        Null: { "dynamodb:LeadingKeys": "false" },
      });
    } else {
      // The API function hands runs to the worker, the worker its runs' next legs to itself: that one function.
      expected.InvokeWorker = [["lambda:InvokeFunction"], [workerArn]];
    }
    if (kind === "worker") {
      // Lambda sends the jobs it gives up on with the worker's role; the mapping reads them back with it.
      expected.FailureDestination = [["sqs:SendMessage"], [workerQueueArn]];
      expected.EventSourceQueue = [
        ["sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"],
        [workerQueueArn],
      ];
    }
    expect(Object.keys(statements).sort()).toEqual(Object.keys(expected).sort());
    for (const [sid, [actions, resources]] of Object.entries(expected)) {
      expect({
        sid,
        actions: statements[sid]!.Action,
        resources: statements[sid]!.Resource,
      }).toEqual({
        sid,
        actions,
        resources,
      });
    }
    // Synchronously invoked functions send to no queue.
    const services =
      kind === "api" || kind === "stream" || kind === "authorizer"
        ? ["dynamodb", "lambda"]
        : ["dynamodb", "sqs", "lambda"];
    expect(statements.KmsThroughServices!.Condition).toEqual({
      StringEquals: {
        "kms:ViaService": services.map((service) => `${service}.${region}.amazonaws.com`),
      },
    });
    if (kind === "cleaner") {
      // The graph extras go to the functions that run graphs only.
      for (const [, extra] of resourcesOf(synthesized, "aws_iam_role_policy")) {
        if (COMPUTED_POLICIES.includes(String(extra.name))) {
          expect(extra.role).not.toBe(roleId(role));
        }
      }
    }
  }
  expect(new Set(Object.values(roles).map(({ role }) => role)).size).toBe(5);
  expect(new Set(Object.values(roles).map(({ logGroup }) => logGroup)).size).toBe(5);
  expect(cleanerName).not.toBe(apiFunctionName);

  for (const [, policy] of resourcesOf(synthesized, "aws_iam_role_policy")) {
    if (COMPUTED_POLICIES.includes(String(policy.name))) continue;
    for (const statement of policyStatements(policy.policy)) {
      for (const action of actionsOf(statement)) {
        expect(action).not.toMatch(/(^\*$|:\*$)/);
        expect(action).not.toBe("dynamodb:Scan");
        expect(action).not.toBe("logs:CreateLogGroup");
        if (action.startsWith("xray:")) expect(statement.Sid).toBe("XRay");
        // Invoking a function: only the worker, only from the API function's role and the worker's own.
        if (action.startsWith("lambda:")) {
          expect({ action, sid: statement.Sid, resources: statement.Resource }).toEqual({
            action: "lambda:InvokeFunction",
            sid: "InvokeWorker",
            resources: [workerArn],
          });
          expect([roles.api.role, roles.worker.role, roles.stream.role].map(roleId)).toContain(
            policy.role,
          );
        }
        // A queue: only the cleaner's, by the cleaner's role, and the worker's, by the worker's role.
        if (action.startsWith("sqs:")) {
          const owner = policy.role === roleId(roles.cleaner.role) ? queueArn : workerQueueArn;
          expect(policy.role).not.toBe(roleId(roles.api.role));
          expect(policy.role).not.toBe(roleId(roles.stream.role));
          expect(statement.Resource).toEqual([owner]);
        }
        // A function may assume the tenant role only where it is asked for (no code path of ours does).
        if (action === "sts:AssumeRole") {
          expect(String(policy.count)).toMatch(/attach_tenant_role_assume_policy|^0$/);
        }
      }
      // `*` only for actions that support no resource ARN: X-Ray's, and the two EC2 reads of a VPC attachment.
      if (resourcesOfStatement(statement).includes("*")) {
        expect(["XRay", "VpcDescribe"]).toContain(statement.Sid);
        if (statement.Sid === "VpcDescribe") {
          expect(actionsOf(statement)).toEqual([
            "ec2:DescribeNetworkInterfaces",
            "ec2:DescribeSubnets",
          ]);
        }
      }
      // A VPC's network interfaces: created in the given subnets and groups, managed in this account only.
      if (actionsOf(statement).some((action) => action.startsWith("ec2:"))) {
        expect(policy.name).toBe("memory-table-vpc");
        expect(String(policy.count ?? "")).toMatch(/vpc_subnet_ids|^1$/);
      }
      for (const resource of resourcesOfStatement(statement)) {
        expect(resource).not.toMatch(/\/index\/\*$/);
      }
    }
  }

  // Lambda permission: API Gateway, invoke only, from this API only.
  const [apiName] = onlyResource(synthesized, "aws_apigatewayv2_api");
  const [, permission] = onlyResource(
    synthesized,
    "aws_lambda_permission",
    (config) =>
      config.principal === "apigateway.amazonaws.com" &&
      !String(config.function_name).includes(authorizerFunctionName),
  );
  // The authorizer: invoked by this API's authorizers only, with the authorizer's count.
  const [, authorizerPermission] = onlyResource(
    synthesized,
    "aws_lambda_permission",
    (config) =>
      config.principal === "apigateway.amazonaws.com" &&
      String(config.function_name).includes(authorizerFunctionName),
  );
  expect(authorizerPermission).toMatchObject({
    action: "lambda:InvokeFunction",
    function_name: refTo(
      synthesized,
      "aws_lambda_function",
      authorizerFunctionName,
      "function_name",
    ),
    source_arn: `${ref("aws_apigatewayv2_api", apiName, "execution_arn")}/authorizers/*`,
    count: authorizerFunction.count,
  });
  // Released as every function: with an alias, API Gateway invokes the alias (permission and authorizer_uri).
  const authorizerRelease = releaseOf(synthesized, authorizerFunctionName);
  expect(authorizerRelease.qualifiers).toContain(authorizerPermission.qualifier);
  if (authorizerRelease.alias !== undefined) expect(authorizerPermission.qualifier).toBeDefined();
  const authorizerInvokeArn = refTo(
    synthesized,
    "aws_lambda_function",
    authorizerFunctionName,
    "invoke_arn",
  );
  const authorizerAliasInvokeArn =
    authorizerRelease.alias === undefined
      ? undefined
      : refTo(synthesized, "aws_lambda_alias", authorizerRelease.alias[0], "invoke_arn");
  const authorizerUris =
    authorizerAliasInvokeArn === undefined
      ? [authorizerInvokeArn]
      : [
          authorizerAliasInvokeArn,
          `\${(var.enable_api_keys && var.publish) ? ${authorizerAliasInvokeArn.slice(2, -1)} : ${authorizerInvokeArn.slice(2, -1)}}`,
        ];
  expect(permission).toMatchObject({
    action: "lambda:InvokeFunction",
    principal: "apigateway.amazonaws.com",
    function_name: ref("aws_lambda_function", apiFunctionName, "function_name"),
    source_arn: `${ref("aws_apigatewayv2_api", apiName, "execution_arn")}/*/*`,
  });
  // EventBridge: the recovery sweep's rule only (when scheduled), invoking the worker only, with the rule's count.
  const rules = resourcesOf(synthesized, "aws_cloudwatch_event_rule");
  const schedulePermissions = resourcesOf(synthesized, "aws_lambda_permission")
    .filter(([, config]) => config.principal === "events.amazonaws.com")
    .map(([, config]) => config);
  expect(schedulePermissions).toEqual(
    rules.map(([ruleName, rule]) =>
      expect.objectContaining({
        action: "lambda:InvokeFunction",
        function_name: refTo(synthesized, "aws_lambda_function", workerName, "function_name"),
        source_arn: refTo(synthesized, "aws_cloudwatch_event_rule", ruleName, "arn"),
        count: rule.count,
      }),
    ),
  );
  for (const config of schedulePermissions)
    expect(workerRelease.qualifiers).toContain(config.qualifier);
  // No other service or account may invoke a function.
  for (const [, config] of resourcesOf(synthesized, "aws_lambda_permission")) {
    expect(["*", "apigateway.amazonaws.com", "events.amazonaws.com"]).toContain(config.principal);
  }

  // API Gateway: one JWT-authorized route per handler route, access logs, throttling, no wildcard CORS.
  // With API keys, a Lambda REQUEST authorizer (payload 2.0, simple responses) instead, uncached: either
  // header may carry the credential, and a REQUEST authorizer's identity sources must all be present.
  const [authorizerName, authorizer] = onlyResource(
    synthesized,
    "aws_apigatewayv2_authorizer",
    (config) => config.authorizer_type === "JWT",
  );
  expect(authorizer.authorizer_type).toBe("JWT");
  const [lambdaAuthorizerName, lambdaAuthorizer] = onlyResource(
    synthesized,
    "aws_apigatewayv2_authorizer",
    (config) => config.authorizer_type === "REQUEST",
  );
  expect(lambdaAuthorizer).toMatchObject({
    authorizer_payload_format_version: "2.0",
    enable_simple_responses: true,
    authorizer_result_ttl_in_seconds: 0,
    count: authorizerFunction.count,
  });
  expect(authorizerUris).toContain(lambdaAuthorizer.authorizer_uri);
  expect(lambdaAuthorizer.identity_sources).toBeUndefined();
  const jwtId = ref("aws_apigatewayv2_authorizer", authorizerName, "id");
  const lambdaId = refTo(synthesized, "aws_apigatewayv2_authorizer", lambdaAuthorizerName, "id");
  const expectedAuthorization =
    lambdaAuthorizer.count === 0
      ? { authorization_type: "JWT", authorizer_id: jwtId }
      : lambdaAuthorizer.count === 1
        ? { authorization_type: "CUSTOM", authorizer_id: lambdaId }
        : {
            authorization_type: '${var.enable_api_keys ? "CUSTOM" : "JWT"}',
            authorizer_id: `\${var.enable_api_keys ? ${lambdaId.slice(2, -1)} : ${jwtId.slice(2, -1)}}`,
          };
  const routes = resourcesOf(synthesized, "aws_apigatewayv2_route").map(([, route]) => route);
  expect(routes.map((route) => route.route_key).sort()).toEqual(
    ROUTES.map((route) => `${route.method} ${route.path}`).sort(),
  );
  for (const route of routes) {
    expect(route).toMatchObject(expectedAuthorization);
  }
  const [, stage] = onlyResource(synthesized, "aws_apigatewayv2_stage");
  expect(stage.access_log_settings).toMatchObject({
    destination_arn: ref("aws_cloudwatch_log_group", logGroupNamed(/apigateway/), "arn"),
  });
  expect(stage.default_route_settings).toMatchObject({
    throttling_burst_limit: expect.anything(),
    throttling_rate_limit: expect.anything(),
  });
  expect(JSON.stringify(synthesized.resource.aws_apigatewayv2_api)).not.toMatch(
    /"allow_origins":\s*\[[^\]]*"\*"/,
  );

  // The stream function's URL: RESPONSE_STREAM, auth type NONE (the function verifies the JWT: a documented
  // exception), and public permissions on that function only, exactly the two a URL of auth type NONE needs.
  const streamFunctionName = refTo(synthesized, "aws_lambda_function", streamName, "function_name");
  const [urlName, url] = onlyResource(synthesized, "aws_lambda_function_url");
  expect(url).toMatchObject({
    function_name: streamFunctionName,
    authorization_type: "NONE",
    invoke_mode: "RESPONSE_STREAM",
  });
  const streamRelease = releaseOf(synthesized, streamName);
  expect(streamRelease.qualifiers).toContain(url.qualifier);
  expect(JSON.stringify(url)).not.toMatch(/"allow_origins":\s*\[[^\]]*"\*"/);
  expect(JSON.stringify(url)).not.toMatch(/"allow_credentials":\s*true/);
  // No statement admits a direct Invoke from any account: every permission to `*` is the URL's, conditioned on
  // auth type NONE, and Lambda's second statement (lambda:InvokeFunction) is conditioned on the function URL.
  const publicPermissions = resourcesOf(synthesized, "aws_lambda_permission")
    .filter(([, config]) => config.principal === "*")
    .map(([, config]) => config);
  expect(publicPermissions).toEqual([
    expect.objectContaining({
      action: "lambda:InvokeFunctionUrl",
      function_url_auth_type: "NONE",
      function_name: streamFunctionName,
      count: url.count,
      depends_on: [`aws_lambda_function_url.${urlName}`],
    }),
  ]);
  const [, invokeViaUrl] = onlyResource(synthesized, "aws_cloudcontrolapi_resource");
  expect(invokeViaUrl).toMatchObject({
    type_name: "AWS::Lambda::Permission",
  });
  // On the stream function, or its alias (`<name>:<alias>`, the URL's qualifier).
  const desiredState =
    /^\$\{jsonencode\(\{"FunctionName" = (.*), "Action" = "lambda:InvokeFunction", "Principal" = "\*", "InvokedViaFunctionUrl" = true\}\)\}$/.exec(
      String(invokeViaUrl.desired_state),
    );
  expect(desiredState?.[1]).toEqual(
    streamRelease.alias === undefined
      ? streamFunctionName.slice(2, -1)
      : expect.stringContaining(`format("%s:%s", ${streamFunctionName.slice(2, -1)}, `),
  );
  expect(JSON.parse(String(invokeViaUrl.schema))).toMatchObject({
    typeName: "AWS::Lambda::Permission",
    properties: { InvokedViaFunctionUrl: { type: "boolean" } },
  });
  // The function, its role, its policy, its log group and its URL exist together.
  for (const [type, name] of [
    ["aws_lambda_function", streamName],
    ["aws_iam_role", roles.stream.role],
    ["aws_cloudwatch_log_group", roles.stream.logGroup],
  ] as const) {
    expect({ type, count: synthesized.resource[type]![name]!.count }).toEqual({
      type,
      count: url.count,
    });
  }

  // ECR (when created): immutable tags, scan on push, KMS.
  for (const [, repository] of resourcesOf(synthesized, "aws_ecr_repository")) {
    expect(repository).toMatchObject({
      image_tag_mutability: "IMMUTABLE",
      image_scanning_configuration: { scan_on_push: true },
      encryption_configuration: [{ encryption_type: "KMS", kms_key: keyArn }],
    });
  }

  // SNS (the alarm topic, when created): encrypted with a key of its own.
  for (const [, topic] of resourcesOf(synthesized, "aws_sns_topic")) {
    expect(topic.kms_master_key_id).toMatch(/aws_kms_key\./);
  }

  // Every taggable resource is tagged.
  // A custom domain (if any): regional, TLS 1.2 at least.
  for (const [, domain] of resourcesOf(synthesized, "aws_apigatewayv2_domain_name")) {
    expect(domain.domain_name_configuration).toMatchObject({
      endpoint_type: "REGIONAL",
      security_policy: "TLS_1_2",
    });
  }

  // The stream URL's custom domain (if any): a CloudFront distribution whose one origin is that URL, https only
  // and TLS 1.2 on both sides, nothing cached or compressed (Server-Sent Events pass unbuffered), every viewer
  // header but Host forwarded (the managed policies by id), created with the URL or not at all.
  for (const [name, distribution] of resourcesOf(synthesized, "aws_cloudfront_distribution")) {
    expect({ name, distribution }).toMatchObject({
      name,
      distribution: {
        enabled: true,
        origin: [
          {
            domain_name: expect.stringContaining(
              `one(aws_lambda_function_url.${urlName}[*].function_url)`,
            ),
            custom_origin_config: {
              origin_protocol_policy: "https-only",
              origin_ssl_protocols: ["TLSv1.2"],
            },
          },
        ],
        default_cache_behavior: {
          viewer_protocol_policy: "https-only",
          compress: false,
          cache_policy_id: "4135ea2d-6df8-44a3-9df3-4b5a84be39ad",
          origin_request_policy_id: "b689b0a8-53d0-40ab-baf2-68738e2966ac",
        },
        viewer_certificate: {
          ssl_support_method: "sni-only",
          minimum_protocol_version: "TLSv1.2_2021",
        },
      },
    });
    expect(distribution.viewer_certificate).not.toHaveProperty("cloudfront_default_certificate");
    expect(distribution.ordered_cache_behavior).toBeUndefined();
    // The URL's switch (create_stream_function) is part of the distribution's; known now, the same count.
    const urlSwitch = /var\.[a-z_]+/.exec(String(url.count))?.[0];
    if (urlSwitch === undefined) expect(distribution.count).toBe(url.count);
    else expect(String(distribution.count)).toContain(urlSwitch);
  }

  for (const type of TAGGABLE_TYPES) {
    for (const [name, resource] of resourcesOf(synthesized, type)) {
      expect({ resource: `${type}.${name}`, tagged: resource.tags !== undefined }).toEqual({
        resource: `${type}.${name}`,
        tagged: true,
      });
    }
  }
}

/** Known environment names pass the secret guard, and no known value is a credential. */
function expectNoPlaintextSecrets(variables: unknown): void {
  if (typeof variables !== "object" || variables === null) return;
  const entries = Object.entries(variables as Record<string, unknown>);
  expect(secretLikeNames(entries.map(([name]) => name))).toEqual([]);
  for (const [name, value] of entries) {
    if (typeof value === "string" && !value.startsWith("${")) {
      expect({ name, credential: new RegExp(SECRET_VALUE_PATTERN).test(value) }).toEqual({
        name,
        credential: false,
      });
    }
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
