import { randomUUID } from "node:crypto";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { checkpointIdMintedAt } from "../../../src/checkpoint/dynamodb/checkpoint-ids";
import { instrumentedClient, metadata, useSaverTable } from "./saver-fixtures";

// Promise: a run's checkpoint on a thread the saver knows is written without reading anything back, when
// LangGraph minted its id at or after the saver's creation, in the same millisecond too (the saver's clock and
// uuid6 both count milliseconds). An id minted before the saver existed pays the read of the writes stored in it.
describe("DynamoDBSaver: a new checkpoint's first put (integration)", () => {
  const table = useSaverTable("memory-table-first-put");

  async function putFirstCheckpoint(createdAtFromMinted: (minted: number) => number) {
    const { client, requests } = instrumentedClient();
    const id = uuid6(-1);
    const minted = checkpointIdMintedAt(id)!;
    const saver = table.newSaver(`tenant-${randomUUID()}`, {
      client,
      now: () => createdAtFromMinted(minted),
    });
    const threadId = `thread-${randomUUID()}`;
    // As a run that created its thread tells it (EmptyThreadHint): the saver knows the thread, which has nothing.
    saver.assumeEmptyThread(threadId);
    await saver.put(
      { configurable: { thread_id: threadId, checkpoint_ns: "" } },
      { ...emptyCheckpoint(), id },
      metadata,
      {},
    );
    return requests;
  }

  it("reads nothing for an id minted in the millisecond the saver was created", async () => {
    const requests = await putFirstCheckpoint((minted) => minted);
    expect(requests).not.toContain("GetItemCommand");
    expect(requests).not.toContain("QueryCommand");
    expect(requests).toContain("BatchWriteItemCommand");
  });

  it("reads the stored writes of an id minted before the saver existed", async () => {
    const requests = await putFirstCheckpoint((minted) => minted + 1);
    expect(requests).toContain("GetItemCommand");
  });
});
