import { Construct } from "constructs";
import { Fn, Op, Token } from "../cdktf";
import type { ITerraformDependable } from "../cdktf";
import { LambdaAlias } from "@cdktf/provider-aws/lib/lambda-alias";
import { LambdaFunction } from "@cdktf/provider-aws/lib/lambda-function";
import { LambdaProvisionedConcurrencyConfig } from "@cdktf/provider-aws/lib/lambda-provisioned-concurrency-config";
import { SqsQueue } from "@cdktf/provider-aws/lib/sqs-queue";
import { addBlockIfAny, attributeOf, both, choose, countIf, Flag } from "./expressions";
import { isLiteral, type Architecture } from "./rules";

export interface ImageFunctionProps {
  /** For an optional function (default: always created). */
  count?: number;
  functionName: string;
  roleArn: string;
  imageUri: string;
  command: string[];
  entryPoint?: string[];
  architecture: Architecture;
  memorySize: number;
  timeout: number;
  reservedConcurrentExecutions: number;
  /**
   * Only for a function invoked asynchronously: Lambda sends nothing to a dead-letter queue of a function that
   * API Gateway or an event source mapping invokes (they invoke synchronously). The worker, invoked
   * asynchronously, has an on-failure destination instead (see worker.ts).
   */
  deadLetterQueueArn?: string;
  kmsKeyArn: string;
  logGroupName: string;
  /** The LOG_LEVEL the function's own logger filters with (pino). */
  logLevel: string;
  environment: Record<string, string>;
  /** Subnets and security groups to attach the function to (none: no VPC). */
  vpc?: FunctionVpc;
  /** Publish a version on every change (default false). */
  publish?: Flag;
  /**
   * A pipeline owns the image (`aws lambda update-function-code`): Terraform ignores changes of `image_uri` after
   * creation. Known now only (a lifecycle setting); the HCL module renders both variants (module-transforms.ts).
   */
  imageUriManagedExternally?: boolean;
  tags: Record<string, string>;
  /** The log group and the role policy: the first invocation must find both. */
  dependsOn: ITerraformDependable[];
}

/**
 * Lambda's own application log level for a LOG_LEVEL. pino writes numeric levels, which Lambda reads as INFO:
 * anything above INFO would drop every pino line and every metric line, errors included. So Lambda filters at
 * most down to INFO, and LOG_LEVEL does the rest; `debug` and `trace` open Lambda's filter for console output too.
 */
export function applicationLogLevel(logLevel: string): string {
  if (isLiteral(logLevel))
    return ["debug", "trace"].includes(logLevel) ? logLevel.toUpperCase() : "INFO";
  return Token.asString(
    Fn.conditional(Fn.contains(["debug", "trace"], logLevel), Fn.upper(logLevel), "INFO"),
  );
}

/**
 * A function from the container image, pinned by digest: traced, concurrency-capped, its environment encrypted
 * with the module's key, its logs JSON (pino's lines, the runtime client's and Lambda's platform lines all one
 * format) in the module's log group.
 */
export function createImageFunction(
  scope: Construct,
  id: string,
  props: ImageFunctionProps,
): LambdaFunction {
  const fn = new LambdaFunction(scope, id, {
    count: props.count,
    functionName: props.functionName,
    role: props.roleArn,
    packageType: "Image",
    imageUri: props.imageUri,
    imageConfig: { command: props.command, entryPoint: props.entryPoint },
    architectures: [props.architecture],
    memorySize: props.memorySize,
    timeout: props.timeout,
    reservedConcurrentExecutions: props.reservedConcurrentExecutions,
    publish: props.publish,
    tracingConfig: { mode: "Active" },
    deadLetterConfig:
      props.deadLetterQueueArn === undefined ? undefined : { targetArn: props.deadLetterQueueArn },
    kmsKeyArn: props.kmsKeyArn,
    environment: { variables: props.environment },
    loggingConfig: {
      logFormat: "JSON",
      logGroup: props.logGroupName,
      applicationLogLevel: applicationLogLevel(props.logLevel),
      systemLogLevel: "INFO",
    },
    tags: props.tags,
    dependsOn: props.dependsOn,
    lifecycle:
      props.imageUriManagedExternally === true ? { ignoreChanges: ["image_uri"] } : undefined,
  });
  if (props.vpc !== undefined) {
    // Only when subnets are given: an empty vpc_config block is a perpetual diff on some provider versions.
    addBlockIfAny(fn, "vpc_config", props.vpc.subnetIds, {
      subnet_ids: props.vpc.subnetIds,
      security_group_ids: props.vpc.securityGroupIds,
    });
  }
  return fn;
}

export interface FunctionVpc {
  subnetIds: string[];
  securityGroupIds: string[];
}

/**
 * Where failures land: stream batches the cleaner's mapping gave up on, and the worker's jobs Lambda gave up on
 * (its on-failure destination). Encrypted with the module's key, kept 14 days (SQS's longest).
 */
export function createDeadLetterQueue(
  scope: Construct,
  id: string,
  queueName: string,
  kmsKeyArn: string,
  tags: Record<string, string>,
  /** Only for a queue that feeds a function (SQS's default otherwise: 30 s). */
  visibilityTimeoutSeconds?: number,
): SqsQueue {
  return new SqsQueue(scope, id, {
    name: queueName,
    kmsMasterKeyId: kmsKeyArn,
    kmsDataKeyReusePeriodSeconds: 300,
    messageRetentionSeconds: 1209600,
    visibilityTimeoutSeconds,
    tags,
  });
}

