import { buildApp, renderModuleFiles, writeModuleFiles } from "./modules/synth";

/**
 * The CDKTF app: `npm run synth` (or `cdktf synth`) writes both stacks to cdktf.out and regenerates the committed
 * HCL module in modules/memory-table from the module stack.
 */
async function main(): Promise<void> {
  const { app, moduleStack } = buildApp();
  app.synth();
  writeModuleFiles(await renderModuleFiles(moduleStack));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
