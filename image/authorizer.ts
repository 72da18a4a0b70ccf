/**
 * The image's API Gateway authorizer (CMD `authorizer.handler`): a Lambda REQUEST authorizer (payload 2.0, simple
 * responses) that accepts a JWT (`Authorization: Bearer`, or `X-Api-Key` from browser UIs; JWT_ISSUER and
 * JWT_AUDIENCE, the tenant from TENANT_CLAIM) or an API key (`X-Api-Key: mt_…`, checked against its hash in
 * TABLE_NAME), and hands the API function the caller's tenant. It loads no graph and sends one request only:
 * GetItem of a key's lookup item, at most once per key per API_KEY_CACHE_SECONDS in a container. It never logs a
 * credential. Any bad setting fails the init, naming the variable.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { createApiKeyVerifier } from "../src/runtime/auth/api-keys";
import { createRequestAuthorizer } from "../src/runtime/auth/authorizer";
import { readRuntimeConfig, requireTableName } from "../src/runtime/config";
import { createJwtVerifier } from "../src/runtime/http/jwt-verifier";
import { createLogger } from "../src/runtime/observability";
import { connectTable } from "../src/table/client";
import { atColdStart } from "./init-error";

export const handler = atColdStart(() => {
  const config = readRuntimeConfig(process.env);
  const tableName = requireTableName(config);
  const logger = createLogger(config.logLevel);
  const endpoint = config.dynamodbEndpoint;
  const table = connectTable(new DynamoDBClient(endpoint ? { endpoint } : {}), tableName);
  const authorize = createRequestAuthorizer({
    verifyJwt: config.jwt ? createJwtVerifier(config.jwt) : undefined,
    verifyApiKey: createApiKeyVerifier(table, { cacheSeconds: config.apiKeyCacheSeconds }),
    tenantClaim: config.tenantClaim,
  });
  logger.info(
    {
      table: tableName,
      issuer: config.jwt?.issuer,
      apiKeyCacheSeconds: config.apiKeyCacheSeconds,
    },
    "memory-table authorizer ready",
  );
  return authorize;
});
