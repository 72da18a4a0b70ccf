import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { connectTable } from "../../table/client";
import { createApiKeyVerifier, type ApiKeyVerifier } from "./api-keys";

export interface TableApiKeyVerifierOptions {
  tableName: string;
  /** Default: a client built from the environment, at `endpoint` when one is given (DynamoDB Local). */
  client?: DynamoDBClient;
  endpoint?: string;
  cacheSeconds: number;
}

/**
 * An API key verifier on the table, with a client of its own: what the authorizer and the function URL build
 * once per container (loaded on demand, so a handler without a table never loads the AWS SDK for it).
 */
export function openApiKeyVerifier(options: TableApiKeyVerifierOptions): ApiKeyVerifier {
  const client =
    options.client ?? new DynamoDBClient(options.endpoint ? { endpoint: options.endpoint } : {});
  return createApiKeyVerifier(connectTable(client, options.tableName), {
    cacheSeconds: options.cacheSeconds,
  });
}
