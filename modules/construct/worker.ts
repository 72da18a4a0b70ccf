import { Construct } from "constructs";
import { Fn, Op, Token } from "../cdktf";
import { CloudwatchLogGroup } from "@cdktf/provider-aws/lib/cloudwatch-log-group";
import { LambdaEventSourceMapping } from "@cdktf/provider-aws/lib/lambda-event-source-mapping";
import { LambdaFunction } from "@cdktf/provider-aws/lib/lambda-function";
import { LambdaFunctionEventInvokeConfig } from "@cdktf/provider-aws/lib/lambda-function-event-invoke-config";
import { SqsQueue } from "@cdktf/provider-aws/lib/sqs-queue";
import { DYNAMODB_ITEM_ACTIONS } from "../../src/table/iam-actions";
import { IMAGE_HANDLERS } from "../../src/runtime/environment";
import type { Flag } from "./expressions";
import {
  createDeadLetterQueue,
  createImageFunction,
  type ImageFunctionProps,
  PublishedVersion,
} from "./function";
import type { Context } from "./props";
import { FunctionRole, type RoleProps } from "./role";
import { isLiteral } from "./rules";

/** The image settings every function shares. */
export type ImageSettings = Pick<
  ImageFunctionProps,
  | "imageUri"
  | "entryPoint"
  | "architecture"
  | "kmsKeyArn"
  | "tags"
  | "vpc"
  | "imageUriManagedExternally"
>;

/** How a function is released: a version published on every change, behind an alias every invoker calls. */
export interface Release {
  publish: Flag;
  aliasName: string;
}

export interface WorkerProps {
  context: Context;
  /** Its function's name; `arn` is built from it. */
  functionName: string;
  image: ImageSettings;
  role: RoleProps;
  /** Where its graphs read and write: the table and its indexes. */
  itemResources: string[];
  /** Its log group (the module's key policy names it: see logs.ts). */
  logGroup: CloudwatchLogGroup;
  timeout: number;
  memorySize: number;
  reservedConcurrentExecutions: number;
  maximumRetryAttempts: number;
  maximumEventAgeInSeconds: number;
  logLevel: string;
  /** Its environment, WORKER_FUNCTION_NAME (its own name, for its next legs) included. */
  environment: Record<string, string>;
  release: Release;
  tags: Record<string, string>;
}

/**
 * Background runs: a function from the same image (`worker.handler`) that the API function invokes
 * asynchronously, one leg per invocation, and that invokes itself for a run's next leg. Lambda retries a failed
 * invocation, then sends its destination record to the failure queue, which feeds the same function: it records
 * the run as failed, so no run stays `running` after Lambda gave up on it.
 */
export class Worker extends Construct {
  readonly failureQueue: SqsQueue;
  readonly role: FunctionRole;
  readonly function: LambdaFunction;
  readonly invokeConfig: LambdaFunctionEventInvokeConfig;
  readonly failureTrigger: LambdaEventSourceMapping;
  /**
   * ARN of the function, built from its name: known at plan, and usable in its own role (a reference to the
   * function there would be a cycle: the function waits for its role's policy).
   */
  readonly arn: string;
  /** What callers invoke, built the same way: the alias's ARN with `publish`, the unqualified ARN otherwise. */
  readonly invokedArn: string;
  /** The name callers pass to Invoke (WORKER_FUNCTION_NAME): `<name>:<alias>` with `publish`. */
  readonly invokedName: string;
  /** Its published version and alias (`publish`). */
  readonly version: PublishedVersion;

