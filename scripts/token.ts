/**
 * `npm run -s token -- --tenant <id> [--subject <user>] [--expires 12h]`: prints a dev token (only the token) that
 * the running dev server accepts, signed with the key in `.dev/`. `--subject` sets its `sub` (default
 * `dev-user@<tenant>`): the user LangGraph auth handlers see (two subjects: two users of one tenant).
 */
import { loadDevKeys, signDevToken } from "../src/dev/auth";

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (name: string): string | undefined => {
    const index = args.indexOf(`--${name}`);
    return index === -1 ? undefined : args[index + 1];
  };
  const tenantId = option("tenant");
  if (!tenantId) throw new Error("Invalid --tenant: expected a tenant id, got nothing");
  const subject = option("subject");
  if (subject === "") throw new Error("Invalid --subject: expected a user id, got nothing");
  const token = await signDevToken(await loadDevKeys(), {
    tenantId,
    ...(subject !== undefined ? { subject } : {}),
    expiresIn: option("expires") ?? "12h",
  });
  process.stdout.write(`${token}\n`);
}

main().catch((error: unknown) => {
  console.error((error as Error).message);
  process.exit(1);
});
