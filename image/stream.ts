/**
 * The image's streaming entry (CMD `stream.handler`): the whole API from a Lambda function URL in RESPONSE_STREAM
 * mode, streamed routes as their events come. Configured like the API handler, from the container's environment
 * at cold start (secrets of ENVIRONMENT_ARNS first, then GRAPH_MODULE or the bundled example), plus JWT_ISSUER and
 * JWT_AUDIENCE: a function URL has no authorizer, so the token is verified in the function. Any bad setting, or a
 * runtime without response streaming, fails the init, naming what is wrong.
 */
import {
  createFunctionUrlHandler,
  type StreamingHandler,
  type WithHttpMetadata,
} from "../src/runtime/function-url";
import { InvalidConfigurationError } from "../src/shared/errors";
import { atGraphColdStart } from "./environment-arns";
import { readImageRuntime } from "./image-runtime";
import { atColdStart } from "./init-error";

/** The part of the runtime's `awslambda` global this entry uses (aws-lambda-ric sets it before loading CMD). */
interface LambdaStreamingRuntime {
  streamifyResponse(handler: StreamingHandler): StreamingHandler;
  HttpResponseStream: { from: WithHttpMetadata };
}

/**
 * The runtime's response streaming. Checked before anything else, so a container started without it (another
 * runtime client, or AWS_LAMBDA_NODEJS_NO_GLOBAL_AWSLAMBDA set) fails its init instead of answering every request
 * with an error, or, worse, being invoked as a buffered handler that never writes its response.
 */
function readStreamingRuntime(): LambdaStreamingRuntime {
  // Through unknown: @types/aws-lambda declares the global with its own stream types, which this entry does not use.
  const runtime = (globalThis as unknown as { awslambda?: Partial<LambdaStreamingRuntime> })
    .awslambda;
  if (
    typeof runtime?.streamifyResponse !== "function" ||
    typeof runtime.HttpResponseStream?.from !== "function"
  ) {
    throw new InvalidConfigurationError(
      "awslambda",
      "expected the Lambda runtime's response streaming (the awslambda global that aws-lambda-ric and " +
        `Lambda's Node.js runtime set, with streamifyResponse and HttpResponseStream), got ${
          runtime === undefined ? "no awslambda global" : "an awslambda global without them"
        }` +
        (process.env.AWS_LAMBDA_NODEJS_NO_GLOBAL_AWSLAMBDA
          ? " (AWS_LAMBDA_NODEJS_NO_GLOBAL_AWSLAMBDA is set)"
          : ""),
    );
  }
  return runtime as LambdaStreamingRuntime;
}

const streamingRuntime = atColdStart(readStreamingRuntime);

// Top-level await: the runtime client awaits this ES module's evaluation as the function's init, so the secrets
// of ENVIRONMENT_ARNS are in the environment before the graph module loads (as in index.ts).
// @ts-expect-error TS1309: tsc types image/ as CommonJS (package.json has no "type"); esbuild bundles it as ESM.
export const handler = await atGraphColdStart(() => {
  const runtime = readImageRuntime();
  const functionUrl = createFunctionUrlHandler({
    ...runtime.options,
    withHttpMetadata: (stream, metadata) =>
      streamingRuntime.HttpResponseStream.from(stream, metadata),
  });
  runtime.options.logger?.info(
    {
      table: runtime.tableName,
      graphModule: runtime.config.graphModule ?? "(bundled booking example)",
      issuer: runtime.config.jwt?.issuer,
    },
    "memory-table streaming function ready",
  );
  // Marks the handler for the runtime client: it is called with (event, responseStream, context) and its
  // response is POSTed as it is written, instead of once its promise resolves.
  return streamingRuntime.streamifyResponse(functionUrl);
});
