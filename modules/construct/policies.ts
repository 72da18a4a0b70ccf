import { DYNAMODB_ITEM_ACTIONS, DYNAMODB_STREAM_ACTIONS } from "../../src/table/iam-actions";
import { TABLE_DEFINITION } from "../../src/table/definition";
import { Fn, Token } from "../cdktf";
import { isLiteral } from "./rules";

/**
 * The module's IAM policy documents, as plain data (rendered with `jsonencode`): least privilege, one statement per
 * concern, every action that supports resource ARNs scoped to this module's resources.
 */

export interface PolicyStatement {
  Sid: string;
  Effect: "Allow";
  Action: string[];
  Resource: string | string[];
  Condition?: Record<string, Record<string, string | string[]>>;
}

export interface PolicyDocument {
  Version: "2012-10-17";
  Statement: PolicyStatement[];
}

/** Session tag that names the tenant of a tenant-scoped role session. */
export const TENANT_SESSION_TAG = "tenant_id";

export function trustPolicy(
  principal: { Service: string } | { AWS: string },
  actions: string[],
): object {
  return {
    Version: "2012-10-17",
    Statement: [{ Sid: "Assume", Effect: "Allow", Principal: principal, Action: actions }],
  };
}

/** The table and each of its indexes by name (never `index/*`): items are read and written through both. */
export function tableResources(tableArn: string): string[] {
  return [
    tableArn,
    ...TABLE_DEFINITION.globalSecondaryIndexes.map((index) => `${tableArn}/index/${index.name}`),
  ];
}

export interface FunctionPolicyInput {
  /** The item actions this function's code sends (a list of iam-actions.ts). */
  itemActions: readonly string[];
  /** Where they apply: the table, plus its indexes for a function that queries them. */
  itemResources: string[];
  /** Only items whose partition key is like one of these (`dynamodb:LeadingKeys`, `*` wildcards). */
  itemLeadingKeys?: string[];
  /** Only the cleaner reads the stream. */
  streamArn?: string;
  kmsKeyArn: string;
  region: string;
  logGroupArn: string;
  /**
   * Where failures are sent on this function's behalf with its role: the event source mapping's on-failure
   * destination, or the on-failure destination of an asynchronously invoked function. None for a synchronous one.
   */
  failureDestinationArn?: string;
  /** The queue an event source mapping feeds this function from: the mapping receives and deletes with the role. */
  sourceQueueArn?: string;
  /** The worker function this function hands background runs to (the worker: itself, for its next legs). */
  workerFunctionArn?: string;
}

/** Where a function in a VPC may create and manage its network interfaces (ARNs, see vpcAccessPolicy). */
export interface VpcAccessResources {
  /** `arn:<partition>:ec2:<region>:<account>:network-interface/*`. */
  networkInterfaceArn: string;
  subnetArns: string[];
  securityGroupArns: string[];
}

/**
 * What Lambda needs of a function's role to attach it to a VPC: AWSLambdaVPCAccessExecutionRole's EC2 actions,
 * scoped. Creating an interface names the subnets and security groups given (any owner: a shared VPC's subnets
 * belong to another account); managing one, this account's interfaces in this region; the two Describe actions
 * support no resource ARN, alone in their statement.
 */
export function vpcAccessPolicy(resources: VpcAccessResources): PolicyDocument {
  return {
    Version: "2012-10-17",
    Statement: [
      {
        Sid: "VpcCreateNetworkInterface",
        Effect: "Allow",
        Action: ["ec2:CreateNetworkInterface"],
        Resource: concatenated([
          [resources.networkInterfaceArn],
          resources.subnetArns,
          resources.securityGroupArns,
        ]),
      },
      {
        Sid: "VpcManageNetworkInterfaces",
        Effect: "Allow",
        Action: [
          "ec2:AssignPrivateIpAddresses",
          "ec2:DeleteNetworkInterface",
          "ec2:UnassignPrivateIpAddresses",
        ],
        Resource: [resources.networkInterfaceArn],
      },
      {
        Sid: "VpcDescribe",
        Effect: "Allow",
        Action: VPC_DESCRIBE_ACTIONS,
        Resource: "*",
      },
    ],
  };
}

/** Lists joined, with `concat` when one of them is a Terraform list. */
function concatenated(lists: string[][]): string[] {
  if (lists.every((list) => isLiteral(list))) return lists.flat();
  return Token.asList(Fn.concat(lists));
}

/** The EC2 reads Lambda makes with the role that support no resource-level permissions. */
export const VPC_DESCRIBE_ACTIONS = ["ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets"];

