import { randomUUID } from "node:crypto";
import { uuid6 } from "@langchain/langgraph-checkpoint";
import { checkpointIdMintedAt } from "../../../../src/checkpoint/dynamodb/checkpoint-ids";

describe("checkpointIdMintedAt", () => {
  it("reads the time LangGraph's uuid6 minted an id, to within a few milliseconds", () => {
    for (const clockseq of [-1, 0, 7]) {
      const before = Date.now();
      const minted = checkpointIdMintedAt(uuid6(clockseq));
      const after = Date.now();
      expect(minted).toBeDefined();
      // uuid6 may run a millisecond ahead when it mints many ids in one millisecond.
      expect(minted!).toBeGreaterThanOrEqual(before - 2);
      expect(minted!).toBeLessThanOrEqual(after + 2);
    }
  });

  it("reads the time of a known UUIDv6, in either case", () => {
    // RFC 9562's example UUIDv6: 2022-02-22 14:22:22 GMT-05:00.
    const expected = Date.parse("2022-02-22T19:22:22.000Z");
    expect(checkpointIdMintedAt("1EC9414C-232A-6B00-B3C8-9F6BDECED846")).toBe(expected);
    expect(checkpointIdMintedAt("1ec9414c-232a-6b00-b3c8-9f6bdeced846")).toBe(expected);
  });

  it("orders ids minted later as later", () => {
    const ids = Array.from({ length: 50 }, () => uuid6(-1));
    const times = ids.map((id) => checkpointIdMintedAt(id)!);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it.each([
    ["a UUIDv4", randomUUID()],
    ["a UUIDv1 of the same instant as the RFC example", "c232ab00-9414-11ec-b3c8-9f6bdeced846"],
    ["a UUIDv7", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"],
    ["an id that is not a UUID", "checkpoint-1"],
    ["the empty string", ""],
    ["a UUIDv6 with text around it", "x1ec9414c-232a-6b00-b3c8-9f6bdeced846"],
  ])("gives undefined for %s", (_, id) => {
    expect(checkpointIdMintedAt(id)).toBeUndefined();
  });
});
