import { Construct } from "constructs";
import { Fn, TerraformLocal, Token } from "../cdktf";
import { DataAwsCallerIdentity } from "@cdktf/provider-aws/lib/data-aws-caller-identity";
import { DataAwsPartition } from "@cdktf/provider-aws/lib/data-aws-partition";
import { DataAwsRegion } from "@cdktf/provider-aws/lib/data-aws-region";
import { KmsAlias } from "@cdktf/provider-aws/lib/kms-alias";
import { KmsKey } from "@cdktf/provider-aws/lib/kms-key";
import { attributeOf, choose, countIf, Flag } from "./expressions";
import { logGroupNames } from "./logs";

export interface KeyProps {
  name: string;
  createKmsKey: Flag;
  kmsKeyArn?: string;
  deletionWindowInDays: number;
  /** Whether the stream function (and so its log group) is created. */
  createStreamFunction: Flag;
  /** Whether the API key authorizer (and so its log group) is created. */
  enableApiKeys?: Flag;
  tags: Record<string, string>;
}

/** Where the module runs: partition and region come from the provider, the account from input or STS. */
export class Environment extends Construct {
  readonly partition: string;
  readonly region: string;
  readonly accountId: string;

  /** `lookUpAccount` (default: when no `accountId` is given) reads the account from STS. */
  constructor(scope: Construct, id: string, accountId?: string, lookUpAccount?: Flag) {
    super(scope, id);
    this.partition = new DataAwsPartition(this, "partition").partition;
    // `id` is the region name on provider 5.x and 6.x alike (6.0 deprecates `name` in favour of `region`).
    this.region = new DataAwsRegion(this, "region").id;
    // Offline plans (and principals without sts:GetCallerIdentity) pass the account id instead.
    const lookUp = lookUpAccount ?? accountId === undefined;
    const identity = new DataAwsCallerIdentity(this, "caller", { count: countIf(lookUp) });
    const account = choose(lookUp, attributeOf(identity, "account_id"), accountId ?? "");
    // One local instead of the same conditional repeated in every ARN.
    this.accountId = Token.isUnresolved(account)
      ? new TerraformLocal(this, "account_id", account).asString
      : account;
  }
}

/**
 * The customer-managed key of the table, logs, queues, environment and ECR: rotation on, administered by the account,
 * usable by CloudWatch Logs for this module's log groups only. Or the caller's own key.
 */
export class Key extends Construct {
  readonly key: KmsKey;
  readonly alias: KmsAlias;
  /** The key every resource uses (created or brought). */
  readonly keyArn: string;
  /** `alias/<name>` when the key is created. */
  readonly aliasName: string;

  constructor(scope: Construct, id: string, props: KeyProps, environment: Environment) {
    super(scope, id);
    const { partition, region, accountId } = environment;
    const groups = logGroupNames(props.name);
    const arnOf = (group: string) =>
      `arn:${partition}:logs:${region}:${accountId}:log-group:${group}`;
    // Exactly the groups the module creates: the stream function's only with it.
    const always = [groups.api, groups.cleaner, groups.access, groups.worker].map(arnOf);
    const stream = props.createStreamFunction;
    const authorizer = props.enableApiKeys ?? false;
    const logGroupArns =
      typeof stream === "boolean" && typeof authorizer === "boolean"
        ? [
            ...always,
            ...(stream ? [arnOf(groups.stream)] : []),
            ...(authorizer ? [arnOf(groups.authorizer)] : []),
          ]
        : // Locals first: CDKTF renders a template inside a function's arguments wrongly.
          Token.asList(
            Fn.concat([
              new TerraformLocal(this, "log_group_arns", always).asList,
              Fn.conditional(
                stream,
                [new TerraformLocal(this, "stream_log_group_arn", arnOf(groups.stream)).asString],
                [],
              ),
              ...(authorizer === false
                ? []
                : [
                    Fn.conditional(
                      authorizer,
                      [
                        new TerraformLocal(
                          this,
                          "authorizer_log_group_arn",
                          arnOf(groups.authorizer),
                        ).asString,
                      ],
                      [],
                    ),
                  ]),
            ]),
          );
    this.key = new KmsKey(this, "key", {
      count: countIf(props.createKmsKey),
      description: `Memory Table ${props.name}: table, logs, dead-letter queue, environment`,
      enableKeyRotation: true,
      deletionWindowInDays: props.deletionWindowInDays,
      policy: Fn.jsonencode({
        Version: "2012-10-17",
        Statement: [
          {
            // The default key policy: IAM policies of the account decide who uses the key.
            Sid: "AccountAdministration",
            Effect: "Allow",
            Principal: { AWS: `arn:${partition}:iam::${accountId}:root` },
            Action: "kms:*",
            Resource: "*",
          },
          {
            Sid: "CloudWatchLogsForThisModule",
            Effect: "Allow",
            Principal: { Service: `logs.${region}.amazonaws.com` },
            Action: [
              "kms:Encrypt*",
              "kms:Decrypt*",
              "kms:ReEncrypt*",
              "kms:GenerateDataKey*",
              "kms:Describe*",
            ],
            Resource: "*",
            Condition: { ArnEquals: { "kms:EncryptionContext:aws:logs:arn": logGroupArns } },
          },
        ],
      }),
      tags: props.tags,
    });
    this.alias = new KmsAlias(this, "alias", {
      count: countIf(props.createKmsKey),
      name: `alias/${props.name}`,
      targetKeyId: attributeOf(this.key, "key_id"),
    });
    this.keyArn = choose(props.createKmsKey, attributeOf(this.key, "arn"), props.kmsKeyArn ?? "");
    this.aliasName = attributeOf(this.alias, "name");
  }
}
