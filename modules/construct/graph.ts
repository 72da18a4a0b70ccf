import { Construct } from "constructs";
import { Fn, Op, TerraformIterator, TerraformLocal, Token } from "../cdktf";
import { CloudwatchLogGroup } from "@cdktf/provider-aws/lib/cloudwatch-log-group";
import { IamRolePolicy } from "@cdktf/provider-aws/lib/iam-role-policy";
import { IamRolePolicyAttachment } from "@cdktf/provider-aws/lib/iam-role-policy-attachment";
import { LambdaFunction } from "@cdktf/provider-aws/lib/lambda-function";
import { ENVIRONMENT } from "../../src/runtime/environment";
import { attributeOf, choose, countIf, type Flag } from "./expressions";
import type { FunctionRole } from "./role";
import { isLiteral, type GraphPolicyStatement } from "./rules";

/**
 * What a graph needs beyond the module's own least privilege: its tools' permissions (extra statements and
 * managed policies) and its secrets (read permission on exactly those, resolved by the image at cold start).
 * Everything here applies to each function that runs graphs: the API function and the background-run worker.
 */

/** A function that runs graphs, with what it was built from. */
export interface GraphFunction {
  /**
   * Address of the function (`function` for the API function, `worker_function`): what derives from it (its
   * alarms, its tenant-role assume policy) is named after it; its role's extras are named after the role.
   */
  id: string;
  function: LambdaFunction;
  role: FunctionRole;
  logGroup: CloudwatchLogGroup;
  /** Its name and its log group's, as expressions valid whether or not it has `count`. */
  functionName: string;
  logGroupName: string;
  /** Whether it exists: always, or with its toggle (the stream function); what derives from it follows. */
  create: Flag;
}

/**
 * A function that runs graphs, its name and log group's read the way its `count` allows: plainly without one,
 * through `one()` with one (the stream function's, whatever its toggle).
 */
export function graphFunction(
  id: string,
  fn: LambdaFunction,
  role: FunctionRole,
  logGroup: CloudwatchLogGroup,
  create: Flag,
): GraphFunction {
  const counted = fn.count !== undefined;
  return {
    id,
    function: fn,
    role,
    logGroup,
    functionName: counted ? attributeOf(fn, "function_name") : fn.functionName,
    logGroupName: counted ? attributeOf(logGroup, "name") : logGroup.name,
    create,
  };
}

export interface GraphInputsProps {
  secrets?: Record<string, string>;
  secretsKmsKeyArns?: string[];
  statements?: Record<string, GraphPolicyStatement>;
  policyArns?: Record<string, string>;
  region: string;
}

/** ARN service of Secrets Manager secrets and of SSM parameters (the third field of an ARN). */
const SECRETS_MANAGER = "secretsmanager";
const SSM = "ssm";

/** The graph inputs as Terraform locals, once for every function that runs graphs. */
export class GraphInputs extends Construct {
  readonly secrets: Record<string, string>;
  readonly statements: Record<string, unknown>;
  readonly policyArns: Record<string, string>;
  /** Counts of the per-role policies: known at plan (they depend on the inputs' keys, never their values). */
  readonly hasSecrets: number;
  readonly hasStatements: number;
  /** The `secrets` policy document, JSON. */
  readonly secretsPolicy: string;
  /** The additional statements as a policy document, JSON. */
  readonly statementsPolicy: string;

  constructor(scope: Construct, id: string, props: GraphInputsProps) {
    super(scope, id);
    this.secrets = asLocalMap(this, "secrets", props.secrets ?? {});
    this.policyArns = props.policyArns ?? {};
    this.statements = asLocalMap(this, "statements", normalize(props.statements ?? {}));
    this.hasSecrets = countOf(props.secrets ?? {});
    this.hasStatements = countOf(props.statements ?? {});
    const keys = props.secretsKmsKeyArns ?? [];
    // ARNs of each service; unknown until apply when the secrets are created in the same run, which is fine:
    // only the policy's text depends on them, never what is created.
    const arnsOf = (service: string) =>
      new TerraformLocal(
        this,
        `${service}_arns`,
        Fn.distinct(
          Token.asList(
            TerraformIterator.fromMap(this.secrets).forExpressionForList(
              `val if split(":", val)[2] == "${service}"`,
            ),
          ),
        ),
      ).asList;
    const secretArns = arnsOf(SECRETS_MANAGER);
    const parameterArns = arnsOf(SSM);
    const present = (list: string[]) => Op.gte(Fn.lengthOf(list), 1);
    const when = (condition: unknown, statement: object) =>
      Fn.conditional(condition, [statement], []);
    const viaService = (service: string, contextKey: string, arns: string[]) => ({
      Effect: "Allow",
      Action: ["kms:Decrypt"],
      Resource: keys,
      Condition: {
        StringEquals: {
          // A join, not a template: a template nested this deep in functions is rendered wrong by CDKTF.
          "kms:ViaService": Fn.join(".", [service, props.region, "amazonaws.com"]),
          // The key decrypts these secrets for this role, and nothing else it may encrypt.
          [`kms:EncryptionContext:${contextKey}`]: arns,
        },
      },
    });
    this.secretsPolicy = Fn.jsonencode({
      Version: "2012-10-17",
      Statement: Fn.concat([
        when(present(secretArns), {
          Sid: "ReadSecrets",
          Effect: "Allow",
          Action: ["secretsmanager:GetSecretValue"],
          Resource: secretArns,
        }),
        when(present(parameterArns), {
          Sid: "ReadParameters",
          Effect: "Allow",
          Action: ["ssm:GetParameter"],
          Resource: parameterArns,
        }),
        when(Op.and(present(keys), present(secretArns)), {
          Sid: "DecryptSecrets",
          ...viaService(SECRETS_MANAGER, "SecretARN", secretArns),
        }),
        when(Op.and(present(keys), present(parameterArns)), {
          Sid: "DecryptParameters",
          ...viaService(SSM, "PARAMETER_ARN", parameterArns),
        }),
      ]),
    });
    this.statementsPolicy = Fn.jsonencode({
      Version: "2012-10-17",
      Statement: TerraformIterator.fromMap(this.statements).forExpressionForList(
        // Condition only where one is given: IAM refuses an empty one.
        "merge({ Sid = key, Effect = val.effect, Action = val.actions, Resource = val.resources }, { for name, block in { Condition = val.condition } : name => block if length(block) > 0 })",
      ),
    });
  }

