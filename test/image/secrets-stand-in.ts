import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A stand-in for Secrets Manager and SSM Parameter Store on 127.0.0.1 (neither has a local engine): it answers
 * the two calls the image makes, GetSecretValue and GetParameter, in the services' JSON 1.1 protocol, from the
 * values a test gives it, and records every request so the test can check what the SDK sent.
 */
export interface StoredParameter {
  value: string;
  type: "SecureString" | "String";
}

export interface RecordedRequest {
  target: string;
  body: Record<string, unknown>;
  authorization: string;
}

export class SecretsStandIn {
  readonly requests: RecordedRequest[] = [];
  private readonly server: Server;

  private constructor(
    private readonly secrets: Record<string, string>,
    private readonly parameters: Record<string, StoredParameter>,
  ) {
    this.server = createServer((request, response) => {
      void readJson(request).then((body) => {
        const target = String(request.headers["x-amz-target"] ?? "");
        this.requests.push({
          target,
          body,
          authorization: String(request.headers.authorization ?? ""),
        });
        const [status, answer] = this.answer(target, body);
        response
          .writeHead(status, { "content-type": "application/x-amz-json-1.1" })
          .end(JSON.stringify(answer));
      });
    });
  }

  static async start(
    secrets: Record<string, string>,
    parameters: Record<string, StoredParameter>,
  ): Promise<SecretsStandIn> {
    const standIn = new SecretsStandIn(secrets, parameters);
    await new Promise<void>((resolve, reject) => {
      standIn.server.once("error", reject);
      standIn.server.listen(0, "127.0.0.1", resolve);
    });
    return standIn;
  }

  /** The endpoint, for AWS_ENDPOINT_URL_SECRETS_MANAGER and AWS_ENDPOINT_URL_SSM. */
  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(target: string, body: Record<string, unknown>): [number, unknown] {
    if (target === "secretsmanager.GetSecretValue") {
      const arn = String(body.SecretId);
      if (!(arn in this.secrets))
        return notFound("Secrets Manager can't find the specified secret.");
      return [
        200,
        {
          ARN: arn,
          Name: arn.split(":secret:")[1],
          SecretString: this.secrets[arn],
          VersionId: "00000000-0000-0000-0000-000000000001",
          VersionStages: ["AWSCURRENT"],
          CreatedDate: 1767225600,
        },
      ];
    }
    if (target === "AmazonSSM.GetParameter") {
      const arn = String(body.Name);
      const parameter = this.parameters[arn];
      if (!parameter) return [400, { __type: "ParameterNotFound", message: "" }];
      return [
        200,
        {
          Parameter: {
            ARN: arn,
            Name: `/${arn.split(":parameter/")[1]}`,
            Type: parameter.type,
            Value: parameter.value,
            Version: 1,
            DataType: "text",
            LastModifiedDate: 1767225600,
          },
        },
      ];
    }
    return [400, { __type: "UnknownOperationException", message: `no operation ${target}` }];
  }
}

function notFound(message: string): [number, unknown] {
  return [400, { __type: "ResourceNotFoundException", message }];
}

function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      resolve(text ? (JSON.parse(text) as Record<string, unknown>) : {});
    });
    request.on("error", reject);
  });
}
