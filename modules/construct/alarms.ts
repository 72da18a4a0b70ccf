import { Construct } from "constructs";
import { Fn, Token } from "../cdktf";
import { CloudwatchLogMetricFilter } from "@cdktf/provider-aws/lib/cloudwatch-log-metric-filter";
import { CloudwatchMetricAlarm } from "@cdktf/provider-aws/lib/cloudwatch-metric-alarm";
import { KmsKey } from "@cdktf/provider-aws/lib/kms-key";
import { LambdaFunction } from "@cdktf/provider-aws/lib/lambda-function";
import { SnsTopic } from "@cdktf/provider-aws/lib/sns-topic";
import { SnsTopicPolicy } from "@cdktf/provider-aws/lib/sns-topic-policy";
import { TABLE_DEFINITION } from "../../src/table/definition";
import { attributeOf, both, countIf, Flag, milliseconds, percentOf } from "./expressions";
import type { GraphFunction } from "./graph";
import type { Context } from "./props";
import { isLiteral } from "./rules";
import type { AlarmThresholds } from "./alarm-thresholds";

// The thresholds are a table of their own; re-exported here, where the alarms that read them are.
export { ALARM_THRESHOLDS, type AlarmThresholds } from "./alarm-thresholds";

/**
 * The fields of the runtime's metric line (src/runtime/observability.ts) the run alarms count. Metric filters on
 * each function's own log group count them, so every function, and every deployment of the module in one
 * account, has its own metric: the line's metrics are per assistant and shared by every deployment.
 */
export const RUN_OUTCOME_FIELDS = {
  runsFailed: "RunsFailed",
  runsTimedOut: "RunsTimedOut",
} as const;

/** Namespace of a function's run metrics (derived by the metric filters from its log group). */
export const runMetricsNamespace = (functionName: string): string => `MemoryTable/${functionName}`;

const PERIOD_SECONDS = 300;

export interface FunctionLimits {
  timeout: number;
  reservedConcurrentExecutions: number;
}

/** Id of the alarm that exists only with provisioned concurrency. */
export const PROVISIONED_SPILLOVER_ALARM = "function_provisioned_spillover";

/** The functions whose duration alarms: the others run to their deadline by design. */
export const DURATION_ALARM_FUNCTIONS = ["function", "cleaner_function"];

export interface AlarmsProps {
  context: Context;
  create: Flag;
  createTopic: Flag;
  topicArn?: string;
  thresholds: AlarmThresholds;
  kmsKeyDeletionWindowInDays: number;
  apiId: string;
  graphFunctions: GraphFunction[];
  cleanerFunction: LambdaFunction;
  /** Timeout (seconds) and reserved concurrency of each function, by its id (`function`, `cleaner_function`...). */
  functionLimits: Record<string, FunctionLimits>;
  deadLetterQueueName: string;
  workerFailureQueueName: string;
  /** The API function's alias with provisioned concurrency (`enabled`: publish and a concurrency of 1 or more). */
  provisionedAlias: { enabled: Flag; aliasName: string };
  tableName: string;
  tags: Record<string, string>;
}

/**
 * Optional CloudWatch alarms on what breaks in production, notifying an SNS topic (brought, or created and
 * encrypted with a key of its own whose policy lets CloudWatch publish). Every alarm is named `<name>-...`.
 */
export class Alarms extends Construct {
  readonly topicKey: KmsKey;
  readonly topic: SnsTopic;
  readonly topicPolicy: SnsTopicPolicy;
  readonly alarms: Record<string, CloudwatchMetricAlarm> = {};
  readonly metricFilters: CloudwatchLogMetricFilter[] = [];
  /** The topic the alarms notify (created or brought), null without one. */
  readonly topicArn: string;

  private readonly count: number;
  private readonly actions: string[];

