import { Construct } from "constructs";
import type { ITerraformDependable } from "../cdktf";
import { LambdaFunction } from "@cdktf/provider-aws/lib/lambda-function";
import { SqsQueue } from "@cdktf/provider-aws/lib/sqs-queue";
import type { Architecture } from "./rules";

export interface ImageFunctionProps {
  functionName: string;
  roleArn: string;
  imageUri: string;
  command: string[];
  entryPoint?: string[];
  architecture: Architecture;
  memorySize: number;
  timeout: number;
  reservedConcurrentExecutions: number;
  deadLetterQueueArn: string;
  kmsKeyArn: string;
  logGroupName: string;
  environment: Record<string, string>;
  tags: Record<string, string>;
  /** The log group and the role policy: the first invocation must find both. */
  dependsOn: ITerraformDependable[];
}

/**
 * A function from the container image, pinned by digest: traced, concurrency-capped, with a dead-letter queue,
 * its environment encrypted with the module's key and its logs in the module's log group.
 */
export function createImageFunction(
  scope: Construct,
  id: string,
  props: ImageFunctionProps,
): LambdaFunction {
  return new LambdaFunction(scope, id, {
    functionName: props.functionName,
    role: props.roleArn,
    packageType: "Image",
    imageUri: props.imageUri,
    imageConfig: { command: props.command, entryPoint: props.entryPoint },
    architectures: [props.architecture],
    memorySize: props.memorySize,
    timeout: props.timeout,
    reservedConcurrentExecutions: props.reservedConcurrentExecutions,
    tracingConfig: { mode: "Active" },
    deadLetterConfig: { targetArn: props.deadLetterQueueArn },
    kmsKeyArn: props.kmsKeyArn,
    environment: { variables: props.environment },
    loggingConfig: { logFormat: "Text", logGroup: props.logGroupName },
    tags: props.tags,
    dependsOn: props.dependsOn,
  });
}

/** Failed asynchronous invocations and stream batches land here, encrypted with the module's key. */
export function createDeadLetterQueue(
  scope: Construct,
  id: string,
  queueName: string,
  kmsKeyArn: string,
  tags: Record<string, string>,
): SqsQueue {
  return new SqsQueue(scope, id, {
    name: queueName,
    kmsMasterKeyId: kmsKeyArn,
    kmsDataKeyReusePeriodSeconds: 300,
    messageRetentionSeconds: 1209600,
    tags,
  });
}
