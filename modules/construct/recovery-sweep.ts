import { Construct } from "constructs";
import { Fn, Op, Token } from "../cdktf";
import { CloudwatchEventRule } from "@cdktf/provider-aws/lib/cloudwatch-event-rule";
import { CloudwatchEventTarget } from "@cdktf/provider-aws/lib/cloudwatch-event-target";
import { LambdaPermission } from "@cdktf/provider-aws/lib/lambda-permission";
import { RECOVERY_SWEEP_KIND, type RecoverySweepEvent } from "../../src/shared/worker-events";
import { attributeOf, countIf, type Flag } from "./expressions";
import { isLiteral } from "./rules";

/** What the rule sends the worker: the event `worker.handler` tells from a run job and a failed-job record. */
export const RECOVERY_SWEEP_EVENT: RecoverySweepEvent = { kind: RECOVERY_SWEEP_KIND };

export interface RecoverySweepProps {
  /** The rule's name (`<name>-recovery-sweep`). */
  name: string;
  /** A `rate(...)` or `cron(...)` expression; null or "" turns the sweep off (a reference: decided at plan). */
  schedule: string | null;
  /** The worker function, invoked as every other caller does: its alias with `publish` (ARN and qualifier). */
  workerFunctionName: string;
  workerFunctionArn: string;
  workerQualifier?: string;
  tags: Record<string, string>;
}

/**
 * The recovery sweep: an EventBridge schedule that invokes the worker with {@link RECOVERY_SWEEP_EVENT}, so a run
 * whose process died (its lease expired, no leg will hand over) is taken over even when no client reads its
 * thread. Everything here has `count`: off with a null or empty schedule.
 */
export class RecoverySweep extends Construct {
  readonly rule: CloudwatchEventRule;
  readonly target: CloudwatchEventTarget;
  readonly permission: LambdaPermission;
  /** Whether the sweep is scheduled (known now for a literal schedule). */
  readonly enabled: Flag;
  /** ARN of the rule (null when off). */
  readonly ruleArn: string;

  constructor(scope: Construct, id: string, props: RecoverySweepProps) {
    super(scope, id);
    this.enabled = scheduled(props.schedule);
    const count = countIf(this.enabled);
    this.rule = new CloudwatchEventRule(this, "rule", {
      count,
      name: props.name,
      description: "Invokes the Memory Table worker to take over runs whose process died",
      scheduleExpression: props.schedule ?? undefined,
      tags: props.tags,
    });
    this.ruleArn = attributeOf(this.rule, "arn");
    this.target = new CloudwatchEventTarget(this, "target", {
      count,
      rule: attributeOf(this.rule, "name"),
      targetId: "worker",
      arn: props.workerFunctionArn,
      input: JSON.stringify(RECOVERY_SWEEP_EVENT),
    });
    // This rule only, and only what it targets: no other rule or account may invoke it through EventBridge.
    this.permission = new LambdaPermission(this, "permission", {
      count,
      statementId: "AllowRecoverySweepSchedule",
      action: "lambda:InvokeFunction",
      functionName: props.workerFunctionName,
      qualifier: props.workerQualifier,
      principal: "events.amazonaws.com",
      sourceArn: this.ruleArn,
    });
  }
}

/** Whether a schedule is given: a non-empty literal, or at plan `compact` (which drops null and ""). */
function scheduled(schedule: string | null): Flag {
  if (schedule === null) return false;
  if (isLiteral(schedule)) return schedule !== "";
  return Op.gte(Fn.lengthOf(Token.asList(Fn.compact([schedule]))), 1);
}
