import { createHash, randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ENVIRONMENT, IMAGE_HANDLERS } from "../../src/runtime/environment";
import {
  createLocalClient,
  createTestTable,
  deleteTestTable,
  localEndpoint,
} from "../support/dynamodb";
import { apiGatewayEvent, resultBody } from "./events";
import { imageNodeBinary, missingImageNode, startRic, type RicProcess } from "./ric-process";
import { RuntimeApiEmulator } from "./runtime-api";
import { SecretsStandIn } from "./secrets-stand-in";
import { bundleGraphModule, prepareTaskRoot, type TaskRoot } from "./task-root";

/**
 * Secrets end to end: the built image tree under aws-lambda-ric on the image's Node major, a Lambda Runtime API
 * on 127.0.0.1, DynamoDB Local, and a local stand-in for Secrets Manager and SSM (no local engine exists for
 * them) that the SDK reaches through its standard endpoint variables.
 */
const node = imageNodeBinary();
if (!node) console.log(`SKIP: image secrets end-to-end tests: ${missingImageNode()}`);
const describeWithImageNode = node ? describe : describe.skip;

const SECRET_ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:agents/openai-AbCdEf";
const PARAMETER_ARN = "arn:aws:ssm:eu-west-1:123456789012:parameter/agents/db-password";
const PLAIN_PARAMETER_ARN = "arn:aws:ssm:eu-west-1:123456789012:parameter/agents/plain";
const MISSING_SECRET_ARN =
  "arn:aws:secretsmanager:eu-west-1:123456789012:secret:agents/gone-ZzZzZz";

const sha256 = (value: string) => createHash("sha256").update(value).digest("hex");

