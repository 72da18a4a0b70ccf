import { TableClient } from "../../src/table/client";
import { createLocalClient, createTestTable, deleteTestTable } from "../support/dynamodb";

// A write that may wait (TableClient.batchWriteSoon) on DynamoDB Local: it goes out inside the next batch write,
// as one BatchWriteItem, or alone when none comes; stored either way before its promise resolves.
const client = createLocalClient();
let tableName: string;
let table: TableClient;

beforeAll(async () => {
  tableName = await createTestTable(client, "write-riders");
  table = new TableClient(client, tableName);
});

afterAll(async () => {
  await deleteTestTable(client, tableName);
  client.destroy();
});

const item = (sk: string) => ({ pk: "t#riders", sk, value: sk });

describe("TableClient.batchWriteSoon (integration)", () => {
  it("rides with the next batch write: one BatchWriteItem stores both", async () => {
    const before = table.usage.byOperation.BatchWriteItem?.requests ?? 0;
    const riding = table.batchWriteSoon({ PutRequest: { Item: item("r#1") } });
    await table.batchWrite([{ PutRequest: { Item: item("c#1") } }]);
    await riding;
    expect((table.usage.byOperation.BatchWriteItem?.requests ?? 0) - before).toBe(1);
    expect(await table.get({ pk: "t#riders", sk: "r#1" })).toMatchObject({ value: "r#1" });
    expect(await table.get({ pk: "t#riders", sk: "c#1" })).toMatchObject({ value: "c#1" });
  });

  it("goes alone when no batch write follows, and is stored when its promise resolves", async () => {
    const before = table.usage.byOperation.BatchWriteItem?.requests ?? 0;
    await table.batchWriteSoon({ PutRequest: { Item: item("r#2") } });
    expect((table.usage.byOperation.BatchWriteItem?.requests ?? 0) - before).toBe(1);
    expect(await table.get({ pk: "t#riders", sk: "r#2" })).toMatchObject({ value: "r#2" });
  });

  it("keeps a put and a later delete of the same item in order", async () => {
    const riding = table.batchWriteSoon({ PutRequest: { Item: item("r#3") } });
    await table.batchWrite([{ DeleteRequest: { Key: { pk: "t#riders", sk: "r#3" } } }]);
    await riding;
    expect(await table.get({ pk: "t#riders", sk: "r#3" })).toBeUndefined();
  });
});
