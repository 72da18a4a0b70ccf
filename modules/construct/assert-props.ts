import { InvalidConfigurationError } from "../../src/shared/errors";
import { ALARM_THRESHOLDS } from "./alarms";
import { assertCronSweep } from "./crons";
import { assertApiDomain } from "./domain";
import { assertStreamDomain } from "./stream-domain";
import type { Flag } from "./expressions";
import { DEFAULTS, type MemoryTableProps } from "./props";
import {
  ALIAS_NAME_PATTERN,
  ASYNC_EVENT_AGE_SECONDS,
  ASYNC_RETRY_ATTEMPTS,
  CANARY_WEIGHT_PERCENT,
  VERSION_NUMBER_PATTERN,
  assertCorsOrigins,
  assertEnvironment,
  assertGraphPolicyArns,
  assertGraphPolicyStatements,
  assertImageUri,
  assertLogRetention,
  assertName,
  assertRecoverySweepSchedule,
  assertSecrets,
  assertTimeout,
  assertVpc,
  assertWebhookHosts,
  assertWholeNumber,
  isLiteral,
  MAX_RUN_LEGS,
  API_KEY_CACHE_SECONDS,
  MEMORY_SIZE_MB,
  SNS_TOPIC_ARN_PATTERN,
  STREAM_TIMEOUT_SECONDS,
  WORKER_TIMEOUT_SECONDS,
} from "./rules";

/**
 * The construct's own checks of literal props, before it creates anything: what the HCL module's variable
 * validations refuse, refused the same way (the same rules of rules.ts, the same words) to a CDKTF user.
 */
export function assertProps(props: MemoryTableProps): void {
  assertName(props.name);
  assertImageUri(props.imageUri);
  if (props.timeout !== undefined) assertTimeout(props.timeout);
  assertWorker(props);
  if (props.logRetentionInDays !== undefined) assertLogRetention(props.logRetentionInDays);
  if (props.environment !== undefined) assertEnvironment(props.environment);
  assertSecrets(props.secrets, props.environment, props.secretsKmsKeyArns);
  assertGraphPolicyStatements(props.graphPolicyStatements);
  assertGraphPolicyArns(props.graphPolicyArns);
  if (props.corsAllowOrigins !== undefined) assertCorsOrigins(props.corsAllowOrigins);
  assertStream(props);
  assertKey(props);
  assertIssuer(props);
  assertVersions(props);
  assertAlarms(props);
  assertVpc(props.vpcSubnetIds, props.vpcSecurityGroupIds);
  assertApiDomain(props.apiDomainName, props.apiCertificateArn, props.apiDisableDefaultEndpoint);
  assertStreamDomain(props);
}

function assertWorker(props: MemoryTableProps): void {
  assertWholeNumber("worker_timeout", props.workerTimeout, WORKER_TIMEOUT_SECONDS, " seconds");
  assertWholeNumber("worker_memory_size", props.workerMemorySize, MEMORY_SIZE_MB, " MB");
  assertWholeNumber(
    "worker_reserved_concurrent_executions",
    props.workerReservedConcurrentExecutions,
    { min: 1 },
  );
  assertWholeNumber(
    "worker_maximum_retry_attempts",
    props.workerMaximumRetryAttempts,
    ASYNC_RETRY_ATTEMPTS,
  );
  assertWholeNumber(
    "worker_maximum_event_age_in_seconds",
    props.workerMaximumEventAgeInSeconds,
    ASYNC_EVENT_AGE_SECONDS,
    " seconds",
  );
  assertWholeNumber("max_run_legs", props.maxRunLegs, MAX_RUN_LEGS);
  assertWholeNumber("api_key_cache_seconds", props.apiKeyCacheSeconds, API_KEY_CACHE_SECONDS);
  assertRecoverySweepSchedule(props.recoverySweepSchedule);
  assertCronSweep(props.createCrons, props.recoverySweepSchedule);
  assertWebhookHosts(props.webhookAllowedHosts);
}

function assertStream(props: MemoryTableProps): void {
  assertWholeNumber("stream_timeout", props.streamTimeout, STREAM_TIMEOUT_SECONDS, " seconds");
  assertWholeNumber("stream_memory_size", props.streamMemorySize, MEMORY_SIZE_MB, " MB");
  assertWholeNumber(
    "stream_reserved_concurrent_executions",
    props.streamReservedConcurrentExecutions,
    { min: 1 },
  );
  if (props.streamCorsAllowOrigins !== undefined) {
    assertCorsOrigins(props.streamCorsAllowOrigins, "stream_cors_allow_origins");
  }
}

function assertKey(props: MemoryTableProps): void {
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
}

