import { Fn, Op, Token } from "../cdktf";
import type { FunctionVpc } from "./function";
import type { Context, MemoryTableProps } from "./props";
import type { VpcAccess } from "./role";
import { isLiteral } from "./rules";

/**
 * Every function's VPC attachment and its roles' network-interface permissions, when subnets are given (a
 * literal empty list: none at all; a Terraform list: `count` and a dynamic block decide at plan).
 */
export function functionVpc(
  props: MemoryTableProps,
  context: Pick<Context, "partition" | "region" | "accountId">,
): { config: FunctionVpc; access: VpcAccess } | undefined {
  const subnetIds = props.vpcSubnetIds ?? [];
  const securityGroupIds = props.vpcSecurityGroupIds ?? [];
  if (isLiteral(subnetIds) && subnetIds.length === 0) return undefined;
  const ec2 = `arn:${context.partition}:ec2:${context.region}`;
  // Any owner: the subnets of a shared VPC belong to the account that shares it.
  const arns = (kind: string, ids: string[]) =>
    isLiteral(ids)
      ? ids.map((id) => `${ec2}:*:${kind}/${id}`)
      : Token.asList(
          Fn.formatlist(`arn:%s:ec2:%s:*:${kind}/%s`, [context.partition, context.region, ids]),
        );
  return {
    config: { subnetIds, securityGroupIds },
    access: {
      enabled: isLiteral(subnetIds) ? true : Op.gte(Fn.lengthOf(subnetIds), 1),
      // One token (format), so that `concat` may take it.
      networkInterfaceArn: Token.asString(
        Fn.format("arn:%s:ec2:%s:%s:network-interface/*", [
          context.partition,
          context.region,
          context.accountId,
        ]),
      ),
      subnetArns: arns("subnet", subnetIds),
      securityGroupArns: arns("security-group", securityGroupIds),
    },
  };
}
