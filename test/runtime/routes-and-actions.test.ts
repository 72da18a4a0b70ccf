import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { DYNAMODB_ITEM_ACTIONS } from "../../src/checkpoint/dynamodb/iam-actions";
import { ROUTE_HANDLERS } from "../../src/runtime/handler";
import { ROUTES } from "../../src/runtime/routes";

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

describe("the runtime's contracts with the infrastructure", () => {
  it("serves exactly the routes the Terraform module creates (ROUTES)", () => {
    expect(Object.keys(ROUTE_HANDLERS).sort()).toEqual(
      ROUTES.map((route) => `${route.method} ${route.path}`).sort(),
    );
  });

  it("sends only the DynamoDB actions the IAM policy grants", () => {
    // Document-client commands map to their item actions (Get -> GetItem, BatchWrite -> BatchWriteItem, ...).
    const toAction = (command: string) => {
      const base = command.replace(/Command$/, "");
      const action = /Item$/.test(base) || base === "Query" ? base : `${base}Item`;
      return `dynamodb:${action}`;
    };
    const used = new Set<string>();
    for (const file of sourceFiles(join(__dirname, "../../src/runtime"))) {
      const source = readFileSync(file, "utf8");
      for (const match of source.matchAll(/new (\w+Command)\(/g)) used.add(toAction(match[1]!));
    }
    expect(used.size).toBeGreaterThan(0);
    for (const action of used) expect(DYNAMODB_ITEM_ACTIONS).toContain(action);
  });
});
