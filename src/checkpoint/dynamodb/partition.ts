import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
} from "@aws-sdk/lib-dynamodb";
import { batchWriteAll, withThrottlingRetry } from "./retry";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Item = Record<string, any>;

/** Every item a Query returns, page after page (past DynamoDB's 1 MB pages), with throttling retried. */
export async function queryAll(
  client: DynamoDBDocumentClient,
  input: QueryCommandInput,
): Promise<Item[]> {
  const items: Item[] = [];
  let startKey: Item | undefined;
  do {
    const page = await withThrottlingRetry(() =>
      client.send(new QueryCommand({ ...input, ExclusiveStartKey: startKey })),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/**
 * Deletes the items of one partition page by page (keys and generation read, in batches of 25): every item
 * (a thread, record included) by default, or what `selectDoomed` picks from each page, just before its deletion.
 */
export async function removePartition(
  client: DynamoDBDocumentClient,
  tableName: string,
  pk: string,
  selectDoomed: (page: Item[]) => Promise<Item[]> = async (page) => page,
): Promise<number> {
  let removed = 0;
  let startKey: Item | undefined;
  do {
    const page = await withThrottlingRetry(() =>
      client.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: "pk = :pk",
          ExpressionAttributeValues: { ":pk": pk },
          ProjectionExpression: "pk, sk, g",
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      ),
    );
    const doomed = await selectDoomed(page.Items ?? []);
    await batchWriteAll(
      client,
      tableName,
      doomed.map((item) => ({ DeleteRequest: { Key: { pk: item.pk, sk: item.sk } } })),
    );
    removed += doomed.length;
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return removed;
}

export function toDocumentClient(
  client: DynamoDBClient | DynamoDBDocumentClient,
): DynamoDBDocumentClient {
  if (client instanceof DynamoDBDocumentClient) return client;
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false },
  });
}
