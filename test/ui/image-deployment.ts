import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { apiCorsConfiguration } from "../../modules/construct/api";
import { startLocalDynamoDB } from "../../src/dev/dynamodb-local";
import { IMAGE_HANDLERS } from "../../src/runtime/environment";
import { startApiGatewayStandIn, type ApiGatewayStandIn } from "../image/api-gateway-stand-in";
import { LambdaFunctionStandIn, LambdaInvokeApiStandIn } from "../image/lambda-invoke-stand-in";
import { imageNodeBinary, missingImageNode } from "../image/ric-process";
import { bundleGraphModule, prepareTaskRoot } from "../image/task-root";
import { createLocalClient, createTestTable } from "../support/dynamodb";
import { ROOT, type DevServer } from "./harness";

/**
 * The UIs' third backend: the image as the module deploys it, run by aws-lambda-ric on the image's Node behind
 * the stand-ins of what has no local engine (named so): API Gateway's HTTP API with the module's API-key
 * authorizer (the image's `authorizer.handler`) and the module's CORS configuration for the UIs' origins, each
 * function's Runtime API, and the Lambda Invoke API the API function hands background runs to (the worker,
 * `worker.handler`). The table is DynamoDB Local's; the credential an API key made by `npm run api-key`, which
 * the UIs send as X-Api-Key like any "LangSmith API Key".
 */
export interface ImageDeployment extends DevServer {
  gateway: ApiGatewayStandIn;
  /** Every function's output, for a failure's message. */
  output(): string;
}

const TENANT = "ui-demo";
/** API Gateway's limit, and the API function's timeout the module sets under it. */
const API_FUNCTION_TIMEOUT_MS = 29_000;
const WORKER_TIMEOUT_MS = 120_000;
const WORKER = "memory-table-worker";

/** What the image deployment needs and does not find here (printed as a SKIP reason), if anything. */
export function imageDeploymentMissing(): string | undefined {
  return imageNodeBinary() ? undefined : missingImageNode();
}

export async function startImageDeployment(
  dataDir: string,
  uiOrigins: string[],
  log: (line: string) => void,
): Promise<ImageDeployment> {
  const node = imageNodeBinary();
  if (!node) throw new Error(missingImageNode());
  const stops: Array<() => Promise<void> | void> = [];
  const stop = async () => {
    for (const step of stops.splice(0).reverse()) await step();
  };
  try {
    const built = Date.now();
    const taskRoot = await prepareTaskRoot(join(dataDir, "image"));
    stops.push(() => taskRoot.remove());
    await bundleGraphModule(
      join(ROOT, "test/ui/fixture/image-graphs.ts"),
      taskRoot.dir,
      "graphs/ui-graphs.mjs",
    );
    log(`image tree built in ${((Date.now() - built) / 1000).toFixed(1)} s (${taskRoot.dir})`);

    const dynamodb = await startLocalDynamoDB({ dbPath: join(dataDir, "dynamodb-local") });
    stops.push(() => dynamodb.stop(5_000));
    const client = createLocalClient(dynamodb.endpoint);
    stops.push(() => client.destroy());
    const tableName = await createTestTable(client, "memory-table-ui");
    const key = createApiKey(tableName, dynamodb.endpoint);

    const invokeApi = await LambdaInvokeApiStandIn.start();
    stops.push(() => invokeApi.stop());
    const env = {
      TABLE_NAME: tableName,
      DYNAMODB_ENDPOINT: dynamodb.endpoint,
      GRAPH_MODULE: "graphs/ui-graphs.mjs",
      LOG_LEVEL: "warn",
      WORKER_FUNCTION_NAME: WORKER,
      AWS_ENDPOINT_URL_LAMBDA: invokeApi.endpoint,
    };
    const fn = (name: string, handler: string, timeoutMs: number) => {
      const standIn = new LambdaFunctionStandIn({
        name,
        node,
        taskRoot: taskRoot.dir,
        handler,
        env,
        timeoutMs,
      });
      stops.push(() => standIn.stop());
      return standIn;
    };
    const api = fn("memory-table-api", IMAGE_HANDLERS.api, API_FUNCTION_TIMEOUT_MS);
    const worker = fn(WORKER, IMAGE_HANDLERS.worker, WORKER_TIMEOUT_MS);
    const authorizer = fn("memory-table-authorizer", IMAGE_HANDLERS.authorizer, 10_000);
    invokeApi.serve(worker);
    const gateway = await startApiGatewayStandIn({
      integration: api,
      authorizer: { kind: "lambda", fn: authorizer },
      cors: apiCorsConfiguration(uiOrigins),
    });
    stops.push(() => gateway.close());
    return {
      url: gateway.url,
      token: key,
      buffered: true,
      client: new Client({ apiUrl: gateway.url, apiKey: key, callerOptions: { maxRetries: 0 } }),
      gateway,
      output: () => [api, worker, authorizer].map((standIn) => standIn.output()).join("\n"),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A key for the UIs' tenant, made as a platform team makes one: `npm run -s api-key -- create`. */
function createApiKey(tableName: string, endpoint: string): string {
  const made = spawnSync(
    "npm",
    [
      "run",
      "-s",
      "api-key",
      "--",
      "create",
      "--table",
      tableName,
      "--tenant",
      TENANT,
      "--subject",
      "ui-tests",
      "--expires-in",
      "2h",
      "--endpoint",
      endpoint,
    ],
    {
      cwd: ROOT,
      encoding: "utf8",
      env: {
        ...process.env,
        AWS_REGION: "us-east-1",
        AWS_ACCESS_KEY_ID: "local",
        AWS_SECRET_ACCESS_KEY: "local",
      },
    },
  );
  const key = made.stdout.trim();
  if (made.status !== 0 || key.length === 0 || key.includes("\n")) {
    throw new Error(`npm run api-key -- create failed (${made.status}):\n${made.stderr}`);
  }
  return key;
}
