import { z } from "zod";
import { ASSISTANT_SORT_FIELDS } from "../../../shared/assistants";
import { isAssistantUuid } from "../assistant-directory";
import { describeValue } from "../http";
import {
  expecting,
  fieldList,
  integer,
  jsonObject,
  jsonObjectWith,
  oneOf,
  optional,
  trueOrFalseQuery,
} from "./request-schema";

/** Largest page of an assistant search or version list (LangGraph Server's). */
export const MAX_ASSISTANT_PAGE = 1000;
/** Deepest offset of an assistant search or version list. */
export const MAX_ASSISTANT_OFFSET = 100_000;

/** Every field of an assistant's JSON: what a search's `select` may name. */
const ASSISTANT_FIELDS = [
  "assistant_id",
  "graph_id",
  "name",
  "description",
  "config",
  "context",
  "metadata",
  "version",
  "created_at",
  "updated_at",
] as const;

const text = optional(z.string(expecting("a string")));

/** An assistant's config, kept as sent: an object whose `tags`, `recursion_limit` and `configurable` have their types. */
const assistantConfig = jsonObjectWith(
  z.looseObject({
    tags: z.array(z.string(expecting("a string")), expecting("an array of strings")).optional(),
    recursion_limit: z.number(expecting("an integer", describeValue)).int().optional(),
    configurable: jsonObject().optional(),
  }),
);

/** What an assistant is made of (`assistants.update`: each field sent replaces the assistant's). */
export const assistantPatchSchema = z.looseObject({
  // Checked against the registered graphs, which no schema knows.
  graph_id: text,
  name: text,
  description: text,
  config: optional(assistantConfig),
  context: optional(jsonObject()),
  metadata: optional(jsonObject()),
});

/**
 * `assistants.create`: a graph (required), and the assistant's own id (a UUID) when the client picks it; "Untitled"
 * when no name is given.
 */
export const assistantCreateSchema = assistantPatchSchema.extend({
  assistant_id: optional(
    z.string(expecting("a string")).refine(isAssistantUuid, expecting("a UUID", describeValue)),
  ),
  graph_id: z.string(expecting("a string")),
  if_exists: optional(oneOf(["raise", "do_nothing"], '"raise" or "do_nothing"')),
});

/** `assistants.count`'s filter: by graph, name and metadata (containment). */
export const assistantCountSchema = z.looseObject({
  graph_id: text,
  name: text,
  metadata: optional(jsonObject()),
});

/** A page of assistants or versions. */
const page = {
  limit: optional(integer(1, MAX_ASSISTANT_PAGE)),
  offset: optional(integer(0, MAX_ASSISTANT_OFFSET)),
};

/** `assistants.search`: the count's filter, and the page: sorted, paged, with `select`ed fields. */
export const assistantSearchSchema = assistantCountSchema.extend({
  ...page,
  sort_by: optional(oneOf(ASSISTANT_SORT_FIELDS, `one of ${ASSISTANT_SORT_FIELDS.join(", ")}`)),
  sort_order: optional(oneOf(["asc", "desc"], "one of asc, desc")),
  select: optional(fieldList(ASSISTANT_FIELDS)),
});

/** `assistants.getVersions`: a page of the assistant's versions, filtered by their metadata. */
export const assistantVersionsSchema = z.looseObject({
  ...page,
  metadata: optional(jsonObject()),
});

/** `assistants.setLatest`: the version to make current. */
export const assistantLatestSchema = z.looseObject({
  version: z.number(expecting("a positive integer", describeValue)).int().min(1),
});

/** `DELETE /assistants/{assistant_id}`: the assistant's threads go too when `delete_threads` is true. */
export const assistantDeleteQuery = z.looseObject({
  delete_threads: trueOrFalseQuery().optional(),
});

const BOOLEAN_WORDS: ReadonlyMap<string, boolean> = new Map([
  ["true", true],
  ["yes", true],
  ["1", true],
  ["false", false],
  ["no", false],
  ["0", false],
]);

/** A boolean query parameter as LangGraph Server's assistant routes read it: true/yes/1 or false/no/0, any case. */
function readBooleanWord(value: string, expected: string, context: z.RefinementCtx): boolean {
  const flag = BOOLEAN_WORDS.get(value.toLowerCase());
  if (flag !== undefined) return flag;
  context.issues.push({
    code: "custom",
    input: value,
    message: `expected ${expected}, got ${describeValue(value)}`,
  });
  return z.NEVER;
}

/** `GET /assistants/{assistant_id}/graph`: `xray`, a boolean or a depth (a non-negative integer: 0 is none). */
export const assistantGraphQuery = z.looseObject({
  xray: z
    .string()
    .transform((value, context) =>
      /^\d{1,4}$/.test(value)
        ? Number(value) || false
        : readBooleanWord(value, "a boolean or a depth", context),
    )
    .optional(),
});

/** `GET /assistants/{assistant_id}/subgraphs`: the subgraphs' own subgraphs too when `recurse`. */
export const assistantSubgraphsQuery = z.looseObject({
  recurse: z
    .string()
    .transform((value, context) => readBooleanWord(value, "a boolean", context))
    .optional(),
});
