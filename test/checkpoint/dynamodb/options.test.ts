import { randomUUID } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBSaver, InvalidConfigurationError } from "../../../src";
import { localEndpoint } from "../../support/dynamodb";
import { LOCAL_CLIENT_CONFIG } from "../../support/dynamodb-local";

// Promise: options the saver cannot honour are refused at construction with InvalidConfigurationError naming
// the option, before any request. A typo'd or unknown option is refused too: silently ignoring `ttl: 5` would
// leave threads living for the 30-day default.

type Options = ConstructorParameters<typeof DynamoDBSaver>[0];

let counted: DynamoDBClient;
const requests: string[] = [];

beforeAll(() => {
  counted = new DynamoDBClient({ ...LOCAL_CLIENT_CONFIG, endpoint: localEndpoint() });
  counted.middlewareStack.add(
    (next, context) => async (args) => {
      requests.push(String(context.commandName));
      return next(args);
    },
    { step: "initialize", name: "requestCounter" },
  );
});
afterAll(() => counted.destroy());
beforeEach(() => {
  requests.length = 0;
});

function validOptions(): Options {
  return { tableName: "memory-table", client: counted, tenantId: `tenant-${randomUUID()}` };
}

const CONSTRUCTED = "constructed without an error";

/** Constructs a saver from `options` and returns what it threw, or CONSTRUCTED. */
function constructionError(options: unknown): unknown {
  try {
    new DynamoDBSaver(options as Options);
    return CONSTRUCTED;
  } catch (error) {
    return error;
  }
}

function expectRefused(options: unknown, option: string): void {
  const error = constructionError(options);
  expect(error).toBeInstanceOf(InvalidConfigurationError);
  expect((error as Error).message).toContain(option);
  expect(requests).toEqual([]);
}

describe("DynamoDBSaver refuses invalid options at construction", () => {
  it.each<[string, unknown]>([
    ["gzip", "gzip"],
    ["1", 1],
    ["null", null],
    ["an empty string", ""],
    ["BROTLI", "BROTLI"],
  ])("refuses compression %s", (_name, compression) => {
    expectRefused({ ...validOptions(), compression }, "compression");
  });

  it.each<[string, unknown]>([
    ["0", 0],
    ["-1", -1],
    ["1.5", 1.5],
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ['the string "60"', "60"],
  ])("refuses ttlSeconds %s", (_name, ttlSeconds) => {
    expectRefused({ ...validOptions(), ttlSeconds }, "ttlSeconds");
  });

  it.each<[string, unknown]>([
    ["0", 0],
    ["NaN", Number.NaN],
    ["-1", -1],
    ['the string "4194304"', "4194304"],
  ])("refuses maxCheckpointBytes %s", (_name, maxCheckpointBytes) => {
    expectRefused({ ...validOptions(), maxCheckpointBytes }, "maxCheckpointBytes");
  });

  it.each<[string, unknown]>([
    ["an empty string", ""],
    ["undefined", undefined],
    ["a number", 123],
  ])("refuses tableName %s", (_name, tableName) => {
    expectRefused({ ...validOptions(), tableName }, "tableName");
  });

  it.each<[string, Record<string, unknown>]>([
    ["ttl (for ttlSeconds)", { ttl: 5 }],
    ["maxBytes (for maxCheckpointBytes)", { maxBytes: 1024 }],
    ["table (for tableName)", { table: "other-table" }],
  ])("refuses the unknown option %s", (_name, extra) => {
    const [option] = Object.keys(extra);
    expectRefused({ ...validOptions(), ...extra }, option!);
  });

  it.each<[string, unknown]>([
    ["undefined", undefined],
    ["null", null],
    ["a string", "memory-table"],
    ["a number", 42],
    ["an array", []],
  ])("refuses %s as options with InvalidConfigurationError", (_name, options) => {
    expect(constructionError(options)).toBeInstanceOf(InvalidConfigurationError);
    expect(requests).toEqual([]);
  });

  it.each<[string, Partial<Options>]>([
    ["defaults", {}],
    ["compression none", { compression: "none" }],
    ["compression brotli", { compression: "brotli" }],
    ["ttlSeconds 60 and maxCheckpointBytes 1024", { ttlSeconds: 60, maxCheckpointBytes: 1024 }],
    ["a clock", { now: () => 0 }],
  ])("accepts valid options (%s) without a request", (_name, extra) => {
    expect(constructionError({ ...validOptions(), ...extra })).toBe(CONSTRUCTED);
    expect(requests).toEqual([]);
  });
});
