import { Construct } from "constructs";
import { EcrLifecyclePolicy } from "@cdktf/provider-aws/lib/ecr-lifecycle-policy";
import { EcrRepository } from "@cdktf/provider-aws/lib/ecr-repository";
import { Fn } from "../cdktf";
import { attributeOf, countIf, Flag } from "./expressions";

export interface RepositoryProps {
  name: string;
  create: Flag;
  kmsKeyArn: string;
  tags: Record<string, string>;
}

/**
 * Expires untagged images only (layers of superseded pushes): a function runs the image its digest pins, and a
 * count-based rule over tagged images would sooner or later delete the image a function still runs.
 */
export const ECR_LIFECYCLE_POLICY = {
  rules: [
    {
      rulePriority: 1,
      description: "Expire untagged images after 14 days",
      selection: {
        tagStatus: "untagged",
        countType: "sinceImagePushed",
        countUnit: "days",
        countNumber: 14,
      },
      action: { type: "expire" },
    },
  ],
};

/** Optional home of the image: immutable tags, scanned on push, encrypted with the key, untagged images expired. */
export class Repository extends Construct {
  readonly repository: EcrRepository;
  readonly lifecyclePolicy: EcrLifecyclePolicy;
  readonly repositoryUrl: string;
  readonly repositoryArn: string;

  constructor(scope: Construct, id: string, props: RepositoryProps) {
    super(scope, id);
    const count = countIf(props.create);
    this.repository = new EcrRepository(this, "repository", {
      count,
      name: props.name,
      imageTagMutability: "IMMUTABLE",
      imageScanningConfiguration: { scanOnPush: true },
      encryptionConfiguration: [{ encryptionType: "KMS", kmsKey: props.kmsKeyArn }],
      tags: props.tags,
    });
    this.lifecyclePolicy = new EcrLifecyclePolicy(this, "lifecycle", {
      count,
      repository: attributeOf(this.repository, "name"),
      policy: Fn.jsonencode(ECR_LIFECYCLE_POLICY),
    });
    this.repositoryUrl = attributeOf(this.repository, "repository_url");
    this.repositoryArn = attributeOf(this.repository, "arn");
  }
}
