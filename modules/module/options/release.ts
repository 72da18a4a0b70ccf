import { type OptionSpec, hcl, wholeNumberIn } from "../option-spec";
import { Token, propertyAccess } from "../../cdktf";
import { DEFAULTS } from "../../construct/props";
import { ALARM_THRESHOLDS } from "../../construct/alarms";
import {
  ALIAS_NAME_PATTERN,
  CANARY_WEIGHT_PERCENT,
  SNS_TOPIC_ARN_PATTERN,
  VERSION_NUMBER_PATTERN,
} from "../../construct/rules";

/** Releases and alarms: versions, aliases, the canary, provisioned concurrency, the alarms and their topic. */
export const RELEASE_OPTIONS = {
  publish: {
    prop: "publish",
    type: "bool",
    description:
      "Publish a version of every function (API, worker, stream, cleaner, API-key authorizer) on every change and point alias_name at it; every invoker then calls the alias: the HTTP API and its Lambda authorizer, the stream URL, the stream mapping, the recovery sweep, the worker's callers (needed for provisioned concurrency and canaries). false: everything invokes $LATEST",
    default: DEFAULTS.publish,
  },
  alias_name: {
    prop: "aliasName",
    type: "string",
    description: "Name of the alias on each function's published version (with publish)",
    default: DEFAULTS.aliasName,
    validation: [
      {
        condition: `can(regex(${hcl(ALIAS_NAME_PATTERN)}, var.alias_name))`,
        message: "Invalid alias_name: expected a letter, then up to 127 letters, digits, - or _.",
      },
    ],
  },
  stable_version: {
    prop: "stableVersion",
    type: "string",
    description:
      'The published version the API function\'s alias keeps, like "7" (lambda_function_version before the change): a rollback, or the stable side of a canary (canary_weight). null: the latest version, so every apply that publishes one moves the alias to it',
    default: null,
    validation: [
      {
        condition: `var.stable_version == null || can(regex(${hcl(VERSION_NUMBER_PATTERN)}, var.stable_version))`,
        message: 'Invalid stable_version: expected a published version number like "7".',
      },
      {
        condition: "var.stable_version == null || var.publish",
        message:
          "Invalid stable_version: expected none without publish (only an alias keeps a version).",
      },
    ],
  },
  canary_weight: {
    prop: "canaryWeight",
    type: "number",
    description: `Percent (${CANARY_WEIGHT_PERCENT.min} to ${CANARY_WEIGHT_PERCENT.max}) of the API function alias's invocations routed to the latest published version while the alias stays on stable_version: a weighted canary of what the last apply published (0: none)`,
    default: DEFAULTS.canaryWeight,
    validation: [
      {
        condition: wholeNumberIn("var.canary_weight", CANARY_WEIGHT_PERCENT),
        message: `Invalid canary_weight: expected a whole number from ${CANARY_WEIGHT_PERCENT.min} to ${CANARY_WEIGHT_PERCENT.max} percent.`,
      },
      {
        condition: "var.canary_weight == 0 || var.stable_version != null",
        message:
          "Invalid canary_weight: expected stable_version with it (the version the alias keeps while the rest goes to the latest).",
      },
    ],
  },
  image_uri_managed_externally: {
    moduleOnly:
      "a lifecycle setting: applyModuleToggles renders both variants of each function (module-toggles.ts)",
    type: "bool",
    description:
      "A pipeline owns the functions' image after creation (aws lambda update-function-code --publish, then update-alias; see the README): Terraform ignores changes of image_uri, so its plan stays empty. Switching it on an existing deployment moves the functions to other addresses (terraform state mv, see the README)",
    default: false,
  },
  provisioned_concurrent_executions: {
    prop: "provisionedConcurrentExecutions",
    type: "number",
    description:
      "Provisioned concurrency of the API function's alias: environments kept initialized, so users do not wait for cold starts (0: none; needs publish, at most reserved_concurrent_executions)",
    default: DEFAULTS.provisionedConcurrentExecutions,
    validation: [
      {
        condition:
          "var.provisioned_concurrent_executions >= 0 && floor(var.provisioned_concurrent_executions) == var.provisioned_concurrent_executions",
        message: "Invalid provisioned_concurrent_executions: expected a whole number, 0 or more.",
      },
      {
        condition: "var.provisioned_concurrent_executions == 0 || var.publish",
        message:
          "Invalid provisioned_concurrent_executions: expected 0 without publish (provisioned concurrency needs a published version).",
      },
      {
        condition: "var.provisioned_concurrent_executions <= var.reserved_concurrent_executions",
        message:
          "Invalid provisioned_concurrent_executions: expected at most reserved_concurrent_executions.",
      },
    ],
  },
  create_alarms: {
    prop: "createAlarms",
    type: "bool",
    description:
      "Create CloudWatch alarms: API 5xx rate and p99 latency, function errors, throttles and concurrency near the reserved limit, API function and cleaner duration near the timeout, the stream URL's 5xx rate, failed and timed-out runs, the cleaner's iterator age, the on-failure queues, DynamoDB throttles (thresholds in alarm_thresholds). Requires a topic for them to notify: create_alarm_topic = true or alarm_sns_topic_arn",
    default: false,
  },
  create_alarm_topic: {
    prop: "createAlarmTopic",
    type: "bool",
    description:
      "Create an SNS topic for the alarms, encrypted with a KMS key of its own that CloudWatch may use (subscribe to it yourself); or give alarm_sns_topic_arn",
    default: false,
    validation: [
      {
        condition: "!var.create_alarm_topic || var.create_alarms",
        message: "Invalid create_alarm_topic: expected create_alarms = true with it.",
      },
    ],
  },
  alarm_sns_topic_arn: {
    prop: "alarmSnsTopicArn",
    type: "string",
    description:
      "An existing standard SNS topic the alarms notify (if it is encrypted, its key must let cloudwatch.amazonaws.com use it)",
    default: null,
    validation: [
      {
        condition: `var.alarm_sns_topic_arn == null || can(regex(${hcl(SNS_TOPIC_ARN_PATTERN)}, var.alarm_sns_topic_arn))`,
        message: "Invalid alarm_sns_topic_arn: expected a standard SNS topic ARN.",
      },
      {
        condition:
          "var.alarm_sns_topic_arn == null || (var.create_alarms && !var.create_alarm_topic)",
        message:
          "Invalid alarm_sns_topic_arn: expected it with create_alarms = true and without create_alarm_topic.",
      },
      {
        // Here, not on create_alarms: create_alarm_topic's rule reads create_alarms, and validations may not
        // read each other in a cycle.
        condition:
          "!var.create_alarms || var.create_alarm_topic || var.alarm_sns_topic_arn != null",
        message:
          "Invalid alarm_sns_topic_arn: expected a topic for the alarms of create_alarms = true (this ARN, or create_alarm_topic = true): alarms without actions notify nobody.",
      },
    ],
  },
  alarm_thresholds: {
    prop: "alarmThresholds",
    value: (v) =>
      Object.fromEntries(
        Object.entries(ALARM_THRESHOLDS).map(([key, spec]) => [
          key,
          Token.asNumber(propertyAccess(v.alarm_thresholds!.value, [spec.variable])),
        ]),
      ),
    type: `object({ ${Object.values(ALARM_THRESHOLDS)
      .map((spec) => `${spec.variable} = optional(number, ${spec.default})`)
      .join(", ")} })`,
    description: `Alarm thresholds, each optional: ${Object.values(ALARM_THRESHOLDS)
      .map((spec) => `${spec.variable} (${spec.description}, default ${spec.default})`)
      .join("; ")}`,
    default: {},
    validation: [
      {
        condition: "alltrue([for value in values(var.alarm_thresholds) : value >= 0])",
        message: "Invalid alarm_thresholds: expected numbers, 0 or more.",
      },
    ],
  },
} satisfies Record<string, OptionSpec>;
