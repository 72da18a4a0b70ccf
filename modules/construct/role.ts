import { Construct } from "constructs";
import { Fn, Op, Token } from "../cdktf";
import { IamRole } from "@cdktf/provider-aws/lib/iam-role";
import { IamRolePolicy } from "@cdktf/provider-aws/lib/iam-role-policy";
import type { ITerraformDependable } from "../cdktf";
import { attributeOf, both, countIf, Flag } from "./expressions";
import {
  assumeTenantRolePolicy,
  functionPolicy,
  FunctionPolicyInput,
  tenantPolicy,
  tenantTrustPolicy,
  trustPolicy,
  tableKeyPolicy,
  vpcAccessPolicy,
  type VpcAccessResources,
} from "./policies";
import { isLiteral } from "./rules";

export interface RoleProps {
  roleName: string;
  path: string;
  permissionsBoundary?: string;
  tags: Record<string, string>;
  /** With functions in a VPC: the network-interface permissions Lambda needs (a policy of its own). */
  vpc?: VpcAccess;
  /** An existing table's own key (`enabled`: given), usable through DynamoDB (a policy of its own). */
  tableKey?: { arn: string; enabled: Flag; region: string };
}

export interface VpcAccess extends VpcAccessResources {
  /** Whether the functions are in a VPC (`count` of the policy). */
  enabled: Flag;
}

/** A function's execution role: trusted by Lambda only, with exactly the permissions of {@link functionPolicy}. */
export class FunctionRole extends Construct {
  readonly role: IamRole;
  readonly policy: IamRolePolicy;
  /** With `vpc`: the network-interface permissions (`count`: in a VPC only). */
  readonly vpcPolicy?: IamRolePolicy;
  /** With `tableKey`: the existing table's key through DynamoDB (`count`: given only). */
  readonly tableKeyPolicy?: IamRolePolicy;
  /** What its function must wait for: every policy of the role (Lambda checks ENI permissions at creation). */
  readonly policies: ITerraformDependable[];
  /**
   * Whether the role exists: always, or with its optional function (`count`). Read its attributes from
   * `roleArn`, `roleId` and `roleName`, which are valid either way.
   */
  readonly create: Flag;
  readonly roleArn: string;
  readonly roleId: string;
  readonly roleName: string;

  constructor(
    scope: Construct,
    id: string,
    props: RoleProps,
    policy: FunctionPolicyInput,
    /** Only for the role of an optional function (default: always created, without `count`). */
    create?: Flag,
  ) {
    super(scope, id);
    const count = create === undefined ? undefined : countIf(create);
    this.create = create ?? true;
    this.role = new IamRole(this, "role", {
      count,
      name: props.roleName,
      path: props.path,
      permissionsBoundary: props.permissionsBoundary,
      assumeRolePolicy: Fn.jsonencode(
        trustPolicy({ Service: "lambda.amazonaws.com" }, ["sts:AssumeRole"]),
      ),
      tags: props.tags,
    });
    const attribute = (name: "arn" | "id" | "name") =>
      count === undefined ? this.role.getStringAttribute(name) : attributeOf(this.role, name);
    this.roleArn = attribute("arn");
    this.roleId = attribute("id");
    this.roleName = attribute("name");
    this.policy = new IamRolePolicy(this, "policy", {
      count,
      name: "memory-table",
      role: this.roleId,
      policy: Fn.jsonencode(functionPolicy(policy)),
    });
    if (props.vpc !== undefined) {
      this.vpcPolicy = new IamRolePolicy(this, "vpc", {
        count: countIf(both(this.create, props.vpc.enabled)),
        name: "memory-table-vpc",
        role: this.roleId,
        policy: Fn.jsonencode(vpcAccessPolicy(props.vpc)),
      });
    }
    if (props.tableKey !== undefined) {
      this.tableKeyPolicy = new IamRolePolicy(this, "table_key", {
        count: countIf(both(this.create, props.tableKey.enabled)),
        name: "memory-table-table-key",
        role: this.roleId,
        policy: Fn.jsonencode(tableKeyPolicy(props.tableKey.arn, props.tableKey.region)),
      });
    }
    this.policies = [this.policy, this.vpcPolicy, this.tableKeyPolicy].filter(
      (policy): policy is IamRolePolicy => policy !== undefined,
    );
  }
}

export interface TenantRoleProps extends RoleProps {
  create: Flag;
  /**
   * The roles of the functions that run graphs, each with the construct id of its assume policy: the tenant
   * role trusts them, and with `attachAssumePolicy` they may assume it.
   */
  graphRoles: { id: string; role: FunctionRole }[];
  /** Grant sts:AssumeRole only where code assumes the role (the bundled handler does not). */
  attachAssumePolicy: Flag;
  tableArn: string;
  kmsKeyArn: string;
  region: string;
}

/** Optional defense in depth: a role whose sessions reach one tenant's partitions only. */
export class TenantRole extends Construct {
  readonly role: IamRole;
  readonly policy: IamRolePolicy;
  /** One per graph role, by its id (`assume` for the API function's). */
  readonly assume: Record<string, IamRolePolicy>;
  readonly roleArn: string;

  constructor(scope: Construct, id: string, props: TenantRoleProps) {
    super(scope, id);
    const count = countIf(props.create);
    this.role = new IamRole(this, "role", {
      count,
      name: props.roleName,
      path: props.path,
      permissionsBoundary: props.permissionsBoundary,
      assumeRolePolicy: Fn.jsonencode(tenantTrustPolicy(graphRoleArns(props.graphRoles))),
      tags: props.tags,
    });
    this.roleArn = attributeOf(this.role, "arn");
    this.policy = new IamRolePolicy(this, "policy", {
      count,
      name: "memory-table-tenant",
      role: attributeOf(this.role, "id"),
      policy: Fn.jsonencode(tenantPolicy(props.tableArn, props.kmsKeyArn, props.region)),
    });
    const assume = both(props.create, props.attachAssumePolicy);
    this.assume = Object.fromEntries(
      props.graphRoles.map(({ id: assumeId, role }) => [
        assumeId,
        new IamRolePolicy(this, assumeId, {
          count: countIf(both(assume, role.create)),
          name: "assume-tenant-role",
          role: role.roleId,
          policy: Fn.jsonencode(assumeTenantRolePolicy(this.roleArn)),
        }),
      ]),
    );
  }
}

/** The roles' ARNs; with an optional role among them, only those that exist (`compact`). */
function graphRoleArns(roles: { role: FunctionRole }[]): string[] {
  const arns = roles.map(({ role }) => role.roleArn);
  if (roles.every(({ role }) => role.create === true)) return arns;
  return Token.asList(Fn.compact(arns));
}

/**
 * Every role's access to an existing table's own key (`tableKmsKeyArn`), through DynamoDB only: none without
 * one; a reference decides at plan.
 */
export function tableKeyAccess(
  tableKmsKeyArn: string | undefined,
  region: string,
): RoleProps["tableKey"] {
  if (tableKmsKeyArn === undefined) return undefined;
  return {
    arn: tableKmsKeyArn,
    enabled: isLiteral(tableKmsKeyArn)
      ? true
      : // `compact` drops null ("" would render as undefined: CDKTF drops a literal "" operand).
        Op.gte(Fn.lengthOf(Token.asList(Fn.compact([tableKmsKeyArn]))), 1),
    region,
  };
}
