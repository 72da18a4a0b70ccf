import type { MultitaskStrategy, RunKwargs } from "../../shared/runs";
import { InvalidRequestError } from "../../shared/errors";
import type { WebhookSender } from "../runs/webhooks";
import { parseRequest } from "./schemas/request-schema";
import { runCreateSchema } from "./schemas/run-schemas";

export { MAX_AFTER_SECONDS } from "./schemas/run-schemas";

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

/**
 * Checks a run request as LangGraph Server does (runCreateSchema; 422 naming the field), before anything is
 * written, and reads it as the run's kwargs.
 */
export function parseRunBody(value: unknown, webhooks: WebhookSender): RunBody {
  const body = parseRequest(runCreateSchema, value);
  const { command, config, checkpoint } = body;
  const checkpointId = body.checkpoint_id ?? checkpoint?.checkpoint_id;
  const checkpointNamespace = checkpoint?.checkpoint_ns;
  const kwargs: RunKwargs = {
    // With a command the input is dropped, as LangGraph Server runs the command and ignores the input: Agent Chat
    // UI resumes an interrupt with `{"input": {}, "command": {"resume": ...}}`. Neither input nor command is a
    // run without input: it continues the thread from its last checkpoint, as LangGraph Server does.
    ...(body.input !== undefined && !command ? { input: body.input } : {}),
    ...(command ? { command } : {}),
    ...(config ? { config } : {}),
    ...(body.context !== undefined && body.context !== null ? { context: body.context } : {}),
    ...(body.interrupt_before !== undefined ? { interruptBefore: body.interrupt_before } : {}),
    ...(body.interrupt_after !== undefined ? { interruptAfter: body.interrupt_after } : {}),
    ...(checkpointId !== undefined ? { checkpointId } : {}),
    ...(typeof checkpointNamespace === "string" && checkpointNamespace !== ""
      ? { checkpointNamespace }
      : {}),
    ...(body.stream_mode !== undefined
      ? { streamMode: typeof body.stream_mode === "string" ? [body.stream_mode] : body.stream_mode }
      : {}),
    ...(body.stream_subgraphs === true ? { streamSubgraphs: true } : {}),
    ...(body.stream_resumable === true ? { streamResumable: true } : {}),
    ...(body.durability ? { durability: body.durability } : {}),
  };
  if (body.webhook !== undefined) {
    const refusal = webhooks.refusal(body.webhook);
    if (refusal) throw new InvalidRequestError("webhook", refusal);
    kwargs.webhook = body.webhook;
  }
  return {
    assistantId: body.assistant_id,
    kwargs,
    metadata: body.metadata ?? {},
    strategy: body.multitask_strategy ?? "reject",
    ifNotExists: body.if_not_exists ?? "reject",
    keepThread: body.on_completion === "keep",
    afterSeconds: body.after_seconds ?? 0,
    onDisconnect: body.on_disconnect ?? "continue",
  };
}
