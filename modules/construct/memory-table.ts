import { Construct } from "constructs";
import { TerraformLocal } from "../cdktf";
import { LambdaEventSourceMapping } from "@cdktf/provider-aws/lib/lambda-event-source-mapping";
import { LambdaFunction } from "@cdktf/provider-aws/lib/lambda-function";
import { SqsQueue } from "@cdktf/provider-aws/lib/sqs-queue";
import { DYNAMODB_CLEANER_ACTIONS, DYNAMODB_ITEM_ACTIONS } from "../../src/table/iam-actions";
import { ENVIRONMENT, IMAGE_HANDLERS } from "../../src/runtime/environment";
import { Alarms } from "./alarms";
import { HttpApi } from "./api";
import { RequestAuthorizerFunction } from "./authorizer";
import { createCleanerTrigger } from "./cleaner";
import { UserPool } from "./cognito";
import { createCustomDomains } from "./custom-domains";
import type { ApiDomain } from "./domain";
import { CRONS_ENABLED, cronsEnabledValue } from "./crons";
import { Repository } from "./ecr";
import { both, choose, commaJoined, numberAsString } from "./expressions";
import { alarmThresholds, functionLimits, provisionedConcurrency } from "./alarm-settings";
import { createDeadLetterQueue, createImageFunction, PublishedVersion } from "./function";
import { GraphFunction, graphFunction, GraphInputs, GraphPermissions } from "./graph";
import { Environment, Key } from "./key";
import { createLogGroups, logGroupNames, type LogGroups } from "./logs";
import { assertProps } from "./assert-props";
import { DEFAULTS, MemoryTableProps } from "./props";
import { tableResources } from "./policies";
import { FunctionRole, tableKeyAccess, TenantRole } from "./role";
import { functionVpc } from "./vpc";
import { isLiteral } from "./rules";
import { RecoverySweep } from "./recovery-sweep";
import { StreamFunction } from "./stream";
import type { StreamDomain } from "./stream-domain";
import { existingTable, Table } from "./table";
import { mergeTags } from "./tags";
import { Worker, workerInvokedName } from "./worker";

/**
 * Memory Table on AWS: a KMS-encrypted TTL table, a least-privilege containerized function behind a JWT-protected
 * HTTP API, the background-run worker it hands runs to (and a schedule that has it take over runs whose process
 * died), the stream function serving the same API streamed from a function URL (on by default; it verifies the
 * JWT itself), the expired-thread cleaner on the table's stream, and optionally a tenant-scoped role, an ECR
 * repository, a published alias with provisioned concurrency, CloudWatch alarms and custom domains for the API and
 * the stream URL. Secure by default; every resource it creates is a public field.
 */
export class MemoryTable extends Construct {
  readonly environment: Environment;
  readonly key: Key;
  readonly table: Table;
  /** The cleaner's on-failure destination: stream batches it gave up on. */
  readonly deadLetterQueue: SqsQueue;
  readonly logGroups: LogGroups;
  readonly functionRole: FunctionRole;
  readonly cleanerRole: FunctionRole;
  readonly tenantRole: TenantRole;
  readonly apiFunction: LambdaFunction;
  readonly apiVersion: PublishedVersion;
  readonly cleanerFunction: LambdaFunction;
  /** The cleaner's published version and the alias its stream mapping invokes (`publish`). */
  readonly cleanerVersion: PublishedVersion;
  readonly cleanerTrigger: LambdaEventSourceMapping;
  /** Background runs: the worker function, its role, log group, failure queue and their wiring. */
  readonly worker: Worker;
  /** The schedule that has the worker take over runs whose process died (`count`: off without a schedule). */
  readonly recoverySweep: RecoverySweep;
  /** Streaming: the function behind a function URL in RESPONSE_STREAM mode, its role (`count`: its toggle). */
  readonly stream: StreamFunction;
  /**
   * The functions that run graphs (the API function, the worker and the stream function): each gets the graph
   * inputs (environment, secrets, additional permissions), may assume the tenant role, and has its run alarms.
   */
  readonly graphFunctions: GraphFunction[];
  readonly graphInputs: GraphInputs;
  readonly graphPermissions: GraphPermissions[];
  readonly userPool: UserPool;
  readonly httpApi: HttpApi;
  /** The API's custom domain and its mapping (with `apiDomainName` only). */
  readonly apiDomain?: ApiDomain;
  /** The stream URL's custom domain, a CloudFront distribution (with `streamDomainName` only). */
  readonly streamDomain?: StreamDomain;
  /** API keys at API Gateway: the Lambda authorizer's function and role (`count`: `enableApiKeys`). */
  readonly requestAuthorizer: RequestAuthorizerFunction;
  readonly repository: Repository;
  readonly alarms: Alarms;
  /** The key every resource is encrypted with (created or brought). */
  readonly kmsKeyArn: string;