export interface PublishedVersionProps {
  function: LambdaFunction;
  /** For the alias of an optional function (default: with `publish` only). */
  create?: Flag;
  publish: Flag;
  aliasName: string;
  /** What invokes it, for the alias's description. */
  invokedBy: string;
  /** Provisioned concurrency on the alias (default 0: none). */
  provisionedConcurrentExecutions?: number;
  /**
   * The published version the alias keeps (a rollback, or the stable side of a canary); none: the latest version
   * Terraform published, so every change reaches the alias on apply.
   */
  stableVersion?: string;
  /**
   * Percent (0 to 100) of the alias's invocations routed to the latest published version while the alias stays on
   * `stableVersion`: a weighted canary of the version the last apply published.
   */
  canaryWeight?: number;
}

/**
 * With `publish`: an alias on the version every change publishes, which is what every invoker calls (the API,
 * the function URL, event source mappings, schedules, the worker's own next legs), optionally with provisioned
 * concurrency and a weighted canary. Without it, invokers call the function's $LATEST.
 */
export class PublishedVersion extends Construct {
  readonly alias: LambdaAlias;
  readonly provisionedConcurrency?: LambdaProvisionedConcurrencyConfig;
  /** What API Gateway invokes: the alias with `publish`, the function's $LATEST otherwise. */
  readonly invokeArn: string;
  /** What an event source mapping, a schedule or a caller invokes: the alias ARN, or the unqualified ARN. */
  readonly targetArn: string;
  /** The function's name as an Invoke or AddPermission call takes it: `<name>:<alias>` with `publish`. */
  readonly qualifiedName: string;
  /** A permission's or a URL's qualifier: the alias name with `publish`, none otherwise. */
  readonly qualifier: string | undefined;
  readonly aliasArn: string;
  readonly aliasName: string;
  /** Whether the alias exists (`publish`, and the function's own toggle). */
  readonly enabled: Flag;

  constructor(scope: Construct, id: string, props: PublishedVersionProps) {
    super(scope, id);
    const fn = props.function;
    this.enabled = both(props.create ?? true, props.publish);
    // An optional function has `count`: read its attributes through one().
    const attribute = (name: string) =>
      props.create === undefined ? fn.getStringAttribute(name) : attributeOf(fn, name);
    const latest = attribute("version");
    const stable = props.stableVersion;
    this.alias = new LambdaAlias(this, "alias", {
      count: countIf(this.enabled),
      name: props.aliasName,
      description: `The published version ${props.invokedBy} invokes`,
      functionName: attribute("function_name"),
      functionVersion:
        stable === undefined
          ? latest
          : isLiteral(stable)
            ? stable
            : Token.asString(Fn.coalesce([stable, latest])),
    });
    addCanary(this.alias, latest, props.canaryWeight);
    this.aliasName = attributeOf(this.alias, "name");
    this.aliasArn = attributeOf(this.alias, "arn");
    const concurrency = props.provisionedConcurrentExecutions;
    if (concurrency !== undefined) {
      const count = countIf(isLiteral(concurrency) ? concurrency > 0 : Op.gte(concurrency, 1));
      this.provisionedConcurrency = new LambdaProvisionedConcurrencyConfig(
        this,
        "provisioned_concurrency",
        {
          count,
          functionName: attribute("function_name"),
          qualifier: this.aliasName,
          // Without instances (count 0) the value is unused, but the provider still validates it (at least 1).
          provisionedConcurrentExecutions: isLiteral(concurrency)
            ? Math.max(concurrency, 1)
            : concurrency,
        },
      );
    }
    this.invokeArn = choose(
      this.enabled,
      attributeOf(this.alias, "invoke_arn"),
      attribute("invoke_arn"),
    );
    this.targetArn = choose(this.enabled, this.aliasArn, attribute("arn"));
    this.qualifiedName = choose(
      this.enabled,
      Token.asString(Fn.format("%s:%s", [attribute("function_name"), this.aliasName])),
      attribute("function_name"),
    );
    this.qualifier =
      typeof this.enabled === "boolean"
        ? this.enabled
          ? this.aliasName
          : undefined
        : Token.asString(Fn.conditional(this.enabled, this.aliasName, null));
  }
}

/**
 * The alias's weighted routing: `weight` percent to the latest published version (a block only when the weight is
 * above 0, `dynamic` for a reference).
 */
function addCanary(alias: LambdaAlias, latest: string, weight: number | undefined): void {
  if (weight === undefined || (isLiteral(weight) && weight === 0)) return;
  const weights = isLiteral(weight)
    ? Fn.zipmap([latest], [weight / 100])
    : Fn.zipmap([latest], [Op.div(weight, 100)]);
  if (isLiteral(weight)) {
    alias.addOverride("routing_config", { additional_version_weights: weights });
    return;
  }
  alias.addOverride("dynamic.routing_config", {
    // `> 0` would render as `> undefined` (CDKTF drops a literal 0 operand).
    for_each: Fn.conditional(Op.gt(weight, 0.000001), [1], []),
    content: { additional_version_weights: weights },
  });
}
