import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { QueryCommand } from "@aws-sdk/client-dynamodb";
import { threadPartitionKey, THREAD_RECORD_SK } from "../../src/table/keys";
import { loadDevKeys, verifyBearer } from "../../src/dev/auth";
import { createLocalClient, deleteTestTable, localEndpoint } from "../support/dynamodb";

const ROOT = join(__dirname, "..", "..");
const TSX = join(ROOT, "node_modules", ".bin", "tsx");

/** `npm start` and `npm run token` as a developer runs them (the scripts behind both). */
let child: ChildProcess | undefined;

/** Starts `scripts/dev-server.ts` as a developer would and resolves with its banner once it is ready. */
async function startDevServer(env: NodeJS.ProcessEnv): Promise<string> {
  child = spawn(TSX, ["scripts/dev-server.ts"], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let printed = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner: ${printed}`)), 20_000);
    child!.stdout!.on("data", (chunk: Buffer) => {
      printed += chunk.toString();
      if (printed.includes("approvals inbox")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child!.once("exit", (code) => reject(new Error(`dev server exited with ${code}`)));
  });
  return printed;
}

describe("dev server and token commands", () => {
  afterEach(() => {
    // Only the server this test started, by its pid.
    if (child?.pid !== undefined && child.exitCode === null) child.kill("SIGTERM");
  });

  it("prints only a token that the dev key verifies", async () => {
    const output = execFileSync(TSX, ["scripts/token.ts", "--tenant", "tenant-cli"], {
      cwd: ROOT,
    }).toString();
    expect(output).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const claims = await verifyBearer(await loadDevKeys(), `Bearer ${output.trim()}`);
    expect(claims?.["custom:tenant_id"]).toBe("tenant-cli");
  });

  it("rejects a missing or invalid --tenant", () => {
    expect(() =>
      execFileSync(TSX, ["scripts/token.ts", "--tenant", "a#b"], { cwd: ROOT, stdio: "pipe" }),
    ).toThrow(/Invalid tenant id/);
  });

  it("starts on 127.0.0.1, prints the URL, a demo token and curl lines that work", async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: "0" };
    delete env.TABLE_NAME;
    const printed = await startDevServer(env);
    const url = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(printed)?.[1];
    expect(url).toBeDefined();
    const token = /Bearer ([\w.-]+)/.exec(printed)?.[1];
    expect(token).toBeDefined();
    expect(printed).toContain(`curl -s ${url}/invoke`);
    expect(printed).toContain('"resume":{"approve":true}');

    const start = await fetch(`${url}/invoke`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ thread_id: "t1", input: { request: "move my appointment" } }),
    });
    expect(start.status).toBe(202);
    const cliToken = execFileSync(TSX, ["scripts/token.ts", "--tenant", "demo"], { cwd: ROOT })
      .toString()
      .trim();
    const resume = await fetch(`${url}/invoke`, {
      method: "POST",
      headers: { authorization: `Bearer ${cliToken}`, "content-type": "application/json" },
      body: JSON.stringify({ thread_id: "t1", resume: { approve: true } }),
    });
    expect(resume.status).toBe(200);
    expect(await resume.json()).toMatchObject({ status: "COMPLETED", result: { booked: true } });
  });

  it("keeps threads in DynamoDB with TABLE_NAME and a DynamoDB Local endpoint", async () => {
    const tableName = `dev-server-${randomUUID().slice(0, 8)}`;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: "0",
      TABLE_NAME: tableName,
      DYNAMODB_ENDPOINT: localEndpoint(),
    };
    const printed = await startDevServer(env);
    expect(printed).toContain(`DynamoDB table ${tableName} at ${localEndpoint()}`);
    const url = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(printed)![1];
    const token = /Bearer ([\w.-]+)/.exec(printed)![1];
    const post = (body: unknown) =>
      fetch(`${url}/invoke`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    expect((await post({ thread_id: "ddb-1", input: { request: "move it" } })).status).toBe(202);
    const client = createLocalClient();
    try {
      const items = await client.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: "pk = :pk",
          ExpressionAttributeValues: { ":pk": { S: threadPartitionKey("demo", "ddb-1") } },
          ConsistentRead: true,
        }),
      );
      // The thread record and its checkpoints are in the table.
      expect(items.Items?.some((item) => item.sk?.S === THREAD_RECORD_SK)).toBe(true);
      expect(items.Items!.length).toBeGreaterThan(1);
      const done = await post({ thread_id: "ddb-1", resume: { approve: true } });
      expect(done.status).toBe(200);
      expect(await done.json()).toMatchObject({ status: "COMPLETED", result: { booked: true } });
    } finally {
      await deleteTestTable(client, tableName);
    }
  });
});