  constructor(
    scope: Construct,
    id: string,
    private readonly props: AlarmsProps,
  ) {
    super(scope, id);
    const { context } = props;
    this.count = countIf(props.create);
    const topicCount = countIf(both(props.create, props.createTopic));
    // A key of its own: CloudWatch needs kms:GenerateDataKey on the topic's key to publish, and granting that
    // on the module's key (or asking it of a brought one) would reach far beyond the alarms.
    this.topicKey = new KmsKey(this, "topic_key", {
      count: topicCount,
      description: `Memory Table ${context.name}: alarm notifications`,
      enableKeyRotation: true,
      deletionWindowInDays: props.kmsKeyDeletionWindowInDays,
      policy: Fn.jsonencode({
        Version: "2012-10-17",
        Statement: [
          {
            Sid: "AccountAdministration",
            Effect: "Allow",
            Principal: { AWS: `arn:${context.partition}:iam::${context.accountId}:root` },
            Action: "kms:*",
            Resource: "*",
          },
          {
            Sid: "CloudWatchAlarmsPublish",
            Effect: "Allow",
            Principal: { Service: "cloudwatch.amazonaws.com" },
            Action: ["kms:Decrypt", "kms:GenerateDataKey*"],
            Resource: "*",
          },
        ],
      }),
      tags: props.tags,
    });
    this.topic = new SnsTopic(this, "topic", {
      count: topicCount,
      name: `${context.name}-alarms`,
      kmsMasterKeyId: attributeOf(this.topicKey, "arn"),
      tags: props.tags,
    });
    const createdTopicArn = attributeOf(this.topic, "arn");
    this.topicPolicy = new SnsTopicPolicy(this, "topic_policy", {
      count: topicCount,
      arn: createdTopicArn,
      policy: Fn.jsonencode({
        Version: "2012-10-17",
        Statement: [
          {
            // Only this module's alarms, in this account.
            Sid: "AlarmsOfThisModule",
            Effect: "Allow",
            Principal: { Service: "cloudwatch.amazonaws.com" },
            Action: "sns:Publish",
            Resource: createdTopicArn,
            Condition: {
              ArnLike: {
                "aws:SourceArn": `arn:${context.partition}:cloudwatch:${context.region}:${context.accountId}:alarm:${context.name}-*`,
              },
              StringEquals: { "aws:SourceAccount": context.accountId },
            },
          },
        ],
      }),
    });
    this.actions = topicActions(createdTopicArn, props.topicArn);
    this.topicArn = Token.asString(Fn.one(this.actions));

    this.defineAlarms();
  }

