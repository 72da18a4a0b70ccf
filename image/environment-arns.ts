/**
 * Resolves ENVIRONMENT_ARNS once, at cold start, before the handler loads the graph module:
 * `{"OPENAI_API_KEY": "arn:aws:secretsmanager:...", "DB_PASSWORD": "arn:aws:ssm:..."}` sets
 * OPENAI_API_KEY to the secret's value and DB_PASSWORD to the SecureString parameter's, so a graph reads its
 * secrets from process.env at module scope like any other variable. Only the ARNs are configuration; the values
 * exist in this process's memory only: nothing here logs them, and no error message carries one.
 *
 * The SDK clients load only when there is something to resolve, and honour the standard endpoint variables
 * (AWS_ENDPOINT_URL_SECRETS_MANAGER, AWS_ENDPOINT_URL_SSM).
 */
import { ENVIRONMENT } from "../src/runtime/environment";
import { InvalidConfigurationError } from "../src/shared/errors";
import { atColdStart, markInitError } from "./init-error";

const VARIABLE = ENVIRONMENT.environmentArns;
const NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_]*$/;
const SECRET_ARN =
  /^arn:aws[a-z-]*:secretsmanager:([a-z0-9-]+):[0-9]{12}:secret:[A-Za-z0-9/_+=.@-]+$/;
const PARAMETER_ARN = /^arn:aws[a-z-]*:ssm:([a-z0-9-]+):[0-9]{12}:parameter\/[A-Za-z0-9/_.-]+$/;

/** A variable to set from a secret or a parameter. */
export interface EnvironmentReference {
  name: string;
  arn: string;
  source: "secretsmanager" | "ssm";
  /** The region of the ARN: the request goes there. */
  region: string;
}

type Environment = Record<string, string | undefined>;

/** Fails fast (before any request) unless a request can take longer: Lambda's init phase lasts 10 s. */
const REQUEST_TIMEOUTS = { connectionTimeout: 2_000, requestTimeout: 4_000 };

/**
 * The cold start of an entry that runs graphs (await it at the module's top level, so the runtime client awaits
 * it as part of init): the secrets first, then `setup`, which loads the graph module and so finds them at module
 * scope. A failure of either is the function's init error, naming the variable.
 */
export async function atGraphColdStart<T>(setup: () => T): Promise<T> {
  try {
    await resolveEnvironmentArns(process.env);
  } catch (error) {
    throw markInitError(error);
  }
  return atColdStart(setup);
}

/** The references of ENVIRONMENT_ARNS, checked; none when it is unset. Makes no request. */
export function readEnvironmentArns(env: Environment): EnvironmentReference[] {
  const text = env[VARIABLE];
  if (text === undefined || text === "") return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new InvalidConfigurationError(
      VARIABLE,
      `expected a JSON object of variable name to ARN, got text that is not JSON (${text.length} characters)`,
    );
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new InvalidConfigurationError(
      VARIABLE,
      `expected a JSON object of variable name to ARN, got ${Array.isArray(parsed) ? "an array" : typeof parsed}`,
    );
  }
  return Object.entries(parsed as Record<string, unknown>)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, arn]) => {
      if (!NAME_PATTERN.test(name)) {
        throw new InvalidConfigurationError(
          VARIABLE,
          `expected variable names of letters, digits and _, starting with a letter, got ${JSON.stringify(name)}`,
        );
      }
      if (env[name] !== undefined) {
        throw new InvalidConfigurationError(
          VARIABLE,
          `expected names not already set in the environment, got ${JSON.stringify(name)}`,
        );
      }
      const arnText = typeof arn === "string" ? arn : "";
      const secret = SECRET_ARN.exec(arnText);
      const parameter = PARAMETER_ARN.exec(arnText);
      if (!secret && !parameter) {
        throw new InvalidConfigurationError(
          VARIABLE,
          `expected ${name} to name a Secrets Manager secret or SSM parameter ARN, got ${typeof arn === "string" ? JSON.stringify(arn) : typeof arn}`,
        );
      }
      return secret
        ? { name, arn: arnText, source: "secretsmanager" as const, region: secret[1]! }
        : { name, arn: arnText, source: "ssm" as const, region: parameter![1]! };
    });
}

/**
 * Sets every variable of ENVIRONMENT_ARNS in `env` (all read in parallel), or none: the first failure, by name,
 * is thrown as `Invalid <NAME>: ...`. Returns the names it set.
 */
