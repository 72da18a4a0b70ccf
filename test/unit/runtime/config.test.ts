import { readRuntimeConfig, requireTableName } from "../../../src/runtime/config";
import { InvalidConfigurationError } from "../../../src/shared/errors";

/** The runtime's cold-start configuration: defaults filled in, every bad value fails naming the variable. */
describe("runtime configuration from the environment", () => {
  const valid = { TABLE_NAME: "memory-table" };

  it("reads a complete environment", () => {
    expect(
      readRuntimeConfig({
        TABLE_NAME: "memory-table.prod_1",
        GRAPH_MODULE: "/opt/graphs/agent.mjs",
        TENANT_CLAIM: "custom:org",
        LOG_LEVEL: "debug",
        DEADLINE_MARGIN_MS: "2500",
        DYNAMODB_ENDPOINT: "http://127.0.0.1:8000",
        WORKER_FUNCTION_NAME: "memory-table-worker",
        MAX_RUN_LEGS: "3",
        WEBHOOK_ALLOWED_HOSTS: "hooks.example.com, Ops.Example.org:8443",
        LANGSMITH_TRACING: "true",
        API_KEY_CACHE_SECONDS: "15",
        CRONS_ENABLED: "false",
      }),
    ).toEqual({
      tableName: "memory-table.prod_1",
      graphModule: "/opt/graphs/agent.mjs",
      tenantClaim: "custom:org",
      logLevel: "debug",
      deadlineMarginMs: 2500,
      dynamodbEndpoint: "http://127.0.0.1:8000",
      workerFunctionName: "memory-table-worker",
      maxRunLegs: 3,
      webhookAllowedHosts: ["hooks.example.com", "ops.example.org:8443"],
      apiKeyCacheSeconds: 15,
      cronsEnabled: false,
      langsmithTracing: true,
    });
  });

  it("fills in the defaults for an empty environment", () => {
    expect(readRuntimeConfig({})).toEqual({
      tableName: undefined,
      graphModule: undefined,
      tenantClaim: "custom:tenant_id",
      logLevel: "info",
      deadlineMarginMs: 3000,
      dynamodbEndpoint: undefined,
      workerFunctionName: undefined,
      maxRunLegs: 8,
      webhookAllowedHosts: [],
      apiKeyCacheSeconds: 60,
      cronsEnabled: true,
      langsmithTracing: false,
    });
  });

  it("treats empty variables as unset (Terraform and Docker write empty strings)", () => {
    expect(
      readRuntimeConfig({
        TABLE_NAME: "",
        GRAPH_MODULE: "",
        TENANT_CLAIM: "",
        LOG_LEVEL: "",
        DEADLINE_MARGIN_MS: "",
        DYNAMODB_ENDPOINT: "",
        WORKER_FUNCTION_NAME: "",
        MAX_RUN_LEGS: "",
        WEBHOOK_ALLOWED_HOSTS: "",
        LANGSMITH_TRACING: "",
      }),
    ).toEqual(readRuntimeConfig({}));
  });

  it("ignores variables it does not read", () => {
    expect(readRuntimeConfig({ ...valid, PATH: "/usr/bin", table_name: "x" })).toEqual(
      readRuntimeConfig(valid),
    );
  });

  it.each([
    ["0", 0],
    ["9999999", 9_999_999],
    ["0100", 100],
  ])("reads DEADLINE_MARGIN_MS %j as %i", (text, margin) => {
    expect(readRuntimeConfig({ DEADLINE_MARGIN_MS: text }).deadlineMarginMs).toBe(margin);
  });

  it.each(["fatal", "error", "warn", "info", "debug", "trace", "silent"])(
    "accepts LOG_LEVEL %s",
    (level) => {
      expect(readRuntimeConfig({ LOG_LEVEL: level }).logLevel).toBe(level);
    },
  );

  it.each([
    "https://dynamodb.eu-west-1.amazonaws.com",
    "http://localhost:8000/",
    "http://ddb:8000/x",
  ])("accepts DYNAMODB_ENDPOINT %s", (endpoint) => {
    expect(readRuntimeConfig({ DYNAMODB_ENDPOINT: endpoint }).dynamodbEndpoint).toBe(endpoint);
  });

  it.each(["abc", "A.b_c-1", "x".repeat(255)])("accepts TABLE_NAME of %j", (name) => {
    expect(readRuntimeConfig({ TABLE_NAME: name }).tableName).toBe(name);
  });

  it.each([
    [
      { TABLE_NAME: "my table" },
      'Invalid TABLE_NAME: expected a DynamoDB table name (3 to 255 of A-Z a-z 0-9 _ . -), got "my table"',
    ],
    [
      { TABLE_NAME: "ab" },
      'Invalid TABLE_NAME: expected a DynamoDB table name (3 to 255 of A-Z a-z 0-9 _ . -), got "ab"',
    ],
    [
      { TABLE_NAME: "x".repeat(256) },
      `Invalid TABLE_NAME: expected a DynamoDB table name (3 to 255 of A-Z a-z 0-9 _ . -), got "${"x".repeat(256)}"`,
    ],
    [
      { ...valid, LOG_LEVEL: "verbose" },
      'Invalid LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got "verbose"',
    ],
    [
      { ...valid, LOG_LEVEL: "INFO" },
      'Invalid LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got "INFO"',
    ],
    [
      { ...valid, DEADLINE_MARGIN_MS: "-1" },
      'Invalid DEADLINE_MARGIN_MS: expected a whole number of milliseconds (0 to 9999999), got "-1"',
    ],
    [
      { ...valid, DEADLINE_MARGIN_MS: "3e3" },
      'Invalid DEADLINE_MARGIN_MS: expected a whole number of milliseconds (0 to 9999999), got "3e3"',
    ],
    [
      { ...valid, DEADLINE_MARGIN_MS: "10000000" },
      'Invalid DEADLINE_MARGIN_MS: expected a whole number of milliseconds (0 to 9999999), got "10000000"',
    ],
    [
      { ...valid, DEADLINE_MARGIN_MS: " 3000" },
      'Invalid DEADLINE_MARGIN_MS: expected a whole number of milliseconds (0 to 9999999), got " 3000"',
    ],
    [
      { ...valid, DYNAMODB_ENDPOINT: "localhost:8000" },
      'Invalid DYNAMODB_ENDPOINT: expected an http(s) URL, got "localhost:8000"',
    ],
    [
      { ...valid, DYNAMODB_ENDPOINT: "ftp://localhost:8000" },
      'Invalid DYNAMODB_ENDPOINT: expected an http(s) URL, got "ftp://localhost:8000"',
    ],
    [
      { ...valid, WORKER_FUNCTION_NAME: "my worker" },
      'Invalid WORKER_FUNCTION_NAME: expected a Lambda function name or ARN, got "my worker"',
    ],
    [
      { ...valid, MAX_RUN_LEGS: "0" },
      'Invalid MAX_RUN_LEGS: expected a whole number of legs from 1 to 999, got "0"',
    ],
    [
      { ...valid, MAX_RUN_LEGS: "1000" },
      'Invalid MAX_RUN_LEGS: expected a whole number of legs from 1 to 999, got "1000"',
    ],
    [
      { ...valid, WEBHOOK_ALLOWED_HOSTS: "hooks.example.com,https://evil.example" },
      'Invalid WEBHOOK_ALLOWED_HOSTS: expected comma-separated host names (host or host:port), got "https://evil.example"',
    ],
    [
      { ...valid, WEBHOOK_SIGNING_SECRET: "hunter2-not-a-whsec-secret" },
      "Invalid WEBHOOK_SIGNING_SECRET: expected a secret starting with whsec_ (Standard Webhooks format)",
    ],
    [
      { ...valid, WEBHOOK_SIGNING_SECRET: `whsec_${Buffer.alloc(8).toString("base64")}` },
      "Invalid WEBHOOK_SIGNING_SECRET: expected 24 to 64 key bytes after whsec_, got 8",
    ],
    [
      { ...valid, WEBHOOK_ALLOWED_HOSTS: "*.example.com" },
      'Invalid WEBHOOK_ALLOWED_HOSTS: expected comma-separated host names (host or host:port), got "*.example.com"',
    ],
  ])("rejects %j", (env, message) => {
    expect(() => readRuntimeConfig(env)).toThrow(InvalidConfigurationError);
    expect(() => readRuntimeConfig(env)).toThrow(message);
  });

  it.each([
    [{ LANGCHAIN_TRACING_V2: "true" }, true],
    [{ LANGSMITH_TRACING: "TRUE" }, true],
    [{ LANGSMITH_TRACING: "false" }, false],
    [{ LANGSMITH_API_KEY: "lsv2-key" }, false],
  ])("reads LangSmith tracing from %j as %s", (env, on) => {
    expect(readRuntimeConfig(env).langsmithTracing).toBe(on);
  });

  it.each([
    ["true", true],
    ["false", false],
  ])("reads CRONS_ENABLED=%s", (value, enabled) => {
    expect(readRuntimeConfig({ CRONS_ENABLED: value }).cronsEnabled).toBe(enabled);
  });

  it.each(["no", "0", "FALSE"])("refuses CRONS_ENABLED=%s, naming what it accepts", (value) => {
    expect(() => readRuntimeConfig({ CRONS_ENABLED: value })).toThrow(
      `Invalid CRONS_ENABLED: expected true or false, got ${JSON.stringify(value)}`,
    );
  });

  it("names the variable on the error", () => {
    let thrown: unknown;
    try {
      readRuntimeConfig({ LOG_LEVEL: "loud" });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ option: "LOG_LEVEL" });
  });
});

describe("requireTableName", () => {
  it("returns the table name when it is set", () => {
    expect(requireTableName(readRuntimeConfig({ TABLE_NAME: "memory-table" }))).toBe(
      "memory-table",
    );
  });

  it.each([{}, { TABLE_NAME: "" }])("refuses a configuration without a table (%j)", (env) => {
    // Reading it is fine (stateless runs need no table); requiring one is not.
    const config = readRuntimeConfig(env);
    expect(config.tableName).toBeUndefined();
    expect(() => requireTableName(config)).toThrow(InvalidConfigurationError);
    expect(() => requireTableName(config)).toThrow(
      "Invalid TABLE_NAME: expected a DynamoDB table name (3 to 255 of A-Z a-z 0-9 _ . -), got nothing (the variable is not set)",
    );
  });
});
