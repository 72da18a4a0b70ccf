import type { StreamedChunk, StreamedOutcome } from "./runtime-api";

/** A streamed body read as a function URL reads it: the prelude, then the response body with arrival times. */
export interface HttpIntegrationResponse {
  prelude: { statusCode?: number; headers?: Record<string, string>; cookies?: string[] };
  body: Buffer;
  /** The response body's bytes (after the delimiter), each run of them with its arrival time. */
  bodyChunks: StreamedChunk[];
}

export const HTTP_INTEGRATION_CONTENT_TYPE = "application/vnd.awslambda.http-integration-response";
const DELIMITER = Buffer.alloc(8);

/**
 * Splits a streamed body as Lambda does for a function URL: with the http-integration content type, the JSON
 * prelude up to the first 8 NUL bytes, then the body; any other content type is all body, status 200.
 */
export function readHttpIntegrationResponse(outcome: StreamedOutcome): HttpIntegrationResponse {
  if (outcome.headers["content-type"] !== HTTP_INTEGRATION_CONTENT_TYPE) {
    return { prelude: {}, body: outcome.body, bodyChunks: outcome.chunks };
  }
  const split = outcome.body.indexOf(DELIMITER);
  if (split === -1) {
    throw new Error(
      `expected a prelude ended by 8 NUL bytes, got ${JSON.stringify(outcome.body.toString("utf8").slice(0, 200))}`,
    );
  }
  const prelude = JSON.parse(
    outcome.body.subarray(0, split).toString("utf8"),
  ) as HttpIntegrationResponse["prelude"];
  const bodyStart = split + DELIMITER.length;
  // Cut the arrival record at the same offset: a chunk holding the delimiter gives only what follows it.
  const bodyChunks: StreamedChunk[] = [];
  let offset = 0;
  for (const chunk of outcome.chunks) {
    const end = offset + chunk.bytes.length;
    if (end > bodyStart) {
      bodyChunks.push({
        at: chunk.at,
        bytes: chunk.bytes.subarray(Math.max(0, bodyStart - offset)),
      });
    }
    offset = end;
  }
  return { prelude, body: outcome.body.subarray(bodyStart), bodyChunks };
}