export async function resolveEnvironmentArns(env: Environment = process.env): Promise<string[]> {
  const references = readEnvironmentArns(env);
  if (references.length === 0) return [];
  const readers = await loadReaders();
  const results = await Promise.allSettled(references.map((reference) => readers.read(reference)));
  readers.close();
  results.forEach((result, index) => {
    if (result.status === "rejected") {
      const reference = references[index]!;
      const reason: unknown = result.reason;
      if (reason instanceof InvalidConfigurationError) throw reason;
      throw new InvalidConfigurationError(
        reference.name,
        `expected the value of ${describe(reference)}, got ${errorText(reason)}`,
        { cause: reason },
      );
    }
  });
  references.forEach((reference, index) => {
    env[reference.name] = (results[index] as PromiseFulfilledResult<string>).value;
  });
  return references.map((reference) => reference.name);
}

interface Readers {
  read(reference: EnvironmentReference): Promise<string>;
  close(): void;
}

/** One client per service and region, loaded on first use. */
async function loadReaders(): Promise<Readers> {
  const [secretsManagerModule, ssmModule] = await Promise.all([
    import("@aws-sdk/client-secrets-manager"),
    import("@aws-sdk/client-ssm"),
  ]);
  const secretsManager = namedExports(secretsManagerModule, "SecretsManagerClient");
  const ssm = namedExports(ssmModule, "SSMClient");
  const secretClients = new Map<string, InstanceType<typeof secretsManager.SecretsManagerClient>>();
  const ssmClients = new Map<string, InstanceType<typeof ssm.SSMClient>>();
  const config = (region: string) => ({ region, requestHandler: REQUEST_TIMEOUTS });
  const clientOf = <T>(clients: Map<string, T>, region: string, create: () => T): T => {
    const existing = clients.get(region);
    if (existing) return existing;
    const client = create();
    clients.set(region, client);
    return client;
  };
  return {
    async read(reference) {
      if (reference.source === "secretsmanager") {
        const client = clientOf(
          secretClients,
          reference.region,
          () => new secretsManager.SecretsManagerClient(config(reference.region)),
        );
        const response = await client.send(
          new secretsManager.GetSecretValueCommand({ SecretId: reference.arn }),
        );
        if (typeof response.SecretString !== "string") {
          throw new InvalidConfigurationError(
            reference.name,
            `expected ${describe(reference)} to hold a string, got a binary secret`,
          );
        }
        return response.SecretString;
      }
      const client = clientOf(
        ssmClients,
        reference.region,
        () => new ssm.SSMClient(config(reference.region)),
      );
      const response = await client.send(
        new ssm.GetParameterCommand({ Name: reference.arn, WithDecryption: true }),
      );
      const parameter = response.Parameter;
      if (parameter?.Type !== "SecureString" || typeof parameter.Value !== "string") {
        // A String parameter is stored unencrypted: whoever can read SSM reads the secret.
        throw new InvalidConfigurationError(
          reference.name,
          `expected ${describe(reference)} to be a SecureString parameter, got ${parameter?.Type ?? "no parameter"}`,
        );
      }
      return parameter.Value;
    },
    close() {
      for (const client of [...secretClients.values(), ...ssmClients.values()]) client.destroy();
    },
  };
}

/**
 * The SDK clients are CommonJS. In the image they are chunks of their own, loaded by this import() only when
 * ENVIRONMENT_ARNS names something; such a chunk's namespace holds module.exports as `default` (unbundled, the
 * named exports are there too). Either way, the exports by name.
 */
function namedExports<T extends object>(namespace: T, probe: keyof T): T {
  if (probe in namespace) return namespace;
  const exports = (namespace as { default?: unknown }).default;
  return typeof exports === "object" && exports !== null && probe in exports
    ? (exports as T)
    : namespace;
}

function describe(reference: EnvironmentReference): string {
  return reference.source === "secretsmanager"
    ? `Secrets Manager secret ${reference.arn}`
    : `SSM parameter ${reference.arn}`;
}

/** An SDK error by its name and message (AWS error messages name resources and principals, never values). */
function errorText(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const { name, message } = error as { name?: unknown; message?: unknown };
    if (typeof name === "string" && typeof message === "string") return `${name}: ${message}`;
  }
  return String(error);
}