  private defineAlarms(): void {
    const { props } = this;
    const { thresholds, context } = props;
    this.alarm("api_5xx_rate", {
      name: `${context.name}-api-5xx-rate`,
      description: `HTTP API 5xx responses at or above ${thresholds.api5xxRatePercent} % of requests`,
      threshold: thresholds.api5xxRatePercent,
      metricQuery: [
        metric("errors", "AWS/ApiGateway", "5xx", "Sum", { ApiId: props.apiId }),
        metric("requests", "AWS/ApiGateway", "Count", "Sum", { ApiId: props.apiId }),
        {
          id: "rate",
          expression: "IF(requests > 0, 100 * FILL(errors, 0) / requests, 0)",
          label: "5xx responses (% of requests)",
          returnData: true,
        },
      ],
    });
    const functions: { id: string; functionName: string; create: Flag }[] = [
      ...props.graphFunctions.map(({ id, functionName, create }) => ({ id, functionName, create })),
      {
        id: "cleaner_function",
        functionName: props.cleanerFunction.functionName,
        create: true,
      },
    ];
    for (const { id, functionName, create } of functions) {
      const count = this.countWith(create);
      this.lambdaAlarm(
        `${id}_errors`,
        functionName,
        count,
        "Errors",
        thresholds.functionErrors,
        "errors",
      );
      this.lambdaAlarm(
        `${id}_throttles`,
        functionName,
        count,
        "Throttles",
        thresholds.functionThrottles,
        "throttles",
      );
    }
    for (const { id, functionName, create } of functions) {
      const count = this.countWith(create);
      const limits = props.functionLimits[id]!;
      this.alarm(
        `${id}_concurrency`,
        {
          name: `${functionName}-concurrency`,
          description: `Concurrent executions of the function at or above ${thresholds.functionConcurrencyPercentOfReserved} % of its reserved concurrency (beyond it, invocations are throttled)`,
          threshold: percentOf(
            limits.reservedConcurrentExecutions,
            thresholds.functionConcurrencyPercentOfReserved,
          ),
          namespace: "AWS/Lambda",
          metricName: "ConcurrentExecutions",
          statistic: "Maximum",
          dimensions: { FunctionName: functionName },
        },
        count,
      );
      if (!DURATION_ALARM_FUNCTIONS.includes(id)) continue;
      this.alarm(
        `${id}_duration`,
        {
          name: `${functionName}-duration`,
          description: `Longest invocation of the function at or above ${thresholds.functionDurationPercentOfTimeout} % of its timeout (a timeout next)`,
          // Duration is in milliseconds.
          threshold: percentOf(
            milliseconds(limits.timeout),
            thresholds.functionDurationPercentOfTimeout,
          ),
          namespace: "AWS/Lambda",
          metricName: "Duration",
          statistic: "Maximum",
          dimensions: { FunctionName: functionName },
        },
        count,
      );
    }
    const provisioned = props.provisionedAlias;
    if (provisioned.enabled !== false) {
      const apiFunction = props.graphFunctions.find((graph) => graph.id === "function")!;
      this.alarm(
        PROVISIONED_SPILLOVER_ALARM,
        {
          name: `${apiFunction.functionName}-provisioned-spillover`,
          description: `Invocations of the alias beyond its provisioned concurrency at or above ${thresholds.provisionedConcurrencySpillover} in 5 minutes (raise provisioned_concurrent_executions)`,
          threshold: thresholds.provisionedConcurrencySpillover,
          namespace: "AWS/Lambda",
          metricName: "ProvisionedConcurrencySpilloverInvocations",
          statistic: "Sum",
          dimensions: {
            FunctionName: apiFunction.functionName,
            Resource: `${apiFunction.functionName}:${provisioned.aliasName}`,
          },
        },
        this.countWith(provisioned.enabled),
      );
    }
    this.alarm("api_latency", {
      name: `${context.name}-api-latency`,
      description: `99th percentile of the HTTP API's latency at or above ${thresholds.apiLatencyP99Ms} ms`,
      threshold: thresholds.apiLatencyP99Ms,
      namespace: "AWS/ApiGateway",
      metricName: "Latency",
      extendedStatistic: "p99",
      dimensions: { ApiId: props.apiId },
    });
    const stream = props.graphFunctions.find((graph) => graph.id === "stream_function");
    if (stream !== undefined) {
      const url = { FunctionName: stream.functionName };
      this.alarm(
        "stream_function_url_5xx_rate",
        {
          name: `${stream.functionName}-url-5xx-rate`,
          description: `Function URL 5xx responses at or above ${thresholds.streamUrl5xxRatePercent} % of its requests`,
          threshold: thresholds.streamUrl5xxRatePercent,
          metricQuery: [
            metric("errors", "AWS/Lambda", "Url5xxCount", "Sum", url),
            metric("requests", "AWS/Lambda", "UrlRequestCount", "Sum", url),
            {
              id: "rate",
              expression: "IF(requests > 0, 100 * FILL(errors, 0) / requests, 0)",
              label: "5xx responses (% of URL requests)",
              returnData: true,
            },
          ],
        },
        this.countWith(stream.create),
      );
    }
    for (const graph of props.graphFunctions) {
      this.runAlarm(graph, "runsFailed", "runs-failed", thresholds.runsFailed);
      this.runAlarm(graph, "runsTimedOut", "runs-timed-out", thresholds.runsTimedOut);
    }
    this.alarm("cleaner_iterator_age", {
      name: `${context.name}-cleaner-iterator-age`,
      description:
        "The cleaner lags behind the table's stream (records expire from the stream after 24 hours, and their threads' items are then never removed)",
      // IteratorAge is in milliseconds.
      threshold: milliseconds(thresholds.cleanerIteratorAgeSeconds),
      namespace: "AWS/Lambda",
      metricName: "IteratorAge",
      statistic: "Maximum",
      dimensions: { FunctionName: props.cleanerFunction.functionName },
    });
    this.alarm("dead_letter_queue", {
      name: `${context.name}-dead-letter-queue`,
      description:
        "Stream batches the cleaner gave up on wait in the on-failure destination: their threads' items are not removed",
      threshold: thresholds.deadLetterMessages,
      namespace: "AWS/SQS",
      metricName: "ApproximateNumberOfMessagesVisible",
      statistic: "Maximum",
      dimensions: { QueueName: props.deadLetterQueueName },
    });
    // The worker takes each message off its failure queue within seconds, so the queue's depth says little:
    // what arrives counts the jobs Lambda gave up on, and an old message one the worker cannot record.
    this.alarm("worker_failed_jobs", {
      name: `${context.name}-worker-failed-jobs`,
      description:
        "Lambda gave up on background-run jobs after its retries: their runs are recorded as failed",
      threshold: thresholds.workerFailedJobs,
      namespace: "AWS/SQS",
      metricName: "NumberOfMessagesSent",
      statistic: "Sum",
      dimensions: { QueueName: props.workerFailureQueueName },
    });
    this.alarm("worker_failure_queue_age", {
      name: `${context.name}-worker-failure-queue-age`,
      description:
        "A failed background-run job waits in the worker's failure queue: the worker cannot record its run as failed (see its logs)",
      threshold: thresholds.workerFailureQueueAgeSeconds,
      namespace: "AWS/SQS",
      metricName: "ApproximateAgeOfOldestMessage",
      statistic: "Maximum",
      dimensions: { QueueName: props.workerFailureQueueName },
    });
    const tableMetrics = [
      { TableName: props.tableName },
      ...TABLE_DEFINITION.globalSecondaryIndexes.map((index) => ({
        TableName: props.tableName,
        GlobalSecondaryIndexName: index.name,
      })),
    ].flatMap((dimensions, index) => [
      metric(`read${index}`, "AWS/DynamoDB", "ReadThrottleEvents", "Sum", dimensions),
      metric(`write${index}`, "AWS/DynamoDB", "WriteThrottleEvents", "Sum", dimensions),
    ]);
    this.alarm("dynamodb_throttles", {
      name: `${context.name}-dynamodb-throttles`,
      description:
        "Throttled requests on the table and its indexes (the SDK retries them; a burst slows runs)",
      threshold: thresholds.dynamodbThrottles,
      metricQuery: [
        ...tableMetrics,
        {
          id: "throttles",
          // DynamoDB reports throttle events only when there are some: a missing series counts as 0.
          expression: `SUM([${tableMetrics.map((query) => `FILL(${query.id}, 0)`).join(", ")}])`,
          label: "Throttled requests",
          returnData: true,
        },
      ],
    });
  }

