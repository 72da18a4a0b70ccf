/**
 * What a run streams to its client, as LangGraph Server streams it: the client's `stream_mode`s become
 * LangGraph stream modes, and each chunk of the root graph (`[namespace, mode, payload]`) or callback event
 * (`streamEvents` v2) becomes zero or more Server-Sent Events (`values`, `updates|<namespace>`, `messages`,
 * `messages/partial`, `events`, ...). Configs lose their callbacks and internal (`__`) keys on the way out.
 */

export const STREAM_MODES = [
  "values",
  "messages",
  "messages-tuple",
  "updates",
  "events",
  "tasks",
  "checkpoints",
  "debug",
  "custom",
  "tools",
] as const;
export type StreamMode = (typeof STREAM_MODES)[number];

/** What the client asked to stream. */
export interface StreamRequest {
  modes: readonly StreamMode[];
  /** Events of subgraphs too, their names suffixed with `|<namespace>`. */
  subgraphs: boolean;
}

/** One event of the stream, before serialization. */
export interface StreamEvent {
  event: string;
  data: unknown;
}

/** LangGraph's streaming options for a request, with the modes the run itself reads (`alsoNeeded`). */
export function libraryModes(
  request: StreamRequest,
  alsoNeeded: readonly string[],
): { modes: string[]; callbackEvents: boolean } {
  const modes = new Set<string>(alsoNeeded);
  for (const mode of request.modes) {
    if (mode === "messages-tuple") modes.add("messages");
    else if (mode === "messages") modes.add("values");
    else if (mode !== "events") modes.add(mode);
  }
  // Token by token (`messages`, legacy form) and `events` come from callbacks: LangGraph's streamEvents.
  const callbackEvents = request.modes.includes("events") || request.modes.includes("messages");
  return { modes: [...modes], callbackEvents };
}

// LangGraph's chunks and callback events, loosely typed: they are reshaped, not interpreted.
/* eslint-disable @typescript-eslint/no-explicit-any */

/** Turns a run's chunks and callback events into its client's stream events. */
export class StreamTranslator {
  private readonly modes: ReadonlySet<string>;
  /** Token messages under way (legacy `messages` mode), by message id. */
  private readonly partial = new Map<string, any>();
  private readonly completed = new Set<string>();

  constructor(private readonly request: StreamRequest) {
    this.modes = new Set(request.modes);
  }

  /** A chunk of the root graph's stream: `namespace` is empty for the root graph's own. */
  fromChunk(namespace: string[], mode: string, payload: any): StreamEvent[] {
    const out: StreamEvent[] = [];
    const named = (name: string) =>
      this.request.subgraphs && namespace.length > 0 ? `${name}|${namespace.join("|")}` : name;
    if (mode === "messages") {
      if (this.modes.has("messages-tuple")) out.push({ event: named("messages"), data: payload });
    } else if (this.modes.has(mode)) {
      out.push({ event: named(mode), data: shapeChunk(mode, payload) });
    }
    // The legacy `messages` mode sends each message whole once it is in the state.
    if (this.modes.has("messages") && mode === "values") {
      const complete = this.newlyComplete(payload);
      if (complete.length > 0) out.push({ event: "messages/complete", data: complete });
    }
    return out;
  }

  /** A callback event (`streamEvents` v2) other than the root graph's stream chunks. */
  fromCallbackEvent(event: any): StreamEvent[] {
    if (event?.tags?.includes?.("langsmith:hidden")) return [];
    const out: StreamEvent[] = [];
    if (this.modes.has("events")) out.push({ event: "events", data: event });
    if (
      this.modes.has("messages") &&
      event?.event === "on_chat_model_stream" &&
      !event.tags?.includes?.("nostream")
    ) {
      const chunk = event.data?.chunk;
      const id = chunk?.id;
      if (typeof id === "string") {
        const known = this.partial.get(id);
        if (!known) {
          this.partial.set(id, chunk);
          out.push({ event: "messages/metadata", data: { [id]: { metadata: event.metadata } } });
        } else {
          this.partial.set(id, typeof known.concat === "function" ? known.concat(chunk) : chunk);
        }
        out.push({ event: "messages/partial", data: [this.partial.get(id)] });
      }
    }
    return out;
  }

  private newlyComplete(values: any): any[] {
    const messages = values?.messages;
    if (!Array.isArray(messages)) return [];
    const fresh = [];
    for (const message of messages) {
      const id = message?.id;
      if (typeof id !== "string" || this.completed.has(id)) continue;
      this.completed.add(id);
      fresh.push(message);
    }
    return fresh;
  }
}

/** The shapes LangGraph Server gives chunks of the modes that carry configs and tasks. */
function shapeChunk(mode: string, payload: any): unknown {
  switch (mode) {
    case "checkpoints":
      return { values: payload?.values, metadata: payload?.metadata, next: payload?.next ?? [] };
    case "tasks":
      return shapeTask(payload);
    case "debug":
      if (payload?.type === "checkpoint") {
        return { ...payload, payload: shapeCheckpoint(payload.payload) };
      }
      if (payload?.type === "task_result" || payload?.type === "task") {
        return { ...payload, payload: shapeTask(payload.payload) };
      }
      return payload;
    default:
      return payload;
  }
}

function shapeCheckpoint(payload: any): unknown {
  if (!payload || typeof payload !== "object") return payload;
  const { parentConfig, ...rest } = payload;
  return {
    ...rest,
    config: publicConfig(payload.config),
    parent_config: publicConfig(parentConfig),
    checkpoint: checkpointOf(payload.config),
    parent_checkpoint: checkpointOf(parentConfig),
    tasks: Array.isArray(payload.tasks) ? payload.tasks.map(shapeTask) : [],
  };
}

/** A task whose state is a subgraph's config carries that subgraph's checkpoint address instead. */
function shapeTask(task: any): unknown {
  if (!task || typeof task !== "object") return task;
  const checkpoint = task.state?.configurable ? checkpointOf(task.state) : null;
  if (!checkpoint) return task;
  const { state: _state, ...rest } = task;
  return { ...rest, checkpoint };
}

function checkpointOf(config: any): Record<string, unknown> | null {
  const configurable = config?.configurable;
  if (!configurable?.thread_id) return null;
  return {
    thread_id: configurable.thread_id,
    checkpoint_ns: configurable.checkpoint_ns ?? "",
    checkpoint_id: configurable.checkpoint_id ?? null,
    checkpoint_map: configurable.checkpoint_map ?? null,
  };
}

/** A config without its callbacks and LangGraph's internal (`__`) configurable keys. */
function publicConfig(config: any): unknown {
  if (!config || typeof config !== "object" || typeof config.configurable !== "object") {
    return config;
  }
  const { callbacks: _callbacks, ...rest } = config;
  return {
    ...rest,
    configurable: Object.fromEntries(
      Object.entries(config.configurable).filter(([key]) => !key.startsWith("__")),
    ),
  };
}
/* eslint-enable @typescript-eslint/no-explicit-any */
