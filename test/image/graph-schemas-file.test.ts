import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GRAPH_SCHEMAS_FILE, readGraphSchemasFile } from "../../image/graph-schemas-file";
import { InvalidConfigurationError } from "../../src/shared/errors";

/** The task root's graph-schemas.json (written by the image build), read and checked at cold start. */
describe("graph-schemas.json in the task root", () => {
  const taskRoot = (content?: string) => {
    const directory = mkdtempSync(join(tmpdir(), "memory-table-schemas-file-"));
    if (content !== undefined) writeFileSync(join(directory, GRAPH_SCHEMAS_FILE), content);
    return directory;
  };

  it("gives none when the tree has no such file", () => {
    expect(readGraphSchemasFile(taskRoot())).toBeUndefined();
  });

  it("gives each graph's schemas and its subgraphs'", () => {
    const schemas = {
      booking: { graph: { state: { type: "object" } }, subgraphs: { inner: { input: {} } } },
    };
    expect(readGraphSchemasFile(taskRoot(JSON.stringify(schemas)))).toEqual(schemas);
  });

  it.each([
    ["not JSON", "{", /Invalid graph-schemas\.json: expected JSON/],
    ["an array", "[]", /Invalid graph-schemas\.json: expected an object of graph id/],
    [
      "a schema that is not an object",
      JSON.stringify({ booking: { graph: { state: "object" } } }),
      /Invalid graph-schemas\.json\.booking\.graph\.state: expected a JSON schema object, got string/,
    ],
    [
      "subgraphs that are not an object",
      JSON.stringify({ booking: { graph: {}, subgraphs: [] } }),
      /Invalid graph-schemas\.json\.booking\.subgraphs: expected an object/,
    ],
  ])("fails the init naming the entry for %s", (_, content, message) => {
    const read = () => readGraphSchemasFile(taskRoot(content));
    expect(read).toThrow(InvalidConfigurationError);
    expect(read).toThrow(message);
  });
});