  constructor(scope: Construct, id: string, props: WorkerProps) {
    super(scope, id);
    const { context } = props;
    this.arn = workerFunctionArn(context, props.functionName);
    const { publish, aliasName } = props.release;
    this.invokedArn = `${this.arn}${aliasSuffix(props.release)}`;
    this.invokedName = workerInvokedName(props.functionName, props.release);
    const logGroup = props.logGroup;
    this.failureQueue = createDeadLetterQueue(
      this,
      "failure_queue",
      `${props.functionName}-failures`,
      context.kmsKeyArn,
      props.tags,
      // Lambda's advice for a queue feeding a function: six of its timeouts, so a record is not received again
      // while a batch that took the function's whole timeout is still being retried.
      multiply(props.timeout, 6),
    );
    this.role = new FunctionRole(this, "role", props.role, {
      kmsKeyArn: context.kmsKeyArn,
      region: context.region,
      itemActions: DYNAMODB_ITEM_ACTIONS,
      itemResources: props.itemResources,
      logGroupArn: logGroup.arn,
      // Lambda sends the jobs it gives up on with this role; the mapping reads them back with it.
      failureDestinationArn: this.failureQueue.arn,
      sourceQueueArn: this.failureQueue.arn,
      // A run longer than one leg continues in a new invocation of this function (its alias), and only this one.
      workerFunctionArn: this.invokedArn,
    });
    this.function = createImageFunction(this, "function", {
      ...props.image,
      functionName: props.functionName,
      roleArn: this.role.role.arn,
      command: [IMAGE_HANDLERS.worker],
      memorySize: props.memorySize,
      timeout: props.timeout,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      logGroupName: logGroup.name,
      logLevel: props.logLevel,
      environment: props.environment,
      publish,
      dependsOn: [logGroup, ...this.role.policies],
    });
    this.version = new PublishedVersion(this, "alias", {
      function: this.function,
      publish,
      aliasName,
      invokedBy: "every caller of the worker",
    });
    // No dead-letter queue: a destination record carries the job and why it failed, and the worker reads
    // `requestPayload`; a dead-letter queue as well would deliver each failure twice, the second without it.
    // Per qualifier: the alias's, which is what every caller invokes.
    this.invokeConfig = new LambdaFunctionEventInvokeConfig(this, "invoke_config", {
      functionName: this.function.functionName,
      qualifier: this.version.qualifier,
      maximumRetryAttempts: props.maximumRetryAttempts,
      maximumEventAgeInSeconds: props.maximumEventAgeInSeconds,
      destinationConfig: { onFailure: { destination: this.failureQueue.arn } },
    });
    this.failureTrigger = new LambdaEventSourceMapping(this, "failure_trigger", {
      eventSourceArn: this.failureQueue.arn,
      functionName: this.version.targetArn,
      // Recording a failed run is a few writes: small batches, at most two at a time, so the failures of a
      // bad deployment do not take the concurrency that runs need.
      batchSize: 5,
      scalingConfig: { maximumConcurrency: 2 },
      // The worker answers with batchItemFailures: only the records it could not record come back.
      functionResponseTypes: ["ReportBatchItemFailures"],
      tags: props.tags,
    });
  }
}

/** WORKER_FUNCTION_NAME: the worker's alias (`<name>:<alias>`) with `publish`, its name otherwise. */
export function workerInvokedName(functionName: string, release: Release): string {
  return `${functionName}${aliasSuffix(release)}`;
}

/**
 * `:<alias>` with `publish`, "" without: appended to a name or ARN (never a template passed into a function,
 * which CDKTF renders wrongly).
 */
function aliasSuffix(release: Release): string {
  const { publish, aliasName } = release;
  if (typeof publish === "boolean" && isLiteral(aliasName)) return publish ? `:${aliasName}` : "";
  return Token.asString(Fn.conditional(publish, Fn.format(":%s", [aliasName]), ""));
}

/** `arn:<partition>:lambda:<region>:<account>:function:<name>`, unqualified. */
export function workerFunctionArn(context: Context, functionName: string): string {
  return `arn:${context.partition}:lambda:${context.region}:${context.accountId}:function:${functionName}`;
}

function multiply(value: number, factor: number): number {
  return isLiteral(value) ? value * factor : Token.asNumber(Op.mul(value, factor));
}
