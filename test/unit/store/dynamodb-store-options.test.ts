import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { InvalidConfigurationError, InvalidIdentifierError } from "../../../src/shared/errors";
import { DynamoDBStore } from "../../../src/store/dynamodb-store";
import { TableContext } from "../../../src/table/context";

// Construction only: every option is checked before any request (no engine needed).
const client = new DynamoDBClient({ region: "us-east-1" });
afterAll(() => client.destroy());

describe("DynamoDBStore options", () => {
  it("binds the store to its tenant", () => {
    expect(new DynamoDBStore({ tableName: "t", client, tenantId: "acme" }).tenantId).toBe("acme");
    const table = new TableContext({ tableName: "t", client });
    expect(new DynamoDBStore({ table, tenantId: "globex" }).tenantId).toBe("globex");
  });

  it.each([
    [
      "tenantId: 'a#b'",
      { tableName: "t", client, tenantId: "a#b" },
      InvalidIdentifierError,
      'Invalid tenant id: expected no "#" character',
    ],
    [
      "a missing tenant id",
      { tableName: "t", client },
      InvalidIdentifierError,
      "Invalid tenant id: expected a string",
    ],
    [
      "a missing table name",
      { tenantId: "a", client },
      InvalidConfigurationError,
      "Invalid tableName: expected a non-empty string",
    ],
    [
      "region: 'x'",
      { tenantId: "a", tableName: "t", client, region: "x" },
      InvalidConfigurationError,
      "Invalid region: expected one of",
    ],
    [
      "clientConfig: {}",
      { tenantId: "a", tableName: "t", client, clientConfig: {} },
      InvalidConfigurationError,
      "Invalid clientConfig: expected either client or clientConfig, got both",
    ],
    [
      "maxValueBytes: 0",
      { tenantId: "a", tableName: "t", client, maxValueBytes: 0 },
      InvalidConfigurationError,
      "Invalid maxValueBytes: expected an integer from 1 to 327680, got 0",
    ],
    [
      "maxValueBytes: 400 * 1024",
      { tenantId: "a", tableName: "t", client, maxValueBytes: 400 * 1024 },
      InvalidConfigurationError,
      "Invalid maxValueBytes",
    ],
    [
      "ttl: { defaultTtl: 0 }",
      { tenantId: "a", tableName: "t", client, ttl: { defaultTtl: 0 } },
      InvalidConfigurationError,
      "Invalid ttl.defaultTtl",
    ],
    [
      "index: { dims: 8 }",
      { tenantId: "a", tableName: "t", client, index: { dims: 8 } },
      InvalidConfigurationError,
      "Invalid index.embeddings",
    ],
    [
      "now: 'later'",
      { tenantId: "a", tableName: "t", client, now: "later" },
      InvalidConfigurationError,
      "Invalid now: expected a function, got a string",
    ],
  ])("refuses %s", (_label, options, type, message) => {
    const build = () => new DynamoDBStore(options as never);
    expect(build).toThrow(type);
    expect(build).toThrow(message);
  });

  it("refuses table-level options next to a table context (the context carries them)", () => {
    const table = new TableContext({ tableName: "t", client });
    expect(() => new DynamoDBStore({ table, tenantId: "a", now: Date.now })).toThrow(
      "Invalid now: expected it absent when a table context is given",
    );
    expect(() => new DynamoDBStore({ table: {} as TableContext, tenantId: "a" })).toThrow(
      "Invalid table: expected a TableContext, got an object",
    );
  });
});