describeWithImageNode(
  "container image secrets (integration: ric on Node 22, DynamoDB Local, Secrets Manager and SSM stand-in)",
  () => {
    // Fresh values per run: a hit in the output can only come from the process having logged them.
    const openaiApiKey = `sk-live-${randomBytes(12).toString("hex")}`;
    const dbPassword = `db-${randomBytes(12).toString("hex")}`;
    const plainValue = `plain-${randomBytes(12).toString("hex")}`;
    let buildDir: string;
    let taskRoot: TaskRoot;
    let client: DynamoDBClient;
    let tableName: string;
    let standIn: SecretsStandIn;
    const running: { api: RuntimeApiEmulator; ric: RicProcess }[] = [];

    beforeAll(async () => {
      // A build directory of its own: other image tests build into the default one concurrently.
      buildDir = mkdtempSync(join(tmpdir(), "memory-table-image-build-"));
      taskRoot = await prepareTaskRoot(join(buildDir, "image"));
      await bundleGraphModule(
        join(__dirname, "fixtures", "secret-graph.ts"),
        taskRoot.dir,
        "graphs/secret-graph.mjs",
      );
      client = createLocalClient();
      tableName = await createTestTable(client, "memory-table-secrets");
      standIn = await SecretsStandIn.start(
        { [SECRET_ARN]: openaiApiKey },
        {
          [PARAMETER_ARN]: { value: dbPassword, type: "SecureString" },
          [PLAIN_PARAMETER_ARN]: { value: plainValue, type: "String" },
        },
      );
    }, 60_000);

    beforeEach(() => {
      standIn.requests.splice(0);
    });

    afterEach(async () => {
      await Promise.all(
        running.splice(0).map(async ({ ric, api }) => {
          await ric.kill();
          await api.stop();
        }),
      );
    });

    afterAll(async () => {
      await standIn?.stop();
      if (tableName) await deleteTestTable(client, tableName);
      client?.destroy();
      taskRoot?.remove();
      if (buildDir) rmSync(buildDir, { recursive: true, force: true });
    });

    async function start(environmentArns: string, env: Record<string, string> = {}) {
      const api = await RuntimeApiEmulator.start();
      const ric = startRic({
        node: node!,
        taskRoot: taskRoot.dir,
        handler: IMAGE_HANDLERS.api,
        runtimeApi: api.address,
        env: {
          TABLE_NAME: tableName,
          DYNAMODB_ENDPOINT: localEndpoint(),
          GRAPH_MODULE: "graphs/secret-graph.mjs",
          [ENVIRONMENT.environmentArns]: environmentArns,
          AWS_ENDPOINT_URL_SECRETS_MANAGER: standIn.endpoint,
          AWS_ENDPOINT_URL_SSM: standIn.endpoint,
          // As verbose as it gets: nothing may log a secret even at trace level.
          LOG_LEVEL: "trace",
          ...env,
        },
      });
      const runtime = { api, ric };
      running.push(runtime);
      return runtime;
    }

    async function ask(runtime: { api: RuntimeApiEmulator; ric: RicProcess }) {
      const died = runtime.ric.exited.then((code) => {
        throw new Error(`runtime exited (${String(code)}):\n${runtime.ric.output()}`);
      });
      const outcome = await Promise.race([
        runtime.api.invoke(
          apiGatewayEvent({
            method: "POST",
            path: "/invoke",
            tenant: "acme",
            body: { thread_id: `secrets-${randomUUID()}`, input: { question: "which model?" } },
          }),
          { timeoutMs: 20_000 },
        ),
        died,
      ]);
      expect(outcome.kind).toBe("response");
      const result = outcome.body as { statusCode: number; body: string };
      return { statusCode: result.statusCode, raw: result.body, body: resultBody(result) };
    }

    async function initError(runtime: { api: RuntimeApiEmulator; ric: RicProcess }) {
      const error = await Promise.race([
        runtime.api.nextInitError(),
        runtime.ric.exited.then((code) => {
          throw new Error(
            `exited (${String(code)}) without an init error:\n${runtime.ric.output()}`,
          );
        }),
      ]);
      expect(await runtime.ric.exited).toBe(1);
      return error;
    }

    it("resolves a Secrets Manager secret and an SSM SecureString at cold start, before the graph module loads, once, never logged", async () => {
      const runtime = await start(
        JSON.stringify({ OPENAI_API_KEY: SECRET_ARN, DB_PASSWORD: PARAMETER_ARN }),
      );
      const first = await ask(runtime);
      expect(first.statusCode).toBe(200);
      // The graph read both at module scope: they were in the environment before GRAPH_MODULE loaded.
      expect(first.body).toMatchObject({
        status: "COMPLETED",
        result: {
          fingerprints: { openaiApiKey: sha256(openaiApiKey), dbPassword: sha256(dbPassword) },
        },
      });

      // Exactly one signed request per secret, by ARN, SecureString decrypted by SSM.
      const calls = standIn.requests.splice(0);
      expect(
        calls
          .map(({ target, body }) => ({ target, body }))
          .sort((a, b) => (a.target < b.target ? -1 : 1)),
      ).toEqual([
        { target: "AmazonSSM.GetParameter", body: { Name: PARAMETER_ARN, WithDecryption: true } },
        { target: "secretsmanager.GetSecretValue", body: { SecretId: SECRET_ARN } },
      ]);
      for (const call of calls) {
        const service = call.target.startsWith("AmazonSSM") ? "ssm" : "secretsmanager";
        // Signed for the ARN's region and service, with the function's credentials.
        expect(call.authorization).toMatch(
          new RegExp(`^AWS4-HMAC-SHA256 Credential=local/\\d{8}/eu-west-1/${service}/aws4_request`),
        );
      }

      // Once per execution environment: a warm invocation reads nothing.
      expect((await ask(runtime)).statusCode).toBe(200);
      expect(standIn.requests.splice(0)).toEqual([]);

      const output = await runtime.ric.waitForOutput(/"msg":"request"[\s\S]*"msg":"request"/);
      for (const value of [openaiApiKey, dbPassword]) {
        expect(output).not.toContain(value);
        expect(first.raw).not.toContain(value);
      }
    });

    it("fails the init naming the variable and the ARN when a secret cannot be read, and logs no value", async () => {
      const runtime = await start(
        JSON.stringify({ DB_PASSWORD: PARAMETER_ARN, OPENAI_API_KEY: MISSING_SECRET_ARN }),
      );
      const error = await initError(runtime);
      expect(error.errorType).toBe("InvalidConfigurationError");
      expect(error.body.errorMessage).toBe(
        `Invalid OPENAI_API_KEY: expected the value of Secrets Manager secret ${MISSING_SECRET_ARN}, got ResourceNotFoundException: Secrets Manager can't find the specified secret.`,
      );
      // The graph never loaded without its secrets, and the one that was read is nowhere.
      expect(runtime.ric.output()).not.toContain(dbPassword);
      expect(JSON.stringify(error.body)).not.toContain(dbPassword);
    });

    it("refuses an SSM parameter that is not a SecureString (its value is stored unencrypted), without echoing it", async () => {
      const runtime = await start(JSON.stringify({ PARTNER_ID: PLAIN_PARAMETER_ARN }));
      const error = await initError(runtime);
      expect(error.body.errorMessage).toBe(
        `Invalid PARTNER_ID: expected SSM parameter ${PLAIN_PARAMETER_ARN} to be a SecureString parameter, got String`,
      );
      expect(runtime.ric.output()).not.toContain(plainValue);
    });

    it.each([
      [
        "text that is not JSON",
        "OPENAI_API_KEY=arn",
        /^Invalid ENVIRONMENT_ARNS: expected a JSON object of variable name to ARN, got text that is not JSON/,
      ],
      [
        "a variable already set",
        JSON.stringify({ TABLE_NAME: PARAMETER_ARN }),
        /^Invalid ENVIRONMENT_ARNS: expected names not already set in the environment, got "TABLE_NAME"$/,
      ],
      [
        "a value that is not an ARN",
        JSON.stringify({ OPENAI_API_KEY: "sk-plaintext" }),
        /^Invalid ENVIRONMENT_ARNS: expected OPENAI_API_KEY to name a Secrets Manager secret or SSM parameter ARN, got "sk-plaintext"$/,
      ],
    ])("refuses %s in ENVIRONMENT_ARNS before any request", async (_, environmentArns, message) => {
      const runtime = await start(environmentArns);
      const error = await initError(runtime);
      expect(error.body.errorMessage).toMatch(message);
      expect(standIn.requests.splice(0)).toEqual([]);
    });

    it("writes only JSON lines with Lambda's JSON log format: pino's, the metric lines, the runtime client's own", async () => {
      // What Lambda sets for logging_config { log_format = "JSON", application_log_level = "INFO" }.
      const runtime = await start(JSON.stringify({ OPENAI_API_KEY: SECRET_ARN }), {
        AWS_LAMBDA_LOG_FORMAT: "JSON",
        AWS_LAMBDA_LOG_LEVEL: "INFO",
        LOG_LEVEL: "info",
      });
      expect((await ask(runtime)).statusCode).toBe(200);
      const output = await runtime.ric.waitForOutput(/"_aws"/);
      const lines = output.split("\n").filter((line) => line.trim() !== "");
      expect(lines.length).toBeGreaterThan(1);
      for (const line of lines) {
        expect({ line, json: isJsonObject(line) }).toEqual({ line, json: true });
      }
      expect(output).not.toContain(openaiApiKey);

      // An init error too: the runtime client writes it as JSON.
      const broken = await start(JSON.stringify({ OPENAI_API_KEY: MISSING_SECRET_ARN }), {
        AWS_LAMBDA_LOG_FORMAT: "JSON",
        AWS_LAMBDA_LOG_LEVEL: "INFO",
      });
      await initError(broken);
      const brokenLines = broken.ric
        .output()
        .split("\n")
        .filter((line) => line.trim() !== "");
      expect(brokenLines.length).toBeGreaterThan(0);
      for (const line of brokenLines) {
        expect({ line, json: isJsonObject(line) }).toEqual({ line, json: true });
      }
    });
  },
);

function isJsonObject(line: string): boolean {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === "object" && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}
