import { STREAM_MODES } from "../graphs/stream-translator";
import { MULTITASK_STRATEGIES, type MultitaskStrategy, type RunKwargs } from "../../shared/runs";
import { InvalidRequestError } from "../../shared/errors";
import { describe, describeValue } from "./http";
import { objectField, optionalString } from "./route-context";
import type { WebhookSender } from "../runs/webhooks";

/** A run request's body (LangGraph Server's RunCreate), checked: what the run is asked to do and how. */
export interface RunBody {
  assistantId: unknown;
  kwargs: RunKwargs;
  metadata: Record<string, unknown>;
  strategy: MultitaskStrategy;
  ifNotExists: "reject" | "create";
  /** Stateless runs: keep the thread they create (`on_completion: "keep"`). */
  keepThread: boolean;
  /** Seconds to wait before the run starts. */
  afterSeconds: number;
  /** A stream route's run when its client goes away: `cancel` it, or let it `continue` (the default). */
  onDisconnect: "cancel" | "continue";
}

const DURABILITIES = ["sync", "async", "exit"] as const;
/** Longest `after_seconds`: a leg waits it out before it starts. */
export const MAX_AFTER_SECONDS = 600;

/**
 * Checks a run request as LangGraph Server does (422 naming the field), before anything is written. Fields the
 * reference accepts but that change nothing here (`feedback_keys`, `langsmith_tracer`, `on_disconnect` on
 * buffered routes) are accepted and ignored.
 */
export function parseRunBody(body: Record<string, unknown>, webhooks: WebhookSender): RunBody {
  const command = objectField(body, "command");
  const config = objectField(body, "config");
  if (config?.configurable !== undefined && !isPlainObject(config.configurable)) {
    throw new InvalidRequestError(
      "config.configurable",
      `expected an object, got ${describe(config.configurable)}`,
    );
  }
  if (
    config?.recursion_limit !== undefined &&
    (!Number.isInteger(config.recursion_limit) || (config.recursion_limit as number) < 1)
  ) {
    throw new InvalidRequestError(
      "config.recursion_limit",
      `expected a positive integer, got ${describeValue(config.recursion_limit)}`,
    );
  }
  const checkpoint = objectField(body, "checkpoint");
  const checkpointId =
    optionalString(body, "checkpoint_id") ?? optionalString(checkpoint ?? {}, "checkpoint_id");
  const kwargs: RunKwargs = {
    // With a command the input is dropped, as LangGraph Server runs the command and ignores the input: Agent Chat
    // UI resumes an interrupt with `{"input": {}, "command": {"resume": ...}}`.
    ...(body.input !== undefined && !command ? { input: body.input } : {}),
    ...(command ? { command: commandOf(command) } : {}),
    ...(config ? { config } : {}),
    ...(body.context !== undefined && body.context !== null ? { context: body.context } : {}),
    ...interruptsOf(body),
    ...(checkpointId !== undefined ? { checkpointId } : {}),
    ...(checkpoint &&
    typeof checkpoint.checkpoint_ns === "string" &&
    checkpoint.checkpoint_ns !== ""
      ? { checkpointNamespace: checkpoint.checkpoint_ns }
      : {}),
    ...streamOptionsOf(body),
  };
  // Neither input nor command is a run without input: it continues the thread from its last checkpoint, as
  // LangGraph Server does.
  const webhook = optionalString(body, "webhook");
  if (webhook !== undefined) {
    const refusal = webhooks.refusal(webhook);
    if (refusal) throw new InvalidRequestError("webhook", `${refusal}`);
    kwargs.webhook = webhook;
  }
  const durability = optionalEnum(body, "durability", DURABILITIES);
  if (durability) kwargs.durability = durability;
  const afterSeconds = body.after_seconds ?? 0;
  if (
    typeof afterSeconds !== "number" ||
    !(afterSeconds >= 0) ||
    afterSeconds > MAX_AFTER_SECONDS
  ) {
    throw new InvalidRequestError(
      "after_seconds",
      `expected a number from 0 to ${MAX_AFTER_SECONDS}, got ${describeValue(afterSeconds)}`,
    );
  }
  return {
    assistantId: body.assistant_id,
    kwargs,
    metadata: objectField(body, "metadata") ?? {},
    strategy: optionalEnum(body, "multitask_strategy", MULTITASK_STRATEGIES) ?? "reject",
    ifNotExists: optionalEnum(body, "if_not_exists", ["reject", "create"] as const) ?? "reject",
    keepThread:
      (optionalEnum(body, "on_completion", ["delete", "keep"] as const) ?? "delete") === "keep",
    afterSeconds,
    onDisconnect:
      optionalEnum(body, "on_disconnect", ["cancel", "continue"] as const) ?? "continue",
  };
}