  /** The alarms' count, for what exists only with its toggle (the stream function's) too. */
  private countWith(create: Flag): number {
    return create === true ? this.count : countIf(both(this.props.create, create));
  }

  private lambdaAlarm(
    id: string,
    functionName: string,
    count: number,
    metricName: string,
    threshold: number,
    suffix: string,
  ): void {
    this.alarm(
      id,
      {
        name: `${functionName}-${suffix}`,
        description: `${metricName} of the function at or above ${threshold} in 5 minutes`,
        threshold,
        namespace: "AWS/Lambda",
        metricName,
        statistic: "Sum",
        dimensions: { FunctionName: functionName },
      },
      count,
    );
  }

  /** A metric filter counting one run outcome in the function's log group, and its alarm. */
  private runAlarm(
    graph: GraphFunction,
    outcome: keyof typeof RUN_OUTCOME_FIELDS,
    suffix: string,
    threshold: number,
  ): void {
    const field = RUN_OUTCOME_FIELDS[outcome];
    const fnName = graph.functionName;
    const count = this.countWith(graph.create);
    this.metricFilters.push(
      new CloudwatchLogMetricFilter(this, `${graph.id}_${snake(suffix)}_filter`, {
        count,
        name: `${fnName}-${suffix}`,
        logGroupName: graph.logGroupName,
        pattern: `{ $.${field} = 1 }`,
        metricTransformation: {
          name: field,
          namespace: runMetricsNamespace(fnName),
          value: "1",
          unit: "Count",
        },
      }),
    );
    this.alarm(
      `${graph.id}_${snake(suffix)}`,
      {
        name: `${fnName}-${suffix}`,
        description: `${field} of the function at or above ${threshold} in 5 minutes`,
        threshold,
        namespace: runMetricsNamespace(fnName),
        metricName: field,
        statistic: "Sum",
      },
      count,
    );
  }

  private alarm(id: string, spec: AlarmSpec, count = this.count): void {
    const { metricQuery, name, description, ...single } = spec;
    this.alarms[id] = new CloudwatchMetricAlarm(this, id, {
      count,
      alarmName: name,
      alarmDescription: description,
      comparisonOperator: "GreaterThanOrEqualToThreshold",
      evaluationPeriods: 1,
      ...(metricQuery === undefined ? { ...single, period: PERIOD_SECONDS } : { metricQuery }),
      threshold: spec.threshold,
      // No data is no incident (no traffic, an empty queue).
      treatMissingData: "notBreaching",
      alarmActions: this.actions,
      okActions: this.actions,
      tags: this.props.tags,
    });
  }
}

interface AlarmSpec {
  name: string;
  description: string;
  threshold: number;
  namespace?: string;
  metricName?: string;
  statistic?: string;
  extendedStatistic?: string;
  dimensions?: Record<string, string>;
  metricQuery?: MetricQuery[];
}

interface MetricQuery {
  id: string;
  expression?: string;
  label?: string;
  returnData?: boolean;
  metric?: {
    namespace: string;
    metricName: string;
    stat: string;
    period: number;
    dimensions: Record<string, string>;
  };
}

function metric(
  id: string,
  namespace: string,
  metricName: string,
  stat: string,
  dimensions: Record<string, string>,
): MetricQuery {
  return { id, metric: { namespace, metricName, stat, period: PERIOD_SECONDS, dimensions } };
}

/** The alarms' actions: the created topic or the brought one (the module refuses both), or none. */
function topicActions(createdTopicArn: string, broughtTopicArn: string | undefined): string[] {
  if (broughtTopicArn !== undefined && isLiteral(broughtTopicArn)) return [broughtTopicArn];
  return Token.asList(
    Fn.compact(
      broughtTopicArn === undefined ? [createdTopicArn] : [createdTopicArn, broughtTopicArn],
    ),
  );
}

const snake = (text: string): string => text.replace(/-/g, "_");
