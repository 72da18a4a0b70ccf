import { Construct } from "constructs";
import { Fn, Token } from "../cdktf";
import { CloudwatchLogGroup } from "@cdktf/provider-aws/lib/cloudwatch-log-group";
import { LambdaEventSourceMapping } from "@cdktf/provider-aws/lib/lambda-event-source-mapping";
import { LambdaFunction } from "@cdktf/provider-aws/lib/lambda-function";
import { SqsQueue } from "@cdktf/provider-aws/lib/sqs-queue";
import { DYNAMODB_CLEANER_ACTIONS, DYNAMODB_ITEM_ACTIONS } from "../../src/table/iam-actions";
import { InvalidConfigurationError } from "../../src/shared/errors";
import { ENVIRONMENT, IMAGE_HANDLERS } from "../../src/runtime/environment";
import { HttpApi } from "./api";
import { createCleanerTrigger } from "./cleaner";
import { UserPool } from "./cognito";
import { Repository } from "./ecr";
import { choose, Flag } from "./expressions";
import { createDeadLetterQueue, createImageFunction } from "./function";
import { Environment, Key } from "./key";
import { createLogGroup, logGroupNames } from "./logs";
import { DEFAULTS, MemoryTableProps } from "./props";
import { tableResources } from "./policies";
import { FunctionRole, TenantRole } from "./role";
import {
  assertCorsOrigins,
  assertEnvironment,
  assertImageUri,
  assertLogRetention,
  assertName,
  assertTimeout,
  isLiteral,
} from "./rules";
import { Table } from "./table";
import { mergeTags } from "./tags";

/**
 * Memory Table on AWS: a KMS-encrypted TTL table, a least-privilege containerized function behind a JWT-protected
 * HTTP API, the expired-thread cleaner on the table's stream, and optionally a tenant-scoped role and an ECR
 * repository. Secure by default; every resource it creates is a public field.
 */
export class MemoryTable extends Construct {
  readonly environment: Environment;
  readonly key: Key;
  readonly table: Table;
  readonly deadLetterQueue: SqsQueue;
  readonly logGroups: {
    api: CloudwatchLogGroup;
    cleaner: CloudwatchLogGroup;
    access: CloudwatchLogGroup;
  };
  readonly functionRole: FunctionRole;
  readonly cleanerRole: FunctionRole;
  readonly tenantRole: TenantRole;
  readonly apiFunction: LambdaFunction;
  readonly cleanerFunction: LambdaFunction;
  readonly cleanerTrigger: LambdaEventSourceMapping;
  readonly userPool: UserPool;
  readonly httpApi: HttpApi;
  readonly repository: Repository;
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
    const deletionProtection = props.deletionProtection ?? true;
    const retention = props.logRetentionInDays ?? DEFAULTS.logRetentionInDays;
    const rolePath = props.rolePath ?? DEFAULTS.rolePath;

    this.environment = new Environment(this, "environment", props.accountId, props.lookUpAccountId);
    const { region } = this.environment;
    this.key = new Key(
      this,
      "key",
      {
        name,
        createKmsKey,
        kmsKeyArn: props.kmsKeyArn,
        deletionWindowInDays:
          props.kmsKeyDeletionWindowInDays ?? DEFAULTS.kmsKeyDeletionWindowInDays,
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
    });
    const table = this.table.table;

    const groups = logGroupNames(name);
    const functionTags = tags(props.functionTags);
    this.logGroups = {
      api: createLogGroup(this, "api_log_group", context, groups.api, retention, functionTags),
      cleaner: createLogGroup(
        this,
        "cleaner_log_group",
        context,
        groups.cleaner,
        retention,
        functionTags,
      ),
      access: createLogGroup(
        this,
        "access_log_group",
        context,
        groups.access,
        retention,
        tags(props.apiTags),
      ),
    };
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
    const roleProps = {
      path: rolePath,
      permissionsBoundary: props.rolePermissionsBoundary,
      tags: roleTags,
    };
    const policyInput = {
      kmsKeyArn,
      region,
      deadLetterQueueArn: this.deadLetterQueue.arn,
    };
    this.functionRole = new FunctionRole(
      this,
      "function_role",
      { ...roleProps, roleName: roleName("function") },
      {
        ...policyInput,
        itemActions: DYNAMODB_ITEM_ACTIONS,
        itemResources: tableResources(table.arn),
        logGroupArn: this.logGroups.api.arn,
      },
    );
    this.cleanerRole = new FunctionRole(
      this,
      "cleaner_role",
      { ...roleProps, roleName: roleName("cleaner") },
      {
        ...policyInput,
        // The cleaner queries the base table and deletes: no index, no reads or updates of items.
        itemActions: DYNAMODB_CLEANER_ACTIONS,
        itemResources: [table.arn],
        logGroupArn: this.logGroups.cleaner.arn,
        streamArn: table.streamArn,
      },
    );
    this.tenantRole = new TenantRole(this, "tenant_role", {
      ...roleProps,
      roleName: roleName("tenant"),
      create: props.createTenantRole ?? false,
      functionRole: this.functionRole.role,
      tableArn: table.arn,
      kmsKeyArn,
      region,
    });

