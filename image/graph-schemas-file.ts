import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { checkSourceSchemas, type SourceSchemasByGraph } from "../src/runtime/graphs/graph-schemas";
import { InvalidConfigurationError } from "../src/shared/errors";

/**
 * `graph-schemas.json` in the task root: the bundled example's JSON schemas, read from its TypeScript when the image
 * was built (scripts/build-image.ts), since Lambda has no TypeScript compiler. Served by `GET
 * /assistants/{id}/schemas` for the example's Annotation graph.
 */
export const GRAPH_SCHEMAS_FILE = "graph-schemas.json";

/** The file's schemas, checked; none when the tree has no such file. A file that is not valid fails the init. */
export function readGraphSchemasFile(taskRoot: string): SourceSchemasByGraph | undefined {
  const path = join(taskRoot, GRAPH_SCHEMAS_FILE);
  if (!existsSync(path)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new InvalidConfigurationError(GRAPH_SCHEMAS_FILE, `expected JSON in ${path}`, {
      cause: error,
    });
  }
  return checkSourceSchemas(parsed, GRAPH_SCHEMAS_FILE);
}
