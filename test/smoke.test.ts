import { ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { createLocalClient, createTestTable, deleteTestTable } from "./support/dynamodb";

describe("DynamoDB Local (integration)", () => {
  it("creates a table from the shared definition", async () => {
    const client = createLocalClient();
    const table = await createTestTable(client);
    const { TableNames } = await client.send(new ListTablesCommand({}));
    expect(TableNames).toContain(table);
    await deleteTestTable(client, table);
    client.destroy();
  });
});