export function commandOf(command: Record<string, unknown>): NonNullable<RunKwargs["command"]> {
  for (const key of Object.keys(command)) {
    if (key !== "resume" && key !== "update" && key !== "goto") {
      throw new InvalidRequestError("command", `expected resume, update or goto, got ${key}`);
    }
  }
  if (command.goto !== undefined && command.goto !== null) {
    const gotos = Array.isArray(command.goto) ? command.goto : [command.goto];
    if (!gotos.every((target) => typeof target === "string" || isPlainObject(target))) {
      throw new InvalidRequestError("command.goto", "expected node names or sends");
    }
  }
  return {
    ...(command.resume !== undefined ? { resume: command.resume } : {}),
    ...(command.update !== undefined && command.update !== null ? { update: command.update } : {}),
    ...(command.goto !== undefined && command.goto !== null ? { goto: command.goto } : {}),
  };
}

function interruptsOf(
  body: Record<string, unknown>,
): Pick<RunKwargs, "interruptBefore" | "interruptAfter"> {
  const read = (field: "interrupt_before" | "interrupt_after") => {
    const value = body[field];
    if (value === undefined || value === null) return undefined;
    if (value === "*") return "*" as const;
    if (Array.isArray(value) && value.every((node) => typeof node === "string"))
      return value as string[];
    throw new InvalidRequestError(
      field,
      `expected "*" or a list of node names, got ${describe(value)}`,
    );
  };
  const before = read("interrupt_before");
  const after = read("interrupt_after");
  return {
    ...(before !== undefined ? { interruptBefore: before } : {}),
    ...(after !== undefined ? { interruptAfter: after } : {}),
  };
}

function streamOptionsOf(
  body: Record<string, unknown>,
): Pick<RunKwargs, "streamMode" | "streamSubgraphs" | "streamResumable"> {
  const raw = body.stream_mode;
  let modes: string[] | undefined;
  if (raw !== undefined && raw !== null) {
    const list = Array.isArray(raw) ? raw : [raw];
    for (const mode of list) {
      if (typeof mode !== "string" || !(STREAM_MODES as readonly string[]).includes(mode)) {
        throw new InvalidRequestError(
          "stream_mode",
          `expected ${STREAM_MODES.join(", ")} (one or a list), got ${describeValue(mode)}`,
        );
      }
    }
    modes = list as string[];
  }
  const subgraphs = body.stream_subgraphs;
  if (subgraphs !== undefined && subgraphs !== null && typeof subgraphs !== "boolean") {
    throw new InvalidRequestError(
      "stream_subgraphs",
      `expected a boolean, got ${describe(subgraphs)}`,
    );
  }
  const resumable = body.stream_resumable;
  if (resumable !== undefined && resumable !== null && typeof resumable !== "boolean") {
    throw new InvalidRequestError(
      "stream_resumable",
      `expected a boolean, got ${describe(resumable)}`,
    );
  }
  return {
    ...(modes ? { streamMode: modes } : {}),
    ...(subgraphs === true ? { streamSubgraphs: true } : {}),
    ...(resumable === true ? { streamResumable: true } : {}),
  };
}

/** One of `allowed`, compared as an own value (a client string never reaches an object's prototype). */
export function optionalEnum<T extends string>(
  body: Record<string, unknown>,
  field: string,
  allowed: readonly T[],
): T | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || !allowed.includes(value as T)) {
    throw new InvalidRequestError(
      field,
      `expected one of ${allowed.map((item) => JSON.stringify(item)).join(", ")}, got ${describeValue(value)}`,
    );
  }
  return value as T;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
