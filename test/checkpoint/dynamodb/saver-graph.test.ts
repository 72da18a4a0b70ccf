import { randomUUID } from "node:crypto";
import { QueryCommand } from "@aws-sdk/client-dynamodb";
import { Command } from "@langchain/langgraph";
import { THREADS_BY_STATUS_INDEX } from "../../../src/table/definition";
import { InvalidIdentifierError } from "../../../src/shared/errors";
import { buildBookingGraph } from "../../../src/examples/booking";
import { putValues, useSaverTable } from "./saver-fixtures";

// DynamoDBSaver under real LangGraph graphs: pause in one container, resume in another.
const table = useSaverTable("saver-graph");
const { newSaver } = table;

describe("DynamoDBSaver with a real graph (integration)", () => {
  it("pauses with one saver instance and resumes with a new one, as a second Lambda container would", async () => {
    const tenantId = `t-${randomUUID()}`;
    const config = { configurable: { thread_id: randomUUID() } };
    const booked: unknown[] = [];
    const first = buildBookingGraph({
      checkpointer: newSaver(tenantId),
      onBooked: (state) => void booked.push(state.slot),
    });
    const paused = await first.invoke({ request: "move my booking" }, config);
    expect(
      (paused as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__?.[0]?.value,
    ).toEqual({
      question: "Override the customer's slot to this time?",
      slot: "2026-09-10T14:00",
    });

    const secondSaver = newSaver(tenantId);
    const second = buildBookingGraph({
      checkpointer: secondSaver,
      onBooked: (state) => void booked.push(state.slot),
    });
    const state = await second.getState(config);
    expect(state.next).toEqual(["human_approval"]);
    const done = await second.invoke(new Command({ resume: { approve: true } }), config);
    expect(done).toEqual({
      request: "move my booking",
      slot: "2026-09-10T14:00",
      approved: true,
      booked: true,
    });
    expect(booked).toEqual(["2026-09-10T14:00"]);
  });

  it("records the status and next node on the thread record, and the inbox index finds paused threads", async () => {
    const saver = newSaver();
    const threadId = randomUUID();
    await putValues(saver, threadId, { a: 1 });
    await saver.markStatus(
      { configurable: { thread_id: threadId } },
      "PAUSED_FOR_HUMAN",
      "human_approval",
    );
    const inbox = await table.client.send(
      new QueryCommand({
        TableName: table.tableName,
        IndexName: THREADS_BY_STATUS_INDEX.name,
        KeyConditionExpression: "tenant_status = :key",
        ExpressionAttributeValues: { ":key": { S: `${saver.tenantId}#PAUSED_FOR_HUMAN` } },
      }),
    );
    expect(inbox.Items?.map((item) => [item.thread_id?.S, item.next_node?.S])).toEqual([
      [threadId, "human_approval"],
    ]);
    await expect(
      saver.markStatus({ configurable: { thread_id: threadId } }, "SLEEPING" as never),
    ).rejects.toThrow(InvalidIdentifierError);
  });
});
