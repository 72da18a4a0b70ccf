import { Construct } from "constructs";
import { Fn, Op, Token } from "../cdktf";
import type { ITerraformDependable } from "../cdktf";
import { LambdaAlias } from "@cdktf/provider-aws/lib/lambda-alias";
import { LambdaFunction } from "@cdktf/provider-aws/lib/lambda-function";
import { LambdaProvisionedConcurrencyConfig } from "@cdktf/provider-aws/lib/lambda-provisioned-concurrency-config";
import { SqsQueue } from "@cdktf/provider-aws/lib/sqs-queue";
import { addBlockIfAny, attributeOf, choose, countIf, Flag } from "./expressions";
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
  publish: Flag;
  aliasName: string;
  provisionedConcurrentExecutions: number;
}

/**
 * With `publish`: an alias on the version every change publishes, which is what the API invokes, and optionally
 * provisioned concurrency on it (initialized environments, so users do not wait for a cold start).
 */
export class PublishedVersion extends Construct {
  readonly alias: LambdaAlias;
  readonly provisionedConcurrency: LambdaProvisionedConcurrencyConfig;
  /** What the API invokes: the alias with `publish`, the function's $LATEST otherwise. */
  readonly invokeArn: string;
  /** The permission's qualifier: the alias name with `publish`, none otherwise. */
  readonly qualifier: string | undefined;
  readonly aliasArn: string;
  readonly aliasName: string;

  constructor(scope: Construct, id: string, props: PublishedVersionProps) {
    super(scope, id);
    const fn = props.function;
    this.alias = new LambdaAlias(this, "alias", {
      count: countIf(props.publish),
      name: props.aliasName,
      description: "The published version the HTTP API invokes",
      functionName: fn.functionName,
      functionVersion: fn.version,
    });
    const concurrency = props.provisionedConcurrentExecutions;
    const count = countIf(isLiteral(concurrency) ? concurrency > 0 : Op.gte(concurrency, 1));
    this.aliasName = attributeOf(this.alias, "name");
    this.aliasArn = attributeOf(this.alias, "arn");
    this.provisionedConcurrency = new LambdaProvisionedConcurrencyConfig(
      this,
      "provisioned_concurrency",
      {
        count,
        functionName: fn.functionName,
        qualifier: this.aliasName,
        // Without instances (count 0) the value is unused, but the provider still validates it (at least 1).
        provisionedConcurrentExecutions: isLiteral(concurrency)
          ? Math.max(concurrency, 1)
          : concurrency,
      },
    );
    this.invokeArn = choose(props.publish, attributeOf(this.alias, "invoke_arn"), fn.invokeArn);
    this.qualifier =
      typeof props.publish === "boolean"
        ? props.publish
          ? this.aliasName
          : undefined
        : Token.asString(Fn.conditional(props.publish, this.aliasName, null));
  }
}
