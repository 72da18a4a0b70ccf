import { existsSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * The git-ignored `.dev/` folder at the repository root: the dev signing key and DynamoDB Local's data. Found
 * from this module's location upwards, so it is the same whether the TypeScript source or the compiled dev
 * server (dist/dev/) runs.
 */
export function devDirectory(): string {
  let directory = __dirname;
  while (!existsSync(join(directory, "package.json"))) {
    const parent = dirname(directory);
    if (parent === directory) throw new Error(`no package.json above ${__dirname}`);
    directory = parent;
  }
  return join(directory, ".dev");
}
