import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { localEndpoint } from "../support/dynamodb";

// The README's library examples run as written (against DynamoDB Local), so the docs cannot rot.
const root = resolve(__dirname, "../..");

function readmeExample(name: string): string {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const marker = `<!-- readme-example: ${name} -->`;
  const start = readme.indexOf(marker);
  if (start === -1) throw new Error(`README has no example ${name}`);
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(start));
  if (!block?.[1]) throw new Error(`README example ${name} has no ts block`);
  return block[1];
}

/** The source file behind a package entry point, as package.json's `exports` maps it. */
function sourceOf(subpath: string | undefined): string {
  const exports = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).exports as Record<
    string,
    { default: string }
  >;
  const target = exports[`.${subpath ?? ""}`]?.default;
  if (!target) throw new Error(`package.json exports no memory-table${subpath ?? ""}`);
  return join(root, target.replace(/^\.\/dist\//, "").replace(/\.js$/, ".ts"));
}

describe("README examples (integration)", () => {
  it("runs the DynamoDB saver example: pause with one saver, resume with another", async () => {
    const directory = mkdtempSync(join(root, ".readme-example-"));
    try {
      const file = join(directory, "example.mts");
      const source = readmeExample("dynamodb-saver").replace(
        /from "memory-table(\/[a-z]+)?"/g,
        (_, subpath: string | undefined) => `from ${JSON.stringify(sourceOf(subpath))}`,
      );
      writeFileSync(file, source);
      const { stdout } = await promisify(execFile)(join(root, "node_modules/.bin/tsx"), [file], {
        cwd: root,
        env: {
          ...process.env,
          DYNAMODB_ENDPOINT: localEndpoint(),
          TABLE_NAME: `readme-${randomUUID()}`,
          AWS_REGION: "us-east-1",
          AWS_ACCESS_KEY_ID: "local",
          AWS_SECRET_ACCESS_KEY: "local",
        },
        timeout: 60_000,
      });
      expect(stdout).toContain("Override the customer's slot to this time?");
      expect(stdout.trim().split("\n").at(-1)).toBe("true");
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
