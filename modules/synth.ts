import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { App, TerraformStack } from "./cdktf";
import { ExampleStack } from "./example-stack";
import { ModuleStack } from "./module-stack";
import { renderReadme, type ModuleDocument } from "./readme";
import { renderScannerFiles } from "./scanner-config";

/** Where the committed HCL module lives. */
export const MODULE_DIR = join(__dirname, "memory-table");
export const MODULE_STACK = "memory-table-module";
export const EXAMPLE_STACK = "memory-table-example";

export function buildApp(outdir?: string): {
  app: App;
  moduleStack: ModuleStack;
  exampleStack: ExampleStack;
} {
  const app = new App(outdir === undefined ? {} : { outdir });
  const moduleStack = new ModuleStack(app, MODULE_STACK);
  const exampleStack = new ExampleStack(app, EXAMPLE_STACK);
  return { app, moduleStack, exampleStack };
}

type Json = Record<string, unknown>;

/** Drops CDKTF's `//` metadata (construct paths, versions): the module must read like hand-written HCL JSON. */
function stripMetadata(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripMetadata);
  if (value === null || typeof value !== "object") return value;
  const result: Json = {};
  for (const [key, child] of Object.entries(value)) {
    if (key !== "//") result[key] = stripMetadata(child);
  }
  return result;
}

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/**
 * The module's files, split the terraform-aws-modules way: versions, variables, outputs, main; its README, and
 * the scanners' exception files.
 */
export function renderModuleFiles(stack: TerraformStack): Record<string, string> {
  const config = stripMetadata(stack.toTerraform()) as Json;
  const { terraform, variable, output, ...main } = config;
  const readme = renderReadme({
    terraform: terraform as ModuleDocument["terraform"],
    variables: variable as ModuleDocument["variables"],
    outputs: output as ModuleDocument["outputs"],
    resources: (main.resource ?? {}) as ModuleDocument["resources"],
    data: (main.data ?? {}) as ModuleDocument["data"],
  });
  return {
    "versions.tf.json": json({ terraform }),
    "variables.tf.json": json({ variable }),
    "outputs.tf.json": json({ output }),
    "main.tf.json": json(main),
    "README.md": readme,
    ...renderScannerFiles(),
  };
}

/** Rewrites the committed module folder (stale files of an older layout are removed). */
export function writeModuleFiles(files: Record<string, string>, dir = MODULE_DIR): void {
  mkdirSync(dir, { recursive: true });
  for (const entry of readdirSync(dir)) {
    if (entry.endsWith(".tf.json") && !(entry in files)) rmSync(join(dir, entry));
  }
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
}
