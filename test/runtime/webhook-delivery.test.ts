import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { verifyWebhookSignature, signingKeyOf } from "../../src/shared/webhook-signature";
import { localEndpoint } from "../support/dynamodb";
import { createTable, type Backend } from "./support";

const TSX = join(__dirname, "../../node_modules/tsx/dist/cli.mjs");
const FIXTURE = join(__dirname, "fixtures/webhook-process.ts");

function hasOpenssl(): boolean {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

interface Delivery {
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * Webhook deliveries over real HTTPS on loopback: a receiver with a certificate made for 127.0.0.1, trusted by
 * the sending process through NODE_EXTRA_CA_CERTS, as a deployment trusts public receivers through its CA store.
 */
const describeWithOpenssl = hasOpenssl() ? describe : describe.skip;
if (!hasOpenssl())
  console.log(
    "SKIP webhook delivery tests: openssl is missing (it makes the receiver's certificate)",
  );

describeWithOpenssl("webhook deliveries (HTTPS receiver on loopback)", () => {
  let directory: string;
  let server: Server;
  let answers: number[];
  const deliveries: Delivery[] = [];
  const secret = `whsec_${randomBytes(32).toString("base64")}`;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), "memory-table-webhook-"));
    execFileSync(
      "openssl",
      [
        ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"],
        ...["-keyout", join(directory, "key.pem"), "-out", join(directory, "cert.pem")],
        ...["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
      ],
      { stdio: "ignore" },
    );
    server = createServer(
      {
        key: readFileSync(join(directory, "key.pem")),
        cert: readFileSync(join(directory, "cert.pem")),
      },
      (request, response) => {
        let body = "";
        request.on("data", (chunk: Buffer) => (body += chunk.toString()));
        request.on("end", () => {
          deliveries.push({ headers: request.headers, body });
          response.statusCode = answers.shift() ?? 200;
          response.end();
        });
      },
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(directory, { recursive: true, force: true });
  });

  beforeEach(() => {
    deliveries.length = 0;
  });

  async function runWithWebhook(
    env: Record<string, string>,
    backend: Backend = "memory",
  ): Promise<{ status: number; runs: Array<Record<string, unknown>> }> {
    const port = (server.address() as AddressInfo).port;
    const table = backend === "dynamodb" ? [localEndpoint(), (await createTable()).tableName] : [];
    const child = spawn(
      process.execPath,
      [TSX, FIXTURE, `https://127.0.0.1:${port}/hook`, ...table],
      {
        env: {
          ...process.env,
          NODE_EXTRA_CA_CERTS: join(directory, "cert.pem"),
          WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${port}`,
          ...env,
        },
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise((resolve) => child.once("exit", resolve));
    expect(code).toBe(0);
    return JSON.parse(output) as { status: number; runs: Array<Record<string, unknown>> };
  }

  it.each<Backend>(["memory", "dynamodb"])(
    "signs each attempt, retries a receiver that answered 503, and records the delivery on the run (%s)",
    async (backend) => {
      answers = [503, 200];
      const { status, runs } = await runWithWebhook({ WEBHOOK_SIGNING_SECRET: secret }, backend);
      expect(status).toBe(200);
      expect(deliveries).toHaveLength(2);
      const run = runs[0]!;
      const key = signingKeyOf(secret);
      for (const delivery of deliveries) {
        const headers = {
          id: String(delivery.headers["webhook-id"]),
          timestamp: String(delivery.headers["webhook-timestamp"]),
          signature: String(delivery.headers["webhook-signature"]),
        };
        // One id for both attempts of the one status change: the receiver can drop a duplicate.
        expect(headers.id).toBe(`${String(run.run_id)}:success`);
        expect(verifyWebhookSignature(key, headers, delivery.body, Date.now() / 1000)).toBe(true);
        // Any change to the body breaks the signature.
        expect(verifyWebhookSignature(key, headers, `${delivery.body} `, Date.now() / 1000)).toBe(
          false,
        );
        expect(JSON.parse(delivery.body)).toMatchObject({ run_id: run.run_id, status: "success" });
      }
      expect(run.webhook_delivery).toMatchObject({
        outcome: "delivered",
        attempts: 2,
        status_code: 200,
      });
    },
  );

  it("does not retry a refusal that a retry cannot change (400), and records it as failed", async () => {
    answers = [400];
    const { runs } = await runWithWebhook({ WEBHOOK_SIGNING_SECRET: secret });
    expect(deliveries).toHaveLength(1);
    expect(runs[0]!.webhook_delivery).toMatchObject({
      outcome: "failed",
      attempts: 1,
      status_code: 400,
    });
    // The run itself is not changed by its webhook's failure.
    expect(runs[0]!.status).toBe("success");
  });

  it("sends unsigned deliveries when no secret is configured", async () => {
    answers = [200];
    await runWithWebhook({});
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]!.headers["webhook-signature"]).toBeUndefined();
  });
});
