import { z } from "zod";
import { MAX_PAGE_LIMIT, MAX_PAGE_OFFSET, RESERVED_ROOT_LABEL } from "../../../store/validation";
import { describe, describeValue } from "../http";
import { expecting, integer, jsonObject, optional, trueOrFalseQuery } from "./request-schema";

/**
 * The store's requests (`client.store.*`): their shapes and types. The store checks its own rules on what they
 * name (label length and characters, key size, TTL range, filter operators) before anything is read or written.
 */

/** A namespace label by LangGraph's rules, as LangGraph Server checks them: a non-empty string without ".". */
const namespaceLabel = z.custom<string>(
  (label) => typeof label === "string" && label !== "" && !label.includes("."),
  {
    error: (issue) =>
      `expected a non-empty string without ".", got ${
        typeof issue.input !== "string"
          ? describe(issue.input)
          : issue.input === ""
            ? "an empty string"
            : 'a string with "."'
      }`,
  },
);

/** Namespace labels; `[]` (the root) for a search or a listing's prefix only. */
const labels = z.array(namespaceLabel, expecting("an array of strings"));
const namespace = labels.min(1, "expected at least one label, got an empty array");

const itemKey = z
  .string(expecting("a non-empty string"))
  .min(1, "expected a non-empty string, got an empty string");

/**
 * `PUT /store/items`: an item's value under a namespace and key; `index` false (embed nothing), field paths, or
 * the store's own fields (absent or null); `ttl` in minutes, null: never expires, absent: the store's default.
 */
export const storePutSchema = z.looseObject({
  namespace: namespace.refine((path) => path[0] !== RESERVED_ROOT_LABEL, {
    error: `expected a root label other than "${RESERVED_ROOT_LABEL}" (reserved by LangGraph)`,
  }),
  key: itemKey,
  value: jsonObject(),
  index: optional(
    z.union(
      [z.literal(false), z.array(z.string())],
      expecting("false, null or an array of field paths", describeValue),
    ),
  ),
  ttl: z.number(expecting("a number of minutes or null", describeValue)).nullable().optional(),
});

/** `GET /store/items`: the namespace's labels joined with "." (as the SDK sends them; labels never hold one). */
export const storeGetQuery = z.looseObject({
  namespace: z.preprocess(
    (value) => (typeof value === "string" && value !== "" ? value.split(".") : []),
    namespace,
  ),
  key: itemKey,
  refresh_ttl: trueOrFalseQuery().optional(),
});

/** `DELETE /store/items`. */
export const storeDeleteSchema = z.looseObject({
  namespace: z.preprocess((value) => value ?? [], namespace),
  key: itemKey,
});

/** `POST /store/items/search`: items under a prefix (`[]`: all), filtered by their values, or by a query. */
export const storeSearchSchema = z.looseObject({
  namespace_prefix: labels,
  filter: optional(jsonObject()),
  limit: optional(integer(0, MAX_PAGE_LIMIT)),
  offset: optional(integer(0, MAX_PAGE_OFFSET)),
  query: optional(z.string(expecting("a string"))),
  refresh_ttl: optional(z.boolean(expecting("a boolean", describeValue))),
});

/** `POST /store/namespaces`: namespaces matching a prefix and a suffix ("*" any one label), to a depth. */
export const storeNamespacesSchema = z.looseObject({
  prefix: optional(labels),
  suffix: optional(labels),
  max_depth: optional(z.number(expecting("a positive integer", describeValue)).int().min(1)),
  limit: optional(integer(0, MAX_PAGE_LIMIT)),
  offset: optional(integer(0, MAX_PAGE_OFFSET)),
});