export function functionPolicy(input: FunctionPolicyInput): PolicyDocument {
  const statements: PolicyStatement[] = [
    {
      Sid: "DynamoDBItems",
      Effect: "Allow",
      Action: [...input.itemActions],
      Resource: input.itemResources,
      // `ForAllValues` holds when the key is absent, hence the `Null` guard (as in tenantPolicy).
      ...(input.itemLeadingKeys === undefined
        ? {}
        : {
            Condition: {
              "ForAllValues:StringLike": { "dynamodb:LeadingKeys": input.itemLeadingKeys },
              Null: { "dynamodb:LeadingKeys": "false" },
            },
          }),
    },
  ];
  if (input.streamArn !== undefined) {
    statements.push({
      Sid: "DynamoDBStream",
      Effect: "Allow",
      Action: [...DYNAMODB_STREAM_ACTIONS],
      Resource: [input.streamArn],
    });
  }
  // Lambda decrypts the environment with the role; SQS only where this role sends to or reads a queue.
  const usesQueue = input.failureDestinationArn !== undefined || input.sourceQueueArn !== undefined;
  const services = ["dynamodb", ...(usesQueue ? ["sqs"] : []), "lambda"];
  statements.push(
    {
      // The key is usable only through the services that encrypt this module's data, never directly.
      Sid: "KmsThroughServices",
      Effect: "Allow",
      Action: ["kms:Decrypt", "kms:GenerateDataKey"],
      Resource: [input.kmsKeyArn],
      Condition: {
        StringEquals: {
          "kms:ViaService": services.map((service) => `${service}.${input.region}.amazonaws.com`),
        },
      },
    },
    {
      // The log group is created by the module: the function only writes streams into it.
      Sid: "OwnLogGroup",
      Effect: "Allow",
      Action: ["logs:CreateLogStream", "logs:PutLogEvents"],
      Resource: [`${input.logGroupArn}:*`],
    },
    {
      // X-Ray has no resource-level permissions: "*" is the only resource these actions accept.
      Sid: "XRay",
      Effect: "Allow",
      Action: ["xray:PutTelemetryRecords", "xray:PutTraceSegments"],
      Resource: "*",
    },
  );
  if (input.failureDestinationArn !== undefined) {
    statements.push({
      Sid: "FailureDestination",
      Effect: "Allow",
      Action: ["sqs:SendMessage"],
      Resource: [input.failureDestinationArn],
    });
  }
  if (input.sourceQueueArn !== undefined) {
    statements.push({
      Sid: "EventSourceQueue",
      Effect: "Allow",
      Action: ["sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"],
      Resource: [input.sourceQueueArn],
    });
  }
  if (input.workerFunctionArn !== undefined) {
    statements.push({
      // One function, unqualified (the dispatcher invokes $LATEST by name): no version, alias or wildcard.
      Sid: "InvokeWorker",
      Effect: "Allow",
      Action: ["lambda:InvokeFunction"],
      Resource: [input.workerFunctionArn],
    });
  }
  return { Version: "2012-10-17", Statement: statements };
}

/** An existing table's own key: usable only through DynamoDB, as the module's key is. */
export function tableKeyPolicy(keyArn: string, region: string): PolicyDocument {
  return {
    Version: "2012-10-17",
    Statement: [
      {
        Sid: "TableKeyThroughDynamoDB",
        Effect: "Allow",
        Action: ["kms:Decrypt", "kms:GenerateDataKey"],
        Resource: [keyArn],
        Condition: { StringEquals: { "kms:ViaService": [`dynamodb.${region}.amazonaws.com`] } },
      },
    ],
  };
}

/** Lets the function assume the tenant role, tagging the session with the tenant. */
export function assumeTenantRolePolicy(tenantRoleArn: string): PolicyDocument {
  return {
    Version: "2012-10-17",
    Statement: [
      {
        Sid: "AssumeTenantRole",
        Effect: "Allow",
        Action: ["sts:AssumeRole", "sts:TagSession"],
        Resource: [tenantRoleArn],
      },
    ],
  };
}

/**
 * A tenant-scoped session: only items whose partition key is the tenant's (`<tenant>#<thread>` on the table,
 * `<tenant>` on the threads-by-tenant index, `<tenant>#<STATUS>` on the inbox index). `ForAllValues` is true when
 * the key is absent, hence the `Null` guard; Scan is never granted.
 */
export function tenantPolicy(tableArn: string, kmsKeyArn: string, region: string): PolicyDocument {
  const tenant = `\${aws:PrincipalTag/${TENANT_SESSION_TAG}}`;
  return {
    Version: "2012-10-17",
    Statement: [
      {
        Sid: "TenantItems",
        Effect: "Allow",
        Action: [...DYNAMODB_ITEM_ACTIONS],
        Resource: tableResources(tableArn),
        Condition: {
          "ForAllValues:StringLike": { "dynamodb:LeadingKeys": [tenant, `${tenant}#*`] },
          Null: { "dynamodb:LeadingKeys": "false" },
        },
      },
      {
        Sid: "KmsThroughDynamoDB",
        Effect: "Allow",
        Action: ["kms:Decrypt", "kms:GenerateDataKey"],
        Resource: [kmsKeyArn],
        Condition: { StringEquals: { "kms:ViaService": [`dynamodb.${region}.amazonaws.com`] } },
      },
    ],
  };
}

/** The tenant role trusts only the roles of the functions that run graphs, and only with a tenant session tag. */
export function tenantTrustPolicy(graphRoleArns: string[]): object {
  return {
    Version: "2012-10-17",
    Statement: [
      {
        Sid: "AssumeFromGraphFunctions",
        Effect: "Allow",
        Principal: { AWS: graphRoleArns },
        Action: ["sts:AssumeRole", "sts:TagSession"],
        Condition: { Null: { [`aws:RequestTag/${TENANT_SESSION_TAG}`]: "false" } },
      },
    ],
  };
}
