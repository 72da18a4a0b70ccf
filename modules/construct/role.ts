import { Construct } from "constructs";
import { Fn } from "../cdktf";
import { IamRole } from "@cdktf/provider-aws/lib/iam-role";
import { IamRolePolicy } from "@cdktf/provider-aws/lib/iam-role-policy";
import { attributeOf, countIf, Flag } from "./expressions";
import {
  assumeTenantRolePolicy,
  functionPolicy,
  FunctionPolicyInput,
  tenantPolicy,
  tenantTrustPolicy,
  trustPolicy,
} from "./policies";

export interface RoleProps {
  roleName: string;
  path: string;
  permissionsBoundary?: string;
  tags: Record<string, string>;
}

/** A function's execution role: trusted by Lambda only, with exactly the permissions of {@link functionPolicy}. */
export class FunctionRole extends Construct {
  readonly role: IamRole;
  readonly policy: IamRolePolicy;

  constructor(scope: Construct, id: string, props: RoleProps, policy: FunctionPolicyInput) {
    super(scope, id);
    this.role = new IamRole(this, "role", {
      name: props.roleName,
      path: props.path,
      permissionsBoundary: props.permissionsBoundary,
      assumeRolePolicy: Fn.jsonencode(
        trustPolicy({ Service: "lambda.amazonaws.com" }, ["sts:AssumeRole"]),
      ),
      tags: props.tags,
    });
    this.policy = new IamRolePolicy(this, "policy", {
      name: "memory-table",
      role: this.role.id,
      policy: Fn.jsonencode(functionPolicy(policy)),
    });
  }
}

export interface TenantRoleProps extends RoleProps {
  create: Flag;
  functionRole: IamRole;
  tableArn: string;
  kmsKeyArn: string;
  region: string;
}

/** Optional defense in depth: a role whose sessions reach one tenant's partitions only. */
export class TenantRole extends Construct {
  readonly role: IamRole;
  readonly policy: IamRolePolicy;
  readonly assume: IamRolePolicy;
  readonly roleArn: string;

  constructor(scope: Construct, id: string, props: TenantRoleProps) {
    super(scope, id);
    const count = countIf(props.create);
    this.role = new IamRole(this, "role", {
      count,
      name: props.roleName,
      path: props.path,
      permissionsBoundary: props.permissionsBoundary,
      assumeRolePolicy: Fn.jsonencode(tenantTrustPolicy(props.functionRole.arn)),
      tags: props.tags,
    });
    this.roleArn = attributeOf(this.role, "arn");
    this.policy = new IamRolePolicy(this, "policy", {
      count,
      name: "memory-table-tenant",
      role: attributeOf(this.role, "id"),
      policy: Fn.jsonencode(tenantPolicy(props.tableArn, props.kmsKeyArn, props.region)),
    });
    this.assume = new IamRolePolicy(this, "assume", {
      count,
      name: "assume-tenant-role",
      role: props.functionRole.id,
      policy: Fn.jsonencode(assumeTenantRolePolicy(this.roleArn)),
    });
  }
}
