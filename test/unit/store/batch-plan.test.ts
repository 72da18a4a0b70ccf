import { planBatch } from "../../../src/store/batch-plan";
import { checkOperations } from "../../../src/store/operations";

const plan = (operations: unknown[]) =>
  planBatch(checkOperations(operations, { maxValueBytes: 1024, index: undefined })).map((step) => ({
    gets: step.gets.map(({ position }) => position),
    searches: step.searches.map(({ position }) => position),
    listings: step.listings.map(({ position }) => position),
    writes: [...step.writes.values()].map((write) => `${write.namespace.join("/")}:${write.key}`),
  }));

describe("planBatch", () => {
  it("runs independent reads and writes in one step", () => {
    expect(
      plan([
        { namespace: ["a"], key: "1" },
        { namespace: ["b"], key: "2", value: { n: 1 } },
        { namespace: ["a"], key: "3" },
        { namespacePrefix: ["a"] },
      ]),
    ).toEqual([{ gets: [0, 2], searches: [3], listings: [], writes: ["b:2"] }]);
  });

  it("starts a new step when a read depends on an earlier write of its step", () => {
    expect(
      plan([
        { namespace: ["a"], key: "1", value: { n: 1 } },
        { namespace: ["a"], key: "1" },
        { namespace: ["a", "b"], key: "2", value: { n: 2 } },
        { namespacePrefix: ["a"] },
        { namespace: ["z"], key: "3", value: { n: 3 } },
        { matchConditions: undefined, limit: 10, offset: 0 },
      ]),
    ).toEqual([
      { gets: [], searches: [], listings: [], writes: ["a:1"] },
      { gets: [1], searches: [], listings: [], writes: ["a/b:2"] },
      { gets: [], searches: [3], listings: [], writes: ["z:3"] },
      { gets: [], searches: [], listings: [5], writes: [] },
    ]);
  });

  it("keeps only the last write to an item within a step", () => {
    const steps = planBatch(
      checkOperations(
        [
          { namespace: ["a"], key: "1", value: { n: 1 } },
          { namespace: ["a"], key: "2", value: { n: 2 } },
          { namespace: ["a"], key: "1", value: null },
        ],
        { maxValueBytes: 1024, index: undefined },
      ),
    );
    expect(steps).toHaveLength(1);
    expect([...steps[0]!.writes.values()].map((w) => [w.key, w.value === undefined])).toEqual([
      ["2", false],
      ["1", true],
    ]);
  });

  it("does not wait for a write a search cannot see", () => {
    expect(
      plan([{ namespace: ["ab"], key: "1", value: { n: 1 } }, { namespacePrefix: ["a"] }]),
    ).toEqual([{ gets: [], searches: [1], listings: [], writes: ["ab:1"] }]);
  });
});
