/**
 * `npm run -s api-key -- <command> --table <name> --tenant <id> [options]`: a platform team's API keys in a
 * deployed table (credentials from the AWS environment, as the AWS CLI finds them).
 *
 *   create --tenant T [--subject S] [--expires-in 90d]   prints the key once on stdout (its record on stderr)
 *   list   --tenant T                                    the tenant's keys: id, subject, created, expires, state
 *   revoke --tenant T --key-id ID                        refused from then on (warm containers: within their
 *                                                         API_KEY_CACHE_SECONDS, 60 s by default)
 *
 * Options: --endpoint URL (DynamoDB Local; default DYNAMODB_ENDPOINT), --json (machine-readable output).
 * Only the key's SHA-256 is stored: a lost key cannot be shown again, create another and revoke the lost one.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { createApiKey, listTenantApiKeys, revokeTenantApiKey } from "../src/runtime/auth/api-keys";
import { connectTable } from "../src/table/client";

const COMMANDS = ["create", "list", "revoke"] as const;
const UNITS: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000 };
const OPTIONS_OF: Record<(typeof COMMANDS)[number], string[]> = {
  create: ["table", "tenant", "subject", "expires-in", "endpoint"],
  list: ["table", "tenant", "endpoint"],
  revoke: ["table", "tenant", "key-id", "endpoint"],
};

/** `90d`, `12h`, `30m` to milliseconds. */
export function parseLifetime(value: string): number {
  const match = /^(\d{1,6})([dhm])$/.exec(value);
  if (!match || Number(match[1]) === 0) {
    throw new Error(
      `Invalid --expires-in: expected a positive number of days, hours or minutes (90d, 12h, 30m), got ${JSON.stringify(value)}`,
    );
  }
  return Number(match[1]) * UNITS[match[2]!]!;
}

export function parseArgs(argv: string[]): {
  command: (typeof COMMANDS)[number];
  options: Record<string, string>;
  json: boolean;
} {
  const [command, ...rest] = argv;
  if (!COMMANDS.includes(command as (typeof COMMANDS)[number])) {
    throw new Error(
      `Invalid command: expected one of ${COMMANDS.join(", ")}, got ${JSON.stringify(command ?? "")}`,
    );
  }
  const allowed = OPTIONS_OF[command as (typeof COMMANDS)[number]];
  const options: Record<string, string> = {};
  let json = false;
  for (let index = 0; index < rest.length; index++) {
    const arg = rest[index]!;
    if (arg === "--json") {
      json = true;
      continue;
    }
    const name = arg.startsWith("--") ? arg.slice(2) : undefined;
    if (name === undefined || !allowed.includes(name)) {
      throw new Error(
        `Invalid option for ${command}: expected ${allowed.map((o) => `--${o}`).join(", ")} or --json, got ${JSON.stringify(arg)}`,
      );
    }
    const value = rest[++index];
    if (value === undefined || value.startsWith("--")) {
      throw new Error(`Invalid --${name}: expected a value, got nothing`);
    }
    options[name] = value;
  }
  for (const required of ["table", "tenant", ...(command === "revoke" ? ["key-id"] : [])]) {
    if (!options[required]) throw new Error(`Invalid --${required}: expected a value, got nothing`);
  }
  return { command: command as (typeof COMMANDS)[number], options, json };
}

function iso(ms: number | undefined): string {
  return ms === undefined ? "-" : new Date(ms).toISOString();
}

async function main(): Promise<void> {
  const { command, options, json } = parseArgs(process.argv.slice(2));
  // Checked before any request: a bad lifetime never reaches the table.
  const lifetime = command === "create" ? parseLifetime(options["expires-in"] ?? "90d") : undefined;
  const endpoint = options.endpoint ?? process.env.DYNAMODB_ENDPOINT;
  const table = connectTable(new DynamoDBClient(endpoint ? { endpoint } : {}), options.table!);
  const tenantId = options.tenant!;
  if (command === "create") {
    const created = await createApiKey(table, {
      tenantId,
      subject: options.subject,
      expiresInMs: lifetime!,
    });
    const { key, ...record } = created;
    if (json) {
      process.stdout.write(`${JSON.stringify(created)}\n`);
    } else {
      process.stderr.write(
        `Created key ${record.keyId} for tenant ${record.tenantId} (subject ${record.subject}), expires ${iso(record.expiresAt)}.\n` +
          "It is shown once and stored only as a hash: keep it in a secret store now.\n",
      );
      process.stdout.write(`${key}\n`);
    }
    return;
  }
  if (command === "list") {
    const keys = await listTenantApiKeys(table, tenantId);
    const now = Date.now();
    const state = (k: (typeof keys)[number]) =>
      k.revokedAt !== undefined ? "revoked" : k.expiresAt <= now ? "expired" : "active";
    if (json) {
      process.stdout.write(`${JSON.stringify(keys.map((k) => ({ ...k, state: state(k) })))}\n`);
      return;
    }
    process.stdout.write("key_id\tsubject\tcreated\texpires\tstate\n");
    for (const k of keys) {
      process.stdout.write(
        `${k.keyId}\t${k.subject}\t${iso(k.createdAt)}\t${iso(k.expiresAt)}\t${state(k)}\n`,
      );
    }
    return;
  }
  const revoked = await revokeTenantApiKey(table, tenantId, options["key-id"]!);
  if (!revoked) {
    throw new Error(`No key ${options["key-id"]} for tenant ${tenantId}: nothing was revoked`);
  }
  process.stdout.write(
    json
      ? `${JSON.stringify({ keyId: options["key-id"], revoked: true })}\n`
      : `Revoked ${options["key-id"]}\n`,
  );
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error((error as Error).message);
    process.exit(1);
  });
}