  constructor(scope: Construct, id: string, props: MemoryTableProps) {
    // Before super(): a refused construct leaves nothing behind in the scope.
    assertProps(props);
    super(scope, id);
    const name = props.name;
    const tags = (extra?: Record<string, string>) => mergeTags(props.tags, extra);
    const createKmsKey = props.createKmsKey ?? true;
    const createCognito = props.createCognitoUserPool ?? props.jwtIssuer === undefined;
    const createStream = props.createStreamFunction ?? DEFAULTS.createStreamFunction;
    const enableApiKeys = props.enableApiKeys ?? DEFAULTS.enableApiKeys;
    const apiKeyCacheSeconds = numberAsString(
      props.apiKeyCacheSeconds ?? DEFAULTS.apiKeyCacheSeconds,
    );
    const deletionProtection = props.deletionProtection ?? true;
    const retention = props.logRetentionInDays ?? DEFAULTS.logRetentionInDays;
    const rolePath = props.rolePath ?? DEFAULTS.rolePath;
    const kmsKeyDeletionWindowInDays =
      props.kmsKeyDeletionWindowInDays ?? DEFAULTS.kmsKeyDeletionWindowInDays;

    this.environment = new Environment(this, "environment", props.accountId, props.lookUpAccountId);
    const { region } = this.environment;
    this.key = new Key(
      this,
      "key",
      {
        name,
        createKmsKey,
        kmsKeyArn: props.kmsKeyArn,
        deletionWindowInDays: kmsKeyDeletionWindowInDays,
        createStreamFunction: createStream,
        enableApiKeys,
        tags: tags(props.kmsKeyTags),
      },
      this.environment,
    );
    const kmsKeyArn = (this.kmsKeyArn = this.key.keyArn);
    const { partition, accountId } = this.environment;
    const context = { name, partition, region, accountId, kmsKeyArn };

    this.table = new Table(this, "table", {
      name,
      kmsKeyArn,
      deletionProtection,
      tags: tags(props.tableTags),
      create: props.createTable ?? true,
      existing: existingTable(props),
    });
    const table = this.table;

    const groups = logGroupNames(name);
    const functionTags = tags(props.functionTags);
    this.logGroups = createLogGroups(this, context, {
      names: groups,
      retentionInDays: retention,
      functionTags,
      accessTags: tags(props.apiTags),
      createStream,
      enableApiKeys,
    });
    this.deadLetterQueue = createDeadLetterQueue(
      this,
      "dead_letter_queue",
      `${name}-dlq`,
      kmsKeyArn,
      functionTags,
    );

    const roleTags = tags(props.roleTags);
    // IAM is global: the region keeps the same name in two regions of one account from colliding
    // (at most 40 + "-function-" + 14 = 64 characters, IAM's limit).
    const roleName = (role: string) => `${name}-${role}-${region}`;
    const vpc = functionVpc(props, context);
    const roleProps = {
      path: rolePath,
      permissionsBoundary: props.rolePermissionsBoundary,
      tags: roleTags,
      vpc: vpc?.access,
      // An existing table encrypted with a key of its own: every role reads the table through it.
      tableKey: tableKeyAccess(props.tableKmsKeyArn, region),
    };
    this.graphInputs = new GraphInputs(this, "graph", {
      secrets: props.secrets,
      secretsKmsKeyArns: props.secretsKmsKeyArns,
      statements: props.graphPolicyStatements,
      policyArns: props.graphPolicyArns,
      region,
    });
    // Every function is released the same way: a version per change, behind one alias name.
    const release = {
      publish: props.publish ?? DEFAULTS.publish,
      aliasName: props.aliasName ?? DEFAULTS.aliasName,
    };
    const image = {
      imageUri: props.imageUri,
      imageUriManagedExternally: props.imageUriManagedExternally,
      entryPoint: props.imageEntryPoint,
      architecture: props.architecture ?? DEFAULTS.architecture,
      kmsKeyArn,
      tags: functionTags,
      vpc: vpc?.config,
    };
    const logLevel = props.logLevel ?? DEFAULTS.logLevel;
    const memorySize = props.memorySize ?? DEFAULTS.memorySize;
    // What every function that runs graphs reads (src/runtime/config.ts), the API function's and the worker's.
    const runtimeEnvironment = {
      [ENVIRONMENT.tableName]: table.name,
      [ENVIRONMENT.logLevel]: logLevel,
      [ENVIRONMENT.deadlineMarginMs]: numberAsString(
        props.deadlineMarginMs ?? DEFAULTS.deadlineMarginMs,
      ),
      [ENVIRONMENT.maxRunLegs]: numberAsString(props.maxRunLegs ?? DEFAULTS.maxRunLegs),
      [ENVIRONMENT.webhookAllowedHosts]: commaJoined(props.webhookAllowedHosts ?? []),
      // The worker fires due crons on its sweeps; the API and stream functions serve the cron routes.
      [CRONS_ENABLED]: cronsEnabledValue(props.createCrons ?? DEFAULTS.createCrons),
    };

    // The worker first: the API function's role and environment name it. Always created: without it, the API
    // function would run background runs itself, and Lambda freezes them once the response is sent.
    const workerName = `${name}-worker`;
    this.worker = new Worker(this, "worker", {
      context,
      functionName: workerName,
      image,
      role: { ...roleProps, roleName: roleName("worker") },
      itemResources: tableResources(table.arn),
      logGroup: this.logGroups.worker,
      timeout: props.workerTimeout ?? DEFAULTS.workerTimeout,
      memorySize: props.workerMemorySize ?? memorySize,
      reservedConcurrentExecutions:
        props.workerReservedConcurrentExecutions ?? DEFAULTS.workerReservedConcurrentExecutions,
      maximumRetryAttempts: props.workerMaximumRetryAttempts ?? DEFAULTS.workerMaximumRetryAttempts,
      maximumEventAgeInSeconds:
        props.workerMaximumEventAgeInSeconds ?? DEFAULTS.workerMaximumEventAgeInSeconds,
      logLevel,
      environment: this.graphInputs.environment(props.environment, {
        ...runtimeEnvironment,
        // Its own name (not a reference to itself, which would be a cycle): a run's next leg, on its alias.
        [ENVIRONMENT.workerFunctionName]: workerInvokedName(workerName, release),
      }),
      release,
      tags: functionTags,
    });

    // The worker exists always, so the sweep depends on its schedule only. The worker's role already reads the
    // table and every index of TABLE_DEFINITION (tableResources), which is what a sweep queries.
    this.recoverySweep = new RecoverySweep(this, "recovery_sweep", {
      name: `${name}-recovery-sweep`,
      schedule:
        props.recoverySweepSchedule === undefined
          ? DEFAULTS.recoverySweepSchedule
          : props.recoverySweepSchedule,
      workerFunctionName: this.worker.function.functionName,
      workerFunctionArn: this.worker.version.targetArn,
      workerQualifier: this.worker.version.qualifier,
      tags: functionTags,
    });

    this.functionRole = new FunctionRole(
      this,
      "function_role",
      { ...roleProps, roleName: roleName("function") },
      {
        kmsKeyArn,
        region,
        itemActions: DYNAMODB_ITEM_ACTIONS,
        itemResources: tableResources(table.arn),
        logGroupArn: this.logGroups.api.arn,
        // Background runs go to the worker's alias, and nowhere else.
        workerFunctionArn: this.worker.invokedArn,
      },
    );
    this.cleanerRole = new FunctionRole(
      this,
      "cleaner_role",
      { ...roleProps, roleName: roleName("cleaner") },
      {
        kmsKeyArn,
        region,
        // The cleaner queries the base table and deletes: no index, no reads or updates of items.
        itemActions: DYNAMODB_CLEANER_ACTIONS,
        itemResources: [table.arn],
        logGroupArn: this.logGroups.cleaner.arn,
        streamArn: table.streamArn,
        // The event source mapping sends the batches it gives up on with the cleaner's role.
        failureDestinationArn: this.deadLetterQueue.arn,
      },
    );

    this.apiFunction = createImageFunction(this, "function", {
      ...image,
      functionName: name,
      roleArn: this.functionRole.role.arn,
      command: props.imageCommand ?? [...DEFAULTS.imageCommand],
      memorySize,
      timeout: props.timeout ?? DEFAULTS.timeout,
      reservedConcurrentExecutions:
        props.reservedConcurrentExecutions ?? DEFAULTS.reservedConcurrentExecutions,
      logGroupName: this.logGroups.api.name,
      logLevel,
      publish: release.publish,
      environment: this.graphInputs.environment(props.environment, {
        ...runtimeEnvironment,
        [ENVIRONMENT.tenantClaim]: props.tenantClaim ?? DEFAULTS.tenantClaim,
        // After the worker's alias: the API function is created once the worker can be invoked.
        [ENVIRONMENT.workerFunctionName]: this.worker.invokedName,
      }),
      dependsOn: [this.logGroups.api, ...this.functionRole.policies, this.worker.version.alias],
    });
    this.apiVersion = new PublishedVersion(this, "function_alias", {
      function: this.apiFunction,
      ...release,
      invokedBy: "the HTTP API",
      provisionedConcurrentExecutions:
        props.provisionedConcurrentExecutions ?? DEFAULTS.provisionedConcurrentExecutions,
      stableVersion: props.stableVersion,
      canaryWeight: props.canaryWeight,
    });
    this.userPool = new UserPool(this, "user_pool", {
      name,
      create: createCognito,
      deletionProtection,
      region,
      tags: tags(props.apiTags),
    });
    // Who may call: the JWT authorizer's issuer and audiences, which the stream function checks itself.
    const issuer = choose(createCognito, this.userPool.issuer, props.jwtIssuer ?? "");
    const audience = choose(createCognito, [this.userPool.clientId], props.jwtAudience ?? []);
    const corsAllowOrigins = props.corsAllowOrigins ?? [];
    // A local: CDKTF renders the user pool's issuer template wrongly this deep in functions.
    const issuerValue = isLiteral(issuer)
      ? issuer
      : new TerraformLocal(this, "jwt_issuer", issuer).asString;

    this.stream = new StreamFunction(this, "stream", {
      context,
      create: createStream,
      createInvokeViaUrlPermission:
        props.createStreamUrlInvokePermission ?? DEFAULTS.createStreamUrlInvokePermission,
      functionName: `${name}-stream`,
      image,
      role: { ...roleProps, roleName: roleName("stream") },
      itemResources: tableResources(table.arn),
      logGroup: this.logGroups.stream,
      workerFunctionArn: this.worker.invokedArn,
      dependsOn: [this.worker.version.alias],
      timeout: props.streamTimeout ?? DEFAULTS.streamTimeout,
      memorySize: props.streamMemorySize ?? memorySize,
      reservedConcurrentExecutions:
        props.streamReservedConcurrentExecutions ?? DEFAULTS.streamReservedConcurrentExecutions,
      logLevel,
      // The API function's environment, and the issuer and audiences its authorizer would check.
      environment: this.graphInputs.environment(props.environment, {
        ...runtimeEnvironment,
        [ENVIRONMENT.tenantClaim]: props.tenantClaim ?? DEFAULTS.tenantClaim,
        [ENVIRONMENT.workerFunctionName]: this.worker.invokedName,
        [ENVIRONMENT.jwtIssuer]: issuerValue,
        [ENVIRONMENT.jwtAudience]: commaJoined(audience),
        [ENVIRONMENT.apiKeyCacheSeconds]: apiKeyCacheSeconds,
      }),
      corsAllowOrigins: props.streamCorsAllowOrigins ?? corsAllowOrigins,
      release,
      tags: functionTags,
    });

    // Every function that runs graphs is listed here, before what derives from the list (its graph extras, the
    // tenant role's trust, the alarms): build it with `graphInputs.environment(...)` as its environment, a role
    // of its own (with `failureDestinationArn` if it is invoked asynchronously), and append it.
    this.graphFunctions = [
      graphFunction("function", this.apiFunction, this.functionRole, this.logGroups.api, true),
      graphFunction(
        "worker_function",
        this.worker.function,
        this.worker.role,
        this.logGroups.worker,
        true,
      ),
      graphFunction(
        "stream_function",
        this.stream.function,
        this.stream.role,
        this.logGroups.stream,
        createStream,
      ),
    ];
    this.graphPermissions = this.graphFunctions.map((graph) => this.graphInputs.grant(graph));

    // The same image with another CMD: one artifact to build, scan and pin.
    this.cleanerFunction = createImageFunction(this, "cleaner_function", {
      ...image,
      functionName: `${name}-cleaner`,
      roleArn: this.cleanerRole.role.arn,
      command: [IMAGE_HANDLERS.cleaner],
      memorySize: 512,
      timeout: props.cleanerTimeout ?? DEFAULTS.cleanerTimeout,
      reservedConcurrentExecutions:
        props.cleanerReservedConcurrentExecutions ?? DEFAULTS.cleanerReservedConcurrentExecutions,
      logGroupName: this.logGroups.cleaner.name,
      logLevel,
      environment: {
        [ENVIRONMENT.tableName]: table.name,
        [ENVIRONMENT.logLevel]: logLevel,
      },
      publish: release.publish,
      dependsOn: [this.logGroups.cleaner, ...this.cleanerRole.policies],
    });
    this.cleanerVersion = new PublishedVersion(this, "cleaner_alias", {
      function: this.cleanerFunction,
      ...release,
      invokedBy: "the table's stream mapping",
    });
    this.cleanerTrigger = createCleanerTrigger(this, "cleaner_trigger", {
      streamArn: table.streamArn,
      functionArn: this.cleanerVersion.targetArn,
      deadLetterQueueArn: this.deadLetterQueue.arn,
      tags: functionTags,
    });

    this.tenantRole = new TenantRole(this, "tenant_role", {
      ...roleProps,
      roleName: roleName("tenant"),
      create: props.createTenantRole ?? false,
      attachAssumePolicy: props.attachTenantRoleAssumePolicy ?? false,
      // The API function's assume policy keeps its address (`tenant_role_assume`).
      graphRoles: this.graphFunctions.map((graph) => ({
        id: graph.id === "function" ? "assume" : `assume_${graph.id}`,
        role: graph.role,
      })),
      tableArn: table.arn,
      kmsKeyArn,
      region,
    });

    this.requestAuthorizer = new RequestAuthorizerFunction(this, "request_authorizer", {
      context,
      create: enableApiKeys,
      functionName: `${name}-authorizer`,
      image,
      role: { ...roleProps, roleName: roleName("auth") },
      tableArn: table.arn,
      logGroup: this.logGroups.authorizer,
      logLevel,
      // It runs once per API request, briefly: it never needs more than the API function's concurrency.
      reservedConcurrentExecutions:
        props.reservedConcurrentExecutions ?? DEFAULTS.reservedConcurrentExecutions,
      // What image/authorizer.ts reads: the table, and who may call (the JWT authorizer's issuer and audiences).
      environment: {
        [ENVIRONMENT.tableName]: table.name,
        [ENVIRONMENT.logLevel]: logLevel,
        [ENVIRONMENT.tenantClaim]: props.tenantClaim ?? DEFAULTS.tenantClaim,
        [ENVIRONMENT.jwtIssuer]: issuerValue,
        [ENVIRONMENT.jwtAudience]: commaJoined(audience),
        [ENVIRONMENT.apiKeyCacheSeconds]: apiKeyCacheSeconds,
      },
      release,
      tags: functionTags,
    });
    this.httpApi = new HttpApi(this, "http_api", {
      name,
      target: {
        functionName: this.apiFunction.functionName,
        invokeArn: this.apiVersion.invokeArn,
        qualifier: this.apiVersion.qualifier,
      },
      issuer,
      audience,
      corsAllowOrigins,
      throttlingBurstLimit: props.throttlingBurstLimit ?? DEFAULTS.throttlingBurstLimit,
      throttlingRateLimit: props.throttlingRateLimit ?? DEFAULTS.throttlingRateLimit,
      accessLogGroup: this.logGroups.access,
      disableExecuteApiEndpoint: props.apiDisableDefaultEndpoint ?? false,
      tags: tags(props.apiTags),
      lambdaAuthorizer: {
        create: enableApiKeys,
        functionName: this.requestAuthorizer.functionName,
        invokeArn: this.requestAuthorizer.invokeArn,
        qualifier: this.requestAuthorizer.qualifier,
      },
    });
    ({ api: this.apiDomain, stream: this.streamDomain } = createCustomDomains(this, props, {
      region,
      apiId: this.httpApi.api.id,
      stageId: this.httpApi.stage.id,
      createStream,
      streamUrl: this.stream.functionUrl,
      tags: tags(props.apiTags),
    }));
    this.repository = new Repository(this, "repository", {
      name,
      create: props.createEcrRepository ?? false,
      kmsKeyArn,
      tags: tags(props.ecrTags),
    });
    this.alarms = new Alarms(this, "alarms", {
      context,
      create: props.createAlarms ?? false,
      createTopic: props.createAlarmTopic ?? false,
      topicArn: props.alarmSnsTopicArn,
      thresholds: alarmThresholds(props.alarmThresholds),
      kmsKeyDeletionWindowInDays,
      apiId: this.httpApi.api.id,
      graphFunctions: this.graphFunctions,
      cleanerFunction: this.cleanerFunction,
      functionLimits: functionLimits(props),
      provisionedAlias: {
        enabled: both(release.publish, provisionedConcurrency(props)),
        aliasName: props.aliasName ?? DEFAULTS.aliasName,
      },
      deadLetterQueueName: this.deadLetterQueue.name,
      workerFailureQueueName: this.worker.failureQueue.name,
      tableName: table.name,
      tags: tags(props.alarmTags),
    });
  }
}