  /**
   * The variables of a function that runs graphs: the caller's, the module's own last (they cannot be
   * overridden by accident), and the secrets' ARNs for the image to resolve.
   */
  environment(
    extra: Record<string, string> | undefined,
    own: Record<string, string>,
  ): Record<string, string> {
    const secrets = this.secrets;
    const arns = { [ENVIRONMENT.environmentArns]: Fn.jsonencode(secrets) };
    if (isLiteral(extra ?? {}) && isLiteral(this.hasSecrets) && isLiteral(own)) {
      return { ...extra, ...own, ...(this.hasSecrets === 1 ? arns : {}) };
    }
    return Token.asStringMap(
      Fn.merge([extra ?? {}, own, Fn.conditional(Op.gte(Fn.lengthOf(secrets), 1), arns, {})]),
    );
  }

  /** The graph extras of one function that runs graphs, on its role. */
  grant(graphFunction: GraphFunction): GraphPermissions {
    return new GraphPermissions(graphFunction.role, "graph", this, graphFunction);
  }
}

/** On one role: the additional statements, the managed policies, the secrets. */
export class GraphPermissions extends Construct {
  readonly statements: IamRolePolicy;
  readonly policies: IamRolePolicyAttachment;
  readonly secrets: IamRolePolicy;

  constructor(scope: Construct, id: string, inputs: GraphInputs, graphFunction: GraphFunction) {
    super(scope, id);
    const { role, create } = graphFunction;
    // Only where the function exists: a count of 1 becomes the toggle's.
    const countWith = (count: number) => choose(create, count, 0);
    this.statements = new IamRolePolicy(this, "statements", {
      count: countWith(inputs.hasStatements),
      name: "graph-statements",
      role: role.roleId,
      policy: inputs.statementsPolicy,
    });
    const arns = TerraformIterator.fromMap(
      typeof create === "boolean"
        ? create
          ? inputs.policyArns
          : {}
        : Token.asStringMap(Fn.conditional(create, inputs.policyArns, {})),
    );
    this.policies = new IamRolePolicyAttachment(this, "policies", {
      forEach: arns,
      role: role.roleName,
      policyArn: Token.asString(arns.value),
    });
    this.secrets = new IamRolePolicy(this, "secrets", {
      count: countWith(inputs.hasSecrets),
      name: "graph-secrets",
      role: role.roleId,
      policy: inputs.secretsPolicy,
    });
  }
}

/** A literal map as a local (its address in every expression); a reference stays what it is. */
function asLocalMap<T>(scope: Construct, id: string, value: Record<string, T>): Record<string, T> {
  if (!isLiteral(value)) return value;
  return Token.asAnyMap(new TerraformLocal(scope, id, value).asAnyMap) as Record<string, T>;
}

/** 1 when the map has entries, known at plan: from a literal's keys, or `length(...)` of a variable. */
function countOf(value: Record<string, unknown>): number {
  if (isLiteral(value)) return Object.keys(value).length > 0 ? 1 : 0;
  return countIf(Op.gte(Fn.lengthOf(value), 1));
}

/** Literal statements with the defaults the module's variable type gives (effect Allow, no condition). */
function normalize(
  statements: Record<string, GraphPolicyStatement>,
): Record<string, GraphPolicyStatement> {
  if (!isLiteral(statements)) return statements;
  return Object.fromEntries(
    Object.entries(statements).map(([sid, statement]) => [
      sid,
      {
        effect: statement.effect ?? "Allow",
        actions: statement.actions,
        resources: statement.resources,
        condition: statement.condition ?? {},
      },
    ]),
  );
}
