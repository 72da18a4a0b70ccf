import type { Construct } from "constructs";
import { Fn, Op, TerraformOutput, type TerraformVariable } from "../cdktf";
import { PROVISIONED_SPILLOVER_ALARM } from "../construct/alarms";
import { attributeOf } from "../construct/expressions";
import type { MemoryTable } from "../construct/memory-table";
import { STREAM_URL_INVOKE_STATEMENT_ID } from "../construct/stream";
import { MODULE_VERSION } from "../version";
import type { OptionName } from "./options";

/**
 * The module's outputs, terraform-aws-modules style (`<resource>_<attribute>`), each with its description (the
 * README's outputs table): what the construct created, null for what it did not.
 */
export function declareOutputs(
  scope: Construct,
  m: MemoryTable,
  v: Record<OptionName, TerraformVariable>,
): void {
  const table = m.table;
  const api = m.httpApi;
  const version = m.apiVersion;
  // Always there in the module: its variables are references, decided at plan.
  const domain = m.apiDomain!;
  const streamDomain = m.streamDomain!;
  // The stream function's alarms only with it: without, their ARNs would be nulls in the map.
  // And the provisioned-concurrency alarm only with provisioned concurrency.
  const group = (id: string) =>
    id.startsWith("stream_function_")
      ? "stream"
      : id === PROVISIONED_SPILLOVER_ALARM
        ? "provisioned"
        : "always";
  const alarmArns = (kind: string) =>
    Object.fromEntries(
      Object.entries(m.alarms.alarms)
        .filter(([id]) => group(id) === kind)
        .map(([id, alarm]) => [id, attributeOf(alarm, "arn")]),
    );
  const alarms = Fn.merge([
    alarmArns("always"),
    Fn.conditional(v.create_stream_function.value, alarmArns("stream"), {}),
    Fn.conditional(
      Op.and(v.publish.value, Op.gte(v.provisioned_concurrent_executions.value, 1)),
      alarmArns("provisioned"),
      {},
    ),
  ]);
  const outputs: Record<string, [unknown, string]> = {
    module_version: [
      MODULE_VERSION,
      "Release of this module (semantic version; the git tag is v<version>, see CHANGELOG.md)",
    ],
    dynamodb_table_name: [table.name, "Name of the checkpoint table"],
    dynamodb_table_arn: [table.arn, "ARN of the checkpoint table"],
    dynamodb_table_stream_arn: [table.streamArn, "ARN of the table's stream (read by the cleaner)"],
    lambda_function_name: [m.apiFunction.functionName, "Name of the API function"],
    lambda_function_arn: [m.apiFunction.arn, "ARN of the API function"],
    lambda_function_invoke_arn: [
      m.apiFunction.invokeArn,
      "Invoke ARN of the API function's $LATEST (the API invokes lambda_alias_invoke_arn with publish)",
    ],
    lambda_function_qualified_arn: [
      m.apiFunction.qualifiedArn,
      "ARN of the API function with its version",
    ],
    lambda_function_version: [
      m.apiFunction.version,
      "Latest published version of the API function ($LATEST without publish)",
    ],
    lambda_alias_name: [version.aliasName, "Alias the API invokes (null without publish)"],
    lambda_alias_arn: [version.aliasArn, "ARN of the alias (null without publish)"],
    lambda_alias_invoke_arn: [
      attributeOf(version.alias, "invoke_arn"),
      "Invoke ARN of the alias (null without publish)",
    ],
    lambda_alias_function_version: [
      attributeOf(version.alias, "function_version"),
      "Version the API function's alias points to (stable_version during a canary; null without publish)",
    ],
    worker_alias_arn: [
      m.worker.version.aliasArn,
      "ARN of the worker's alias, which its callers invoke (null without publish)",
    ],
    stream_alias_arn: [
      m.stream.version.aliasArn,
      "ARN of the stream function's alias, which its URL serves (null without publish or create_stream_function)",
    ],
    cleaner_alias_arn: [
      m.cleanerVersion.aliasArn,
      "ARN of the cleaner's alias, which the stream mapping invokes (null without publish)",
    ],
    authorizer_alias_arn: [
      m.requestAuthorizer.version.aliasArn,
      "ARN of the API-key authorizer's alias, which the HTTP API's Lambda authorizer invokes (null without publish or enable_api_keys)",
    ],
    cleaner_function_name: [
      m.cleanerFunction.functionName,
      "Name of the expired-thread cleaner function",
    ],
    cleaner_function_arn: [m.cleanerFunction.arn, "ARN of the expired-thread cleaner function"],
    cleaner_event_source_mapping_uuid: [
      m.cleanerTrigger.uuid,
      "UUID of the stream's event source mapping that feeds the cleaner",
    ],
    worker_function_name: [
      m.worker.function.functionName,
      "Name of the background-run worker function (the API function's WORKER_FUNCTION_NAME)",
    ],
    worker_function_arn: [m.worker.function.arn, "ARN of the background-run worker function"],
    worker_role_name: [m.worker.role.role.name, "Name of the worker's execution role"],
    worker_role_arn: [m.worker.role.role.arn, "ARN of the worker's execution role"],
    worker_log_group_name: [m.logGroups.worker.name, "Log group of the worker function"],
    worker_log_group_arn: [m.logGroups.worker.arn, "ARN of the worker's log group"],
    worker_failure_queue_name: [
      m.worker.failureQueue.name,
      "Name of the worker's failure queue: the jobs Lambda gave up on, which the worker records as failed runs",
    ],
    worker_failure_queue_arn: [m.worker.failureQueue.arn, "ARN of the worker's failure queue"],
    worker_failure_queue_url: [m.worker.failureQueue.url, "URL of the worker's failure queue"],
    recovery_sweep_rule_name: [
      attributeOf(m.recoverySweep.rule, "name"),
      "Name of the EventBridge rule that invokes the worker's recovery sweep (null without recovery_sweep_schedule)",
    ],
    recovery_sweep_rule_arn: [
      m.recoverySweep.ruleArn,
      "ARN of the EventBridge rule that invokes the worker's recovery sweep (null without recovery_sweep_schedule)",
    ],
    stream_url: [
      m.stream.functionUrl,
      "URL of the stream function's function URL (https://<id>.lambda-url.<region>.on.aws/): the whole API with streamed Server-Sent Events and runs up to stream_timeout, for the LangGraph SDK's apiUrl (null without create_stream_function)",
    ],
    stream_domain_url: [
      streamDomain.url,
      "https://<stream_domain_name>, the stream function's custom domain, for the LangGraph SDK's apiUrl (null without stream_domain_name)",
    ],
    stream_cloudfront_distribution_id: [
      streamDomain.distributionId,
      "ID of the stream domain's CloudFront distribution (null without stream_domain_name)",
    ],
    stream_cloudfront_distribution_arn: [
      streamDomain.distributionArn,
      "ARN of the stream domain's CloudFront distribution (null without stream_domain_name)",
    ],
    stream_cloudfront_distribution_domain_name: [
      streamDomain.targetDomainName,
      "Domain name of that distribution (<id>.cloudfront.net), what your DNS record for stream_domain_name points at: an alias (A/AAAA) or CNAME record (null without stream_domain_name)",
    ],
    stream_cloudfront_distribution_hosted_zone_id: [
      streamDomain.hostedZoneId,
      "Route 53 hosted zone of that distribution, for an alias record (null without stream_domain_name)",
    ],
    stream_url_invoke_permission_command: [
      Fn.conditional(
        Op.and(v.create_stream_function.value, Op.not(v.create_stream_url_invoke_permission.value)),
        `aws lambda add-permission --function-name ${m.stream.version.qualifiedName} --statement-id ${STREAM_URL_INVOKE_STATEMENT_ID} --action lambda:InvokeFunction --principal '*' --invoked-via-function-url`,
        null,
      ),
      "With create_stream_url_invoke_permission = false: the AWS CLI command (v2.31.x or later) that adds the stream URL's second statement once, after apply (null otherwise). Terraform never removes it: the module's permissions manage their own statement ids only",
    ],
    stream_function_name: [
      m.stream.functionName,
      "Name of the stream function (null without create_stream_function)",
    ],
    stream_function_arn: [
      m.stream.functionArn,
      "ARN of the stream function (null without create_stream_function)",
    ],
    stream_role_name: [
      m.stream.role.roleName,
      "Name of the stream function's execution role (null without create_stream_function)",
    ],
    stream_role_arn: [
      m.stream.role.roleArn,
      "ARN of the stream function's execution role (null without create_stream_function)",
    ],
    stream_log_group_name: [
      attributeOf(m.logGroups.stream, "name"),
      "Log group of the stream function (null without create_stream_function)",
    ],
    stream_log_group_arn: [
      attributeOf(m.logGroups.stream, "arn"),
      "ARN of the stream function's log group (null without create_stream_function)",
    ],
    lambda_role_name: [m.functionRole.role.name, "Name of the API function's execution role"],
    lambda_role_arn: [m.functionRole.role.arn, "ARN of the API function's execution role"],
    cleaner_role_name: [m.cleanerRole.role.name, "Name of the cleaner's execution role"],
    cleaner_role_arn: [m.cleanerRole.role.arn, "ARN of the cleaner's execution role"],
    tenant_role_arn: [
      m.tenantRole.roleArn,
      "ARN of the role for tenant-scoped credentials (null unless create_tenant_role; the bundled handler does not assume it)",
    ],
    kms_key_arn: [m.kmsKeyArn, "ARN of the KMS key every resource is encrypted with"],
    kms_key_id: [
      Fn.element(Fn.split("/", m.kmsKeyArn), 1),
      "ID of the KMS key every resource is encrypted with",
    ],
    kms_key_alias: [
      m.key.aliasName,
      "Alias of the created KMS key (null when kms_key_arn is brought)",
    ],
    api_id: [api.api.id, "ID of the HTTP API"],
    api_arn: [api.api.arn, "ARN of the HTTP API"],
    api_endpoint: [
      api.api.apiEndpoint,
      "Default endpoint of the HTTP API (https://<id>.execute-api.<region>.amazonaws.com); with api_disable_default_endpoint it refuses every request, and api_domain_url is the API's URL",
    ],
    api_execution_arn: [api.api.executionArn, "Execution ARN of the HTTP API"],
    api_domain_url: [
      domain.url,
      "https://<api_domain_name>, the API's custom domain (null without api_domain_name)",
    ],
    api_domain_name_target_domain_name: [
      domain.targetDomainName,
      "Target of the API's custom domain, what your DNS record points at: an alias (A/AAAA) or CNAME record (null without api_domain_name)",
    ],
    api_domain_name_hosted_zone_id: [
      domain.hostedZoneId,
      "Route 53 hosted zone of that target, for an alias record (null without api_domain_name)",
    ],
    stage_id: [api.stage.id, "ID of the $default stage"],
    stage_arn: [api.stage.arn, "ARN of the $default stage"],
    stage_invoke_url: [
      api.stage.invokeUrl,
      "Invoke URL of the $default stage, on the default endpoint (refused with api_disable_default_endpoint)",
    ],
    authorizer_id: [api.authorizer.id, "ID of the JWT authorizer"],
    lambda_log_group_name: [m.logGroups.api.name, "Log group of the API function"],
    lambda_log_group_arn: [m.logGroups.api.arn, "ARN of the API function's log group"],
    cleaner_log_group_name: [m.logGroups.cleaner.name, "Log group of the cleaner function"],
    cleaner_log_group_arn: [m.logGroups.cleaner.arn, "ARN of the cleaner's log group"],
    access_log_group_name: [m.logGroups.access.name, "Log group of the API access logs"],
    access_log_group_arn: [m.logGroups.access.arn, "ARN of the API access log group"],
    cognito_user_pool_id: [
      m.userPool.userPoolId,
      "ID of the Cognito user pool (null with jwt_issuer)",
    ],
    cognito_user_pool_arn: [
      m.userPool.userPoolArn,
      "ARN of the Cognito user pool (null with jwt_issuer)",
    ],
    cognito_user_pool_client_id: [
      m.userPool.clientId,
      "ID of the app client (null with jwt_issuer)",
    ],
    jwt_issuer: [api.authorizer.jwtConfiguration.issuer, "Issuer the JWT authorizer trusts"],
    dead_letter_queue_arn: [
      m.deadLetterQueue.arn,
      "ARN of the SQS queue the cleaner's stream mapping sends the batches it gives up on to",
    ],
    dead_letter_queue_name: [m.deadLetterQueue.name, "Name of that queue"],
    dead_letter_queue_url: [m.deadLetterQueue.url, "URL of that queue"],
    alarm_sns_topic_arn: [
      m.alarms.topicArn,
      "SNS topic the alarms notify (created or brought; null without one)",
    ],
    cloudwatch_metric_alarm_arns: [
      Fn.conditional(v.create_alarms.value, alarms, {}),
      "ARNs of the CloudWatch alarms by alarm ({} unless create_alarms)",
    ],
    ecr_repository_url: [
      m.repository.repositoryUrl,
      "URL of the ECR repository (null unless created)",
    ],
    ecr_repository_arn: [
      m.repository.repositoryArn,
      "ARN of the ECR repository (null unless created)",
    ],
  };
  for (const [name, [value, description]] of Object.entries(outputs)) {
    new TerraformOutput(scope, name, { value, description });
  }
}
