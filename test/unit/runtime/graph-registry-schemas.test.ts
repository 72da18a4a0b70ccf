import pino from "pino";
import { buildBookingGraph } from "../../../src/examples/booking";
import { GraphRegistry } from "../../../src/runtime/graphs/graph-registry";
import type { SourceSchemasByGraph } from "../../../src/runtime/graphs/graph-schemas";
import type { GraphFactory } from "../../../src/runtime/types";
import { InvalidConfigurationError } from "../../../src/shared/errors";

/**
 * The registry's source schemas, given at once or as a promise (the dev server's reading in a worker thread):
 * asked for before the promise settles, they are answered once it has, never empty meanwhile; bad ones are
 * refused (at creation when given at once, on each ask when a promise brings them) without an unhandled rejection.
 */
const booking: GraphFactory = ({ checkpointer }) => buildBookingGraph({ checkpointer });
const logger = pino({ level: "silent" });
const SCHEMAS: SourceSchemasByGraph = {
  booking: { graph: { state: { type: "object" } }, subgraphs: {} },
};

function registry(schemas?: SourceSchemasByGraph | Promise<SourceSchemasByGraph>): GraphRegistry {
  return new GraphRegistry({ booking }, undefined, logger, undefined, schemas);
}

describe("graph registry: source schemas given at once or as a promise", () => {
  it("answers schemas given at once, and none for a graph they do not name", async () => {
    const given = registry(SCHEMAS);
    await expect(given.schemasFromSource("booking")).resolves.toEqual(SCHEMAS.booking);
    await expect(given.schemasFromSource("other")).resolves.toBeUndefined();
    await expect(registry().schemasFromSource("booking")).resolves.toBeUndefined();
  });

  it("answers a promise's schemas only once it settles", async () => {
    let settle!: (schemas: SourceSchemasByGraph) => void;
    const given = registry(new Promise<SourceSchemasByGraph>((resolve) => (settle = resolve)));
    const events: string[] = [];
    const asked = given.schemasFromSource("booking").then((schemas) => {
      events.push("answered");
      return schemas;
    });
    await new Promise((resolve) => setImmediate(resolve));
    events.push("settled");
    settle(SCHEMAS);
    await expect(asked).resolves.toEqual(SCHEMAS.booking);
    expect(events).toEqual(["settled", "answered"]);
  });

  it("refuses bad schemas at creation when given at once, and on each ask when a promise brings them", async () => {
    const bad = {
      booking: { graph: { state: "not a schema" } },
    } as unknown as SourceSchemasByGraph;
    expect(() => registry(bad)).toThrow(InvalidConfigurationError);
    const late = registry(Promise.resolve(bad));
    await expect(late.schemasFromSource("booking")).rejects.toThrow(
      "graphSchemas.booking.graph.state",
    );
    const failed = registry(Promise.reject(new Error("the reading crashed")));
    await expect(failed.schemasFromSource("booking")).rejects.toThrow("the reading crashed");
  });
});
