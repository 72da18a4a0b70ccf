import { z } from "zod";
import { assertIdentifier } from "../../../shared/identifiers";
import { THREAD_SORT_FIELDS } from "../../../shared/threads";
import { describe, describeValue } from "../http";
import { SEARCH_STATUSES } from "../serialize";
import type { CheckpointAddress } from "../thread-state";
import {
  expecting,
  fieldList,
  integer,
  integerQuery,
  jsonObject,
  oneOf,
  optional,
} from "./request-schema";
import { commandSchema } from "./run-schemas";

/** Most records a search or count reads; beyond it the request is refused rather than answered partly. */
export const SCAN_LIMIT = 10_000;
export const MAX_SEARCH_LIMIT = 1_000;
export const MAX_SEARCH_OFFSET = SCAN_LIMIT;

/** Every field of a thread's JSON: what a search's `select` may name. */
export const SELECTABLE_FIELDS = [
  "thread_id",
  "created_at",
  "updated_at",
  "metadata",
  "config",
  "context",
  "status",
  "values",
  "interrupts",
] as const;

const searchStatus = optional(
  z.string().refine((status) => SEARCH_STATUSES.has(status), {
    error: (issue) =>
      `expected one of ${[...SEARCH_STATUSES.keys()].join(", ")}, got ${describeValue(issue.input)}`,
  }),
);

/** `threads.count`'s filter: by status, metadata and values (jsonb containment). */
export const threadCountSchema = z.looseObject({
  status: searchStatus,
  metadata: optional(jsonObject()),
  values: optional(jsonObject()),
});

/**
 * `threads.search`: the count's filter, ids (each checked as a thread id by the search), and the page: sorted,
 * paged, with `select`ed fields (a refused list names its first unknown field).
 */
export const threadSearchSchema = threadCountSchema.extend({
  ids: optional(
    z.array(z.unknown(), expecting(`a list of at most ${SCAN_LIMIT} thread ids`)).max(SCAN_LIMIT),
  ),
  limit: optional(integer(1, MAX_SEARCH_LIMIT)),
  offset: optional(integer(0, MAX_SEARCH_OFFSET)),
  sort_by: optional(oneOf(THREAD_SORT_FIELDS)),
  sort_order: optional(oneOf(["asc", "desc"])),
  select: optional(fieldList(SELECTABLE_FIELDS)),
});

/** Most supersteps, and updates per superstep, a thread may be created with. */
export const MAX_SUPERSTEPS = 100;

/** One update of a superstep: values (or a command) written as if `as_node` had returned them. */
const stateUpdate = z.looseObject(
  {
    values: z.unknown().optional(),
    as_node: z.string(expecting("a node name")),
    command: optional(commandSchema),
  },
  expecting("an object"),
);

/** `threads.create`: the thread's id, metadata and graph, and supersteps to write into it at once. */
export const threadCreateSchema = z.looseObject({
  // Checked as a thread id (a key of every saver), or a new one when absent.
  thread_id: z.unknown().optional(),
  metadata: optional(jsonObject()),
  if_exists: optional(oneOf(["raise", "do_nothing"], '"raise" or "do_nothing"')),
  // Checked against the registered graphs, which no schema knows.
  graph_id: z.unknown().optional(),
  supersteps: optional(
    z
      .array(
        z.looseObject(
          {
            updates: z
              .array(stateUpdate, expecting(`a list of 1 to ${MAX_SUPERSTEPS} updates`))
              .min(1)
              .max(MAX_SUPERSTEPS),
          },
          expecting("an object with updates"),
        ),
        expecting(`a list of at most ${MAX_SUPERSTEPS} supersteps`),
      )
      .max(MAX_SUPERSTEPS),
  ),
});

/** `threads.update`: metadata merged into the thread's. */
export const threadPatchSchema = z.looseObject({ metadata: optional(jsonObject()) });

/** A checkpoint id as a path parameter or body field, or `before` as the SDK sends it (a config or an id). */
export const checkpointIdSchema = z.unknown().transform((value, context) => {
  const id =
    typeof value === "string"
      ? value
      : (value as { configurable?: { checkpoint_id?: unknown } } | undefined)?.configurable
          ?.checkpoint_id;
  try {
    return assertIdentifier("checkpoint_id", id);
  } catch {
    context.issues.push({
      code: "custom",
      input: value,
      message: `expected a checkpoint id or config, got ${describe(value)}`,
    });
    return z.NEVER;
  }
});

/** Where in a thread's history to read or write: LangGraph Server's `checkpoint` object, without absent fields. */
const checkpointAddress = optional(
  z
    .looseObject(
      {
        checkpoint_id: optional(checkpointIdSchema),
        checkpoint_ns: optional(z.string(expecting("a string"))),
        checkpoint_map: optional(jsonObject()),
      },
      expecting("an object"),
    )
    .transform(({ checkpoint_id, checkpoint_ns, checkpoint_map }): CheckpointAddress => ({
      ...(checkpoint_id !== undefined ? { checkpoint_id } : {}),
      ...(checkpoint_ns !== undefined ? { checkpoint_ns } : {}),
      ...(checkpoint_map !== undefined ? { checkpoint_map } : {}),
    })),
);

/** `threads.updateState`: values written as if `as_node` returned them, on the latest or a given checkpoint. */
export const threadStateUpdateSchema = z.looseObject({
  values: optional(
    z.union([jsonObject(), z.array(jsonObject())], expecting("an object or a list of objects")),
  ),
  as_node: optional(z.string(expecting("a string"))),
  checkpoint: checkpointAddress,
  checkpoint_id: optional(checkpointIdSchema),
});

/** `POST /threads/{thread_id}/state/checkpoint`: the state at a checkpoint, with its subgraphs' when asked. */
export const threadStateAtSchema = z.looseObject({
  checkpoint: checkpointAddress,
  subgraphs: optional(z.boolean(expecting("a boolean"))),
});

/** `threads.getHistory` (POST): a page of checkpoints, newest first, filtered by their metadata. */
export const threadHistorySchema = z.looseObject({
  limit: optional(integer(1, 1000)),
  before: optional(checkpointIdSchema),
  metadata: optional(jsonObject()),
  checkpoint: checkpointAddress,
});

/** The GET form of the history: its page in the query. */
export const threadHistoryQuery = z.looseObject({
  limit: optional(integerQuery(1, 1000)),
  before: optional(checkpointIdSchema),
});

/** A boolean query parameter as LangGraph Server reads it (`subgraphs`): true, 1, false, 0 or empty. */
export const booleanQuerySchema = z
  .enum(["true", "1", "false", "0", ""], expecting("true or false", describeValue))
  .optional()
  .transform((value) => value === "true" || value === "1");
