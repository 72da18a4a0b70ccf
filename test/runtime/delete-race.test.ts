import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { DynamoDBSaver } from "../../src/checkpoint/dynamodb/saver";
import { InMemorySaver } from "../../src/checkpoint/memory";
import { createHandler, type ApiHandler } from "../../src/runtime/handler";
import { InMemoryThreadStore } from "../../src/runtime/runs/in-memory-thread-store";
import { TableContext } from "../../src/table/context";
import type { AnySaver } from "../../src/runtime/types";
import {
  apiEvent,
  createTable,
  partitionItemCount,
  quietLogger,
  type Backend,
  type TableHandle,
} from "./support";

const State = Annotation.Root({ n: Annotation<number>() });

/** A gate the test opens; `entered` resolves when something reached it. */
function gate() {
  let open: () => void = () => undefined;
  let reached: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const entered = new Promise<void>((resolve) => (reached = resolve));
  return { open, entered, wait: () => (reached(), opened) };
}

describe.each<Backend>(["memory", "dynamodb"])("DELETE racing a run (%s)", (backend) => {
  const tenantId = `tenant-del-${backend}`;
  let table: TableHandle | undefined;
  let nodeGate = gate();
  let deleteGate: ReturnType<typeof gate> | undefined;
  let handler: ApiHandler;

  beforeEach(async () => {
    nodeGate = gate();
    deleteGate = undefined;
    // Real savers; the only hook is a pause inside deleteThread, so a run can arrive while items are removed.
    const hold = async () => {
      if (deleteGate) await deleteGate.wait();
    };
    let checkpointer: (tenant: string) => AnySaver;
    let threadStore;
    if (backend === "memory") {
      class PausingSaver extends InMemorySaver {
        override async deleteThread(threadId: string): Promise<void> {
          await hold();
          return super.deleteThread(threadId);
        }
      }
      const saver = new PausingSaver();
      checkpointer = () => saver;
      threadStore = new InMemoryThreadStore();
    } else {
      table = await createTable();
      const { client, tableName } = table;
      class PausingSaver extends DynamoDBSaver {
        override async deleteThread(threadId: string): Promise<void> {
          await hold();
          return super.deleteThread(threadId);
        }
      }
      // One table context, as the handler builds it: the savers and the thread store share its record cache.
      const context = new TableContext({ client, tableName });
      checkpointer = (tenant) => new PausingSaver({ table: context, tenantId: tenant });
      threadStore = context.threads;
    }
    handler = createHandler({
      graph: ({ checkpointer: saver }) =>
        new StateGraph(State)
          .addNode("work", async ({ n }) => {
            if (n === 1) await nodeGate.wait();
            return { n: n + 1 };
          })
          .addEdge(START, "work")
          .addEdge("work", END)
          .compile({ checkpointer: saver }),
      checkpointer,
      threadStore,
      logger: quietLogger,
      metrics: false,
    });
  });

  const start = (thread: string, n: number) =>
    handler(
      apiEvent("POST", "/invoke", {
        body: JSON.stringify({ thread_id: thread, input: { n } }),
        tenantId,
      }),
    );
  const remove = (thread: string) =>
    handler(apiEvent("DELETE", `/threads/${thread}`, { tenantId }));
  const partitionItems = async (thread: string) =>
    table ? partitionItemCount(table, tenantId, thread) : 0;

  it("answers 409 to a DELETE during a run, and deletes every item afterwards", async () => {
    const running = start("during-run", 1);
    await nodeGate.entered;
    const busy = await remove("during-run");
    expect(busy.statusCode).toBe(409);
    nodeGate.open();
    expect((await running).statusCode).toBe(200);
    expect((await remove("during-run")).statusCode).toBe(204);
    expect((await handler(apiEvent("GET", "/threads/during-run", { tenantId }))).statusCode).toBe(
      404,
    );
    expect(await partitionItems("during-run")).toBe(0);
  });

  it("answers 409 to a run arriving while a DELETE removes the items, leaving no orphans", async () => {
    expect((await start("during-delete", 5)).statusCode).toBe(200);
    deleteGate = gate();
    const deleting = remove("during-delete");
    await deleteGate.entered;
    const run = await start("during-delete", 7);
    expect(run.statusCode).toBe(409);
    deleteGate.open();
    expect((await deleting).statusCode).toBe(204);
    expect(
      (await handler(apiEvent("GET", "/threads/during-delete", { tenantId }))).statusCode,
    ).toBe(404);
    expect(await partitionItems("during-delete")).toBe(0);
    // The id is free again: a new run starts a fresh thread.
    deleteGate = undefined;
    const fresh = await start("during-delete", 10);
    expect(fresh.statusCode).toBe(200);
    expect(JSON.parse(fresh.body!).result).toEqual({ n: 11 });
  });
});