    const image = {
      imageUri: props.imageUri,
      entryPoint: props.imageEntryPoint,
      architecture: props.architecture ?? DEFAULTS.architecture,
      deadLetterQueueArn: this.deadLetterQueue.arn,
      kmsKeyArn,
      tags: functionTags,
    };
    const logLevel = props.logLevel ?? DEFAULTS.logLevel;
    this.apiFunction = createImageFunction(this, "function", {
      ...image,
      functionName: name,
      roleArn: this.functionRole.role.arn,
      command: props.imageCommand ?? [...DEFAULTS.imageCommand],
      memorySize: props.memorySize ?? DEFAULTS.memorySize,
      timeout: props.timeout ?? DEFAULTS.timeout,
      reservedConcurrentExecutions:
        props.reservedConcurrentExecutions ?? DEFAULTS.reservedConcurrentExecutions,
      logGroupName: this.logGroups.api.name,
      environment: withEnvironment(props.environment, {
        [ENVIRONMENT.tableName]: table.name,
        [ENVIRONMENT.tenantClaim]: props.tenantClaim ?? DEFAULTS.tenantClaim,
        [ENVIRONMENT.logLevel]: logLevel,
        [ENVIRONMENT.deadlineMarginMs]: numberAsString(
          props.deadlineMarginMs ?? DEFAULTS.deadlineMarginMs,
        ),
      }),
      dependsOn: [this.logGroups.api, this.functionRole.policy],
    });
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
      environment: {
        [ENVIRONMENT.tableName]: table.name,
        [ENVIRONMENT.logLevel]: logLevel,
      },
      dependsOn: [this.logGroups.cleaner, this.cleanerRole.policy],
    });
    this.cleanerTrigger = createCleanerTrigger(this, "cleaner_trigger", {
      streamArn: table.streamArn,
      functionArn: this.cleanerFunction.arn,
      deadLetterQueueArn: this.deadLetterQueue.arn,
    });

    this.userPool = new UserPool(this, "user_pool", {
      name,
      create: createCognito,
      deletionProtection,
      region,
      tags: tags(props.apiTags),
    });
    this.httpApi = new HttpApi(this, "http_api", {
      name,
      function: this.apiFunction,
      issuer: choose(createCognito, this.userPool.issuer, props.jwtIssuer ?? ""),
      audience: choose(createCognito, [this.userPool.clientId], props.jwtAudience ?? []),
      corsAllowOrigins: props.corsAllowOrigins ?? [],
      throttlingBurstLimit: props.throttlingBurstLimit ?? DEFAULTS.throttlingBurstLimit,
      throttlingRateLimit: props.throttlingRateLimit ?? DEFAULTS.throttlingRateLimit,
      accessLogGroup: this.logGroups.access,
      tags: tags(props.apiTags),
    });
    this.repository = new Repository(this, "repository", {
      name,
      create: props.createEcrRepository ?? false,
      kmsKeyArn,
      tags: tags(props.ecrTags),
    });
  }
}

/** The caller's variables first, ours last: the module's own settings cannot be overridden by accident. */
function withEnvironment(
  extra: Record<string, string> | undefined,
  own: Record<string, string>,
): Record<string, string> {
  if (extra === undefined || isLiteral(extra)) return { ...extra, ...own };
  return Token.asStringMap(Fn.merge([extra, own]));
}

function numberAsString(value: number): string {
  return isLiteral(value) ? String(value) : Token.asString(value);
}

/** Rejects literal props that the HCL module's variable validations would reject too. */
function assertProps(props: MemoryTableProps): void {
  assertName(props.name);
  assertImageUri(props.imageUri);
  if (props.timeout !== undefined) assertTimeout(props.timeout);
  if (props.logRetentionInDays !== undefined) assertLogRetention(props.logRetentionInDays);
  if (props.environment !== undefined) assertEnvironment(props.environment);
  if (props.corsAllowOrigins !== undefined) assertCorsOrigins(props.corsAllowOrigins);
  if (props.createKmsKey === false && props.kmsKeyArn === undefined) {
    throw new InvalidConfigurationError(
      "kms_key_arn",
      "expected a key ARN when create_kms_key is false, got none",
    );
  }
  if ((props.createKmsKey ?? true) === true && props.kmsKeyArn !== undefined) {
    throw new InvalidConfigurationError(
      "kms_key_arn",
      `expected none when the module creates the key (create_kms_key = true), got ${JSON.stringify(props.kmsKeyArn)}`,
    );
  }
  if ((props.createCognitoUserPool ?? props.jwtIssuer === undefined) === true) {
    if (props.jwtIssuer !== undefined) {
      throw new InvalidConfigurationError(
        "jwt_issuer",
        `expected none with the created user pool (create_cognito_user_pool = true), got ${JSON.stringify(props.jwtIssuer)}`,
      );
    }
    if ((props.jwtAudience ?? []).length > 0) {
      throw new InvalidConfigurationError(
        "jwt_audience",
        `expected none without an external jwt_issuer, got ${JSON.stringify(props.jwtAudience)}`,
      );
    }
  }
  const external: Flag | undefined = props.createCognitoUserPool;
  if ((external === false || props.jwtIssuer !== undefined) && isLiteral(props.jwtIssuer ?? "x")) {
    if (props.jwtIssuer === undefined || !/^https:\/\//.test(props.jwtIssuer)) {
      throw new InvalidConfigurationError(
        "jwt_issuer",
        `expected an https:// issuer URL, got ${JSON.stringify(props.jwtIssuer)}`,
      );
    }
    if ((props.jwtAudience ?? []).length === 0) {
      throw new InvalidConfigurationError(
        "jwt_audience",
        "expected at least one audience with jwt_issuer, got none",
      );
    }
  }
}
