import { z } from "zod";
import { isRunStatus, MULTITASK_STRATEGIES, type RunKwargs } from "../../../shared/runs";
import { STREAM_MODES } from "../../graphs/stream-translator";
import { describe, describeValue } from "../http";
import { expecting, integerQuery, jsonObject, oneOf, optional } from "./request-schema";

/** Longest `after_seconds`: a leg waits it out before it starts. */
export const MAX_AFTER_SECONDS = 600;

const COMMAND_FIELDS = ["resume", "update", "goto"] as const;

/**
 * LangGraph's Command as a request sends it (a run's `command`, a superstep update's): `resume`, `update` and
 * `goto` only; read as RunKwargs' command, without the fields left null.
 */
export const commandSchema = z
  .strictObject(
    {
      resume: z.unknown().optional(),
      update: z.unknown().optional(),
      goto: optional(
        z.union([z.string(), jsonObject(), z.array(z.union([z.string(), jsonObject()]))], {
          error: () => "expected node names or sends",
        }),
      ),
    },
    {
      error: (issue) =>
        issue.code === "unrecognized_keys"
          ? `expected ${COMMAND_FIELDS.slice(0, -1).join(", ")} or ${COMMAND_FIELDS.at(-1)}, got ${issue.keys[0]}`
          : `expected an object, got ${describe(issue.input)}`,
    },
  )
  .transform((command): NonNullable<RunKwargs["command"]> => ({
    ...(command.resume !== undefined ? { resume: command.resume } : {}),
    ...(command.update !== undefined && command.update !== null ? { update: command.update } : {}),
    ...(command.goto !== undefined ? { goto: command.goto } : {}),
  }));

/** `interrupt_before` / `interrupt_after`: every node, or the ones named. */
const interruptNodes = optional(
  z.union([z.literal("*"), z.array(z.string())], expecting('"*" or a list of node names')),
);

/** One stream mode or a list; a refused list names its first unknown mode. */
const streamModes = optional(
  z.union([z.enum(STREAM_MODES), z.array(z.enum(STREAM_MODES))], {
    error: (issue) => {
      const modes: unknown[] = Array.isArray(issue.input) ? issue.input : [issue.input];
      const unknown = modes.find(
        (mode) => typeof mode !== "string" || !(STREAM_MODES as readonly string[]).includes(mode),
      );
      return `expected ${STREAM_MODES.join(", ")} (one or a list), got ${describeValue(unknown)}`;
    },
  }),
);

const flag = optional(z.boolean(expecting("a boolean")));

/**
 * A run request's body: LangGraph Server's RunCreate (stateful and stateless alike, a batch's items too). Fields
 * the reference accepts but that change nothing here (`feedback_keys`, `langsmith_tracer`, `on_disconnect` on
 * buffered routes) are accepted and ignored, as unknown ones are.
 */
export const runCreateSchema = z.looseObject({
  // Checked against the tenant's assistants, with LangGraph Server's words for an unknown one.
  assistant_id: z.unknown().optional(),
  input: z.unknown().optional(),
  command: optional(commandSchema),
  config: optional(
    z.looseObject(
      {
        configurable: jsonObject().optional(),
        recursion_limit: z
          .number(expecting("a positive integer", describeValue))
          .int()
          .min(1)
          .optional(),
      },
      expecting("an object"),
    ),
  ),
  context: z.unknown().optional(),
  interrupt_before: interruptNodes,
  interrupt_after: interruptNodes,
  checkpoint_id: optional(z.string(expecting("a string"))),
  checkpoint: optional(
    z.looseObject(
      {
        checkpoint_id: optional(z.string(expecting("a string"))),
        checkpoint_ns: z.unknown().optional(),
      },
      expecting("an object"),
    ),
  ),
  stream_mode: streamModes,
  stream_subgraphs: flag,
  stream_resumable: flag,
  // Checked against the hosts the operator allowed (WebhookSender), which no schema knows.
  webhook: optional(z.string(expecting("a string"))),
  durability: optional(oneOf(["sync", "async", "exit"])),
  after_seconds: optional(
    z
      .number(expecting(`a number from 0 to ${MAX_AFTER_SECONDS}`, describeValue))
      .min(0)
      .max(MAX_AFTER_SECONDS),
  ),
  metadata: optional(jsonObject()),
  multitask_strategy: optional(oneOf(MULTITASK_STRATEGIES)),
  if_not_exists: optional(oneOf(["reject", "create"])),
  on_completion: optional(oneOf(["delete", "keep"])),
  on_disconnect: optional(oneOf(["cancel", "continue"])),
});

export type RunCreateRequest = z.output<typeof runCreateSchema>;

/** `GET /threads/{thread_id}/runs`: a page of the thread's runs, of one status when named. */
export const runListQuery = z.looseObject({
  limit: optional(integerQuery(1, 1000)),
  offset: optional(integerQuery(0, 100_000)),
  status: optional(
    z.string().refine(isRunStatus, {
      error: (issue) => `expected a run status, got ${JSON.stringify(issue.input)}`,
    }),
  ),
});

/** `POST /threads/{thread_id}/runs/{run_id}/cancel`: how to stop the run, and whether to wait for it. */
export const runCancelQuery = z.looseObject({
  action: optional(oneOf(["interrupt", "rollback"])),
  wait: z.unknown().optional(),
});
