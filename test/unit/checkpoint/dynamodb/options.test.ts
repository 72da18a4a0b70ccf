import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import {
  DEFAULT_MAX_CHECKPOINT_BYTES,
  DEFAULT_MAX_WRITES_BYTES,
  resolveSaverOptions,
  type DynamoDBSaverOptions,
} from "../../../../src/checkpoint/dynamodb/options";
import { DEFAULT_TTL_SECONDS } from "../../../../src/shared/defaults";
import { InvalidConfigurationError, InvalidIdentifierError } from "../../../../src/shared/errors";
import { TableContext } from "../../../../src/table/context";

// Constructing a client sends nothing: these tests never reach DynamoDB.
const client = new DynamoDBClient({ region: "us-east-1" });
const table = new TableContext({ tableName: "memory-table", client });
const base: DynamoDBSaverOptions = {
  tenantId: "acme",
  tableName: "memory-table",
  clientConfig: { region: "us-east-1" },
};

/** The error resolving `options` throws (the options are loosely typed: callers may be JavaScript). */
function refusal(options: unknown): unknown {
  try {
    resolveSaverOptions(options as DynamoDBSaverOptions);
  } catch (error) {
    return error;
  }
  return undefined;
}

afterAll(() => client.destroy());

describe("resolveSaverOptions", () => {
  it("fills in the defaults", () => {
    const resolved = resolveSaverOptions(base);
    expect(resolved).toMatchObject({
      tenantId: "acme",
      maxCheckpointBytes: DEFAULT_MAX_CHECKPOINT_BYTES,
      maxWritesBytes: DEFAULT_MAX_WRITES_BYTES,
      compression: "brotli",
    });
    expect(DEFAULT_MAX_CHECKPOINT_BYTES).toBe(4 * 1024 * 1024);
    expect(DEFAULT_MAX_WRITES_BYTES).toBe(4 * 1024 * 1024);
    expect(resolved.table).toBeInstanceOf(TableContext);
    expect(resolved.table.tableName).toBe("memory-table");
    expect(resolved.table.expiry.ttlSeconds).toBe(DEFAULT_TTL_SECONDS);
    expect(resolved.table.now).toBe(Date.now);
  });

  it("builds the table context from a given client, TTL and clock", () => {
    const now = () => 42;
    const documents = DynamoDBDocumentClient.from(client);
    const resolved = resolveSaverOptions({
      tenantId: "acme",
      tableName: "other-table",
      client: documents,
      ttlSeconds: 60,
      now,
      maxCheckpointBytes: 1,
      maxWritesBytes: 2,
      compression: "none",
      serde: new JsonPlusSerializer(),
    });
    expect(resolved.table.tableName).toBe("other-table");
    expect(resolved.table.expiry.ttlSeconds).toBe(60);
    expect(resolved.table.now).toBe(now);
    expect(resolved).toMatchObject({
      maxCheckpointBytes: 1,
      maxWritesBytes: 2,
      compression: "none",
    });
  });

  it("uses a given table context as it is", () => {
    expect(resolveSaverOptions({ tenantId: "acme", table }).table).toBe(table);
  });

  it.each([
    ["table", { clientConfig: { region: "us-east-1" } }],
    ["table", { tableName: "memory-table" }],
    ["table", { client }],
    ["table", { ttlSeconds: 60 }],
    ["table", { now: () => 1 }],
  ])("refuses %s with %p beside it, naming the option", (_, extra) => {
    const name = Object.keys(extra)[0]!;
    const error = refusal({ tenantId: "acme", table, ...extra });
    expect(error).toBeInstanceOf(InvalidConfigurationError);
    expect(error).toMatchObject({ option: name });
    expect((error as Error).message).toBe(
      `Invalid ${name}: expected it absent when a table context is given (the context carries it)`,
    );
  });

  it.each<[string, unknown]>([
    ["options", null],
    ["options", "memory-table"],
    ["options", [base]],
    ["tableNme", { ...base, tableNme: "typo" }],
    ["compression", { ...base, compression: "gzip" }],
    ["compression", { ...base, compression: null }],
    ["serde", { ...base, serde: {} }],
    ["serde", { ...base, serde: null }],
    ["now", { ...base, now: 1 }],
    ["now", { ...base, now: null }],
    ["table", { tenantId: "acme", table: {} }],
    ["table", { tenantId: "acme", table: null }],
    ["tableName", { tenantId: "acme", clientConfig: { region: "us-east-1" } }],
    ["tableName", { ...base, tableName: "" }],
    ["tableName", { ...base, tableName: 5 }],
    ["client", { tenantId: "acme", tableName: "t", client: {} }],
    ["client", { tenantId: "acme", tableName: "t", client: null }],
    ["clientConfig", { ...base, client }],
    ["ttlSeconds", { ...base, ttlSeconds: 0 }],
    ["ttlSeconds", { ...base, ttlSeconds: -1 }],
    ["ttlSeconds", { ...base, ttlSeconds: 1.5 }],
    ["ttlSeconds", { ...base, ttlSeconds: "60" }],
    ["ttlSeconds", { ...base, ttlSeconds: Number.POSITIVE_INFINITY }],
    ["maxCheckpointBytes", { ...base, maxCheckpointBytes: 0 }],
    ["maxCheckpointBytes", { ...base, maxCheckpointBytes: Number.NaN }],
    ["maxCheckpointBytes", { ...base, maxCheckpointBytes: 2 ** 53 }],
    ["maxWritesBytes", { ...base, maxWritesBytes: -5 }],
    ["maxWritesBytes", { ...base, maxWritesBytes: "4MB" }],
  ])("refuses a bad %s, naming it", (name, options) => {
    const error = refusal(options);
    expect(error).toBeInstanceOf(InvalidConfigurationError);
    expect(error).toMatchObject({ option: name });
    expect((error as Error).message).toMatch(new RegExp(`^Invalid ${name}: expected `));
  });

  it("refuses a bad tenant id as an identifier, as every id check does", () => {
    for (const tenantId of [undefined, "", "acme#1", "a\u0000b", 7]) {
      const error = refusal({ ...base, tenantId });
      expect(error).toBeInstanceOf(InvalidIdentifierError);
      expect(error).toMatchObject({ field: "tenant id" });
    }
  });
});
