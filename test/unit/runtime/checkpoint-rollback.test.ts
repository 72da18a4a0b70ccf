import { MemorySaver, emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { BoundedInMemorySaver } from "../../../src/checkpoint/memory";
import { RunEngine, type EngineOptions } from "../../../src/runtime/graphs/engine";
import { RequestScope } from "../../../src/runtime/graphs/scoped-checkpointer";
import type { AnySaver } from "../../../src/runtime/types";
import { supportsCheckpointRollback } from "../../../src/shared/checkpoint-rollback";
import { CheckpointStoreError } from "../../../src/shared/errors";
import { scopeThreadId } from "../../../src/shared/tenant-scope";

// The run machinery rolls a run back through the tenant's scope (ids scoped as for every saver call) or through
// the graphs' shared checkpointer; both reach the request's saver.
async function putOne(saver: AnySaver, threadId: string): Promise<string> {
  const checkpoint = { ...emptyCheckpoint(), id: uuid6(-1) };
  await saver.put(
    { configurable: { thread_id: threadId, checkpoint_ns: "" } },
    checkpoint,
    {
      source: "loop",
      step: 0,
      parents: {},
    },
    {},
  );
  return checkpoint.id;
}

function engineWith(saver: AnySaver, bound: boolean): RunEngine {
  // Only the saver matters to tenant(): the rest of the engine is not used here.
  return new RunEngine({ saverFor: () => ({ saver, bound }) } as unknown as EngineOptions);
}

describe("checkpoint rollback in the runtime", () => {
  it("the tenant scope deletes under the thread id the saver sees (tenant-prefixed for a shared saver)", async () => {
    const saver = new BoundedInMemorySaver();
    const scoped = scopeThreadId("acme", "thread-1");
    const kept = await putOne(saver, scoped);
    await putOne(saver, scoped);
    const otherTenant = await putOne(saver, scopeThreadId("other", "thread-1"));

    const scope = engineWith(saver, false).tenant("acme");
    await scope.deleteCheckpointsAfter!("thread-1", kept);
    expect((await saver.getTuple({ configurable: { thread_id: scoped } }))?.checkpoint.id).toBe(
      kept,
    );
    const other = { configurable: { thread_id: scopeThreadId("other", "thread-1") } };
    expect((await saver.getTuple(other))?.checkpoint.id).toBe(otherTenant);
  });

  it("the tenant scope offers no rollback when the saver has none", () => {
    expect(
      engineWith(new MemorySaver(), false).tenant("acme").deleteCheckpointsAfter,
    ).toBeUndefined();
  });

  it("the shared checkpointer forwards it to the request's saver, and refuses a saver without it", async () => {
    const requests = new RequestScope();
    expect(supportsCheckpointRollback(requests.checkpointer)).toBe(true);
    const saver = new BoundedInMemorySaver();
    await putOne(saver, "t");
    await requests.run(saver, () => requests.checkpointer.deleteCheckpointsAfter("t", undefined));
    expect(await saver.getTuple({ configurable: { thread_id: "t" } })).toBeUndefined();

    await expect(
      requests.run(new MemorySaver(), () =>
        requests.checkpointer.deleteCheckpointsAfter("t", undefined),
      ),
    ).rejects.toThrow(CheckpointStoreError);
  });
});