function assertIssuer(props: MemoryTableProps): void {
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
  // The stream function reads them comma-separated (JWT_AUDIENCE).
  const audiences = props.jwtAudience;
  if (audiences !== undefined && isLiteral(audiences)) {
    const joined = audiences.find((audience) => isLiteral(audience) && audience.includes(","));
    if (joined !== undefined) {
      throw new InvalidConfigurationError(
        "jwt_audience",
        `expected audiences without commas, got ${JSON.stringify(joined)}`,
      );
    }
  }
}

function assertVersions(props: MemoryTableProps): void {
  const concurrency = props.provisionedConcurrentExecutions;
  if (concurrency !== undefined && isLiteral(concurrency)) {
    if (!Number.isInteger(concurrency) || concurrency < 0) {
      throw new InvalidConfigurationError(
        "provisioned_concurrent_executions",
        `expected a whole number, 0 or more, got ${concurrency}`,
      );
    }
    if (concurrency > 0 && props.publish === false) {
      throw new InvalidConfigurationError(
        "provisioned_concurrent_executions",
        `expected 0 without publish (provisioned concurrency needs a published version), got ${concurrency}`,
      );
    }
    const reserved = props.reservedConcurrentExecutions ?? DEFAULTS.reservedConcurrentExecutions;
    if (isLiteral(reserved) && concurrency > reserved) {
      throw new InvalidConfigurationError(
        "provisioned_concurrent_executions",
        `expected at most reserved_concurrent_executions (${reserved}), got ${concurrency}`,
      );
    }
  }
  assertCanary(props);
  const alias = props.aliasName;
  if (alias !== undefined && isLiteral(alias) && !new RegExp(ALIAS_NAME_PATTERN).test(alias)) {
    throw new InvalidConfigurationError(
      "alias_name",
      `expected a letter, then up to 127 letters, digits, - or _, got ${JSON.stringify(alias)}`,
    );
  }
}

/** A canary needs the version it keeps (`stableVersion`), and both need published versions. */
function assertCanary(props: MemoryTableProps): void {
  assertWholeNumber("canary_weight", props.canaryWeight, CANARY_WEIGHT_PERCENT, " percent");
  const stable = props.stableVersion;
  if (
    stable !== undefined &&
    isLiteral(stable) &&
    !new RegExp(VERSION_NUMBER_PATTERN).test(stable)
  ) {
    throw new InvalidConfigurationError(
      "stable_version",
      `expected a published version number like "7", got ${JSON.stringify(stable)}`,
    );
  }
  const weight = props.canaryWeight;
  if (weight !== undefined && isLiteral(weight) && weight > 0 && stable === undefined) {
    throw new InvalidConfigurationError(
      "canary_weight",
      `expected 0 without stable_version (the version the alias keeps while ${weight}% go to the latest), got ${weight}`,
    );
  }
  if ((props.publish ?? DEFAULTS.publish) === false && stable !== undefined) {
    throw new InvalidConfigurationError(
      "stable_version",
      `expected none without publish (only an alias keeps a version), got ${JSON.stringify(stable)}`,
    );
  }
}

function assertAlarms(props: MemoryTableProps): void {
  const topic = props.alarmSnsTopicArn;
  if (topic !== undefined && isLiteral(topic) && !new RegExp(SNS_TOPIC_ARN_PATTERN).test(topic)) {
    throw new InvalidConfigurationError(
      "alarm_sns_topic_arn",
      `expected a standard SNS topic ARN, got ${JSON.stringify(topic)}`,
    );
  }
  if (props.createAlarmTopic === true && topic !== undefined) {
    throw new InvalidConfigurationError(
      "alarm_sns_topic_arn",
      `expected none with create_alarm_topic (the alarms notify the created topic), got ${JSON.stringify(topic)}`,
    );
  }
  if (props.createAlarms === true && props.createAlarmTopic !== true && topic === undefined) {
    throw new InvalidConfigurationError(
      "create_alarms",
      "expected an alarm topic with it (create_alarm_topic = true, or alarm_sns_topic_arn): alarms without actions notify nobody, got none",
    );
  }
  const alarmsOff = props.createAlarms === undefined || props.createAlarms === false;
  if (alarmsOff && (props.createAlarmTopic === true || topic !== undefined)) {
    throw new InvalidConfigurationError(
      "create_alarms",
      "expected true with an alarm topic (create_alarm_topic or alarm_sns_topic_arn), got false",
    );
  }
  for (const [key, value] of Object.entries(props.alarmThresholds ?? {})) {
    if (!(key in ALARM_THRESHOLDS)) {
      throw new InvalidConfigurationError(
        "alarm_thresholds",
        `expected keys among ${Object.keys(ALARM_THRESHOLDS).join(", ")}, got ${JSON.stringify(key)}`,
      );
    }
    if (isLiteral(value) && !(typeof value === "number" && value >= 0)) {
      throw new InvalidConfigurationError(
        "alarm_thresholds",
        `expected ${key} to be a number, 0 or more, got ${JSON.stringify(value)}`,
      );
    }
  }
}
